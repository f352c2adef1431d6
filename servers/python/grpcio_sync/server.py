"""hello study: grpcio's synchronous server, one ThreadPoolExecutor of --workers threads."""

import argparse
import signal
from concurrent import futures
from types import FrameType

import grpc
import hello_pb2
import hello_pb2_grpc

# Long enough for in-flight calls to finish, short enough for the runner's stop timeout.
GRACE_S = 2.0


class Greeter(hello_pb2_grpc.GreeterServicer):
    def SayHello(
        self, request: hello_pb2.HelloRequest, context: grpc.ServicerContext
    ) -> hello_pb2.HelloReply:
        return hello_pb2.HelloReply(message="Hello " + request.name)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=10, help="thread pool size")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=args.workers),
        # Without SO_REUSEPORT a leftover server on the same port makes bind fail loudly
        # instead of silently sharing the load with this one.
        options=[("grpc.so_reuseport", 0)],
    )
    hello_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port(f"{args.host}:{args.port}")

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        server.stop(GRACE_S)

    signal.signal(signal.SIGTERM, on_sigterm)
    server.start()
    print("READY", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
