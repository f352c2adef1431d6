"""hello study: grpcio's asyncio server (grpc.aio) on a single event loop."""

import argparse
import asyncio
import signal

import grpc
import hello_pb2
import hello_pb2_grpc

# Long enough for in-flight calls to finish, short enough for the runner's stop timeout.
GRACE_S = 2.0


class Greeter(hello_pb2_grpc.GreeterServicer):
    async def SayHello(
        self, request: hello_pb2.HelloRequest, context: grpc.aio.ServicerContext
    ) -> hello_pb2.HelloReply:
        return hello_pb2.HelloReply(message="Hello " + request.name)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    return parser.parse_args()


async def serve(host: str, port: int) -> None:
    # Without SO_REUSEPORT a leftover server on the same port makes bind fail loudly
    # instead of silently sharing the load with this one.
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    hello_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"{host}:{port}")
    await server.start()

    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)
    print("READY", flush=True)
    await stopping.wait()
    await server.stop(GRACE_S)


def main() -> None:
    args = parse_args()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
