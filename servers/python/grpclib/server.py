"""hello study: grpclib server with betterproto 2.0.0b7 messages, on asyncio or uvloop."""

import argparse
import asyncio

from bp1.helloworld import GreeterBase, HelloReply, HelloRequest
from grpclib.server import Server
from grpclib.utils import graceful_exit


class Greeter(GreeterBase):
    async def say_hello(self, hello_request: HelloRequest) -> HelloReply:
        return HelloReply(message="Hello " + hello_request.name)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio")
    return parser.parse_args()


async def serve(host: str, port: int) -> None:
    server = Server([Greeter()])
    # graceful_exit turns the first SIGTERM into server.close(), so wait_closed() returns
    # and the process exits 0.
    with graceful_exit([server]):
        await server.start(host, port)
        print("READY", flush=True)
        await server.wait_closed()


def main() -> None:
    args = parse_args()
    if args.loop == "uvloop":
        # Imported only here so the asyncio variant never loads uvloop.
        import uvloop

        uvloop.run(serve(args.host, args.port))
    else:
        asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
