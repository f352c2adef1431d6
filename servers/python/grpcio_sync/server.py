"""hello study: grpcio's synchronous server, one ThreadPoolExecutor of --workers threads.

It also runs on seed 000's grpcio 1.28.1 (python/grpcio_sync_seed000, Python 3.8): no
syntax or API newer than both.
"""

from __future__ import annotations

import argparse
import signal
import sys
from concurrent import futures
from types import FrameType

# A server on another library stack (impl.toml *_seed000) names that stack's generated code
# with --gen-path; it goes first on sys.path, before PYTHONPATH's, which an older protobuf
# cannot import. Taken out of argv before the parser sees it.
if "--gen-path" in sys.argv:
    _at = sys.argv.index("--gen-path")
    sys.path.insert(0, sys.argv[_at + 1])
    del sys.argv[_at : _at + 2]

import grpc  # noqa: E402
import hello_pb2  # noqa: E402
import hello_pb2_grpc  # noqa: E402

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
    # Which grpcio serves is on record in the server's log (two stacks run this file).
    print(f"grpcio {grpc.__version__}", flush=True)
    print("READY", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
