"""orders study (seed 003): grpcio's synchronous server with a thread pool of --workers.

Each order is answered with result=True and a responseTime stamped when the server
handles it: the only work on the server is the timestamp, as in the seed. With
--security tls the port serves TLS with the certificate in --tls_dir.
"""

import argparse
import signal
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from types import FrameType

import grpc
import order_pb2
import order_pb2_grpc

# Long enough for in-flight calls to finish, short enough for the runner's stop timeout.
GRACE_S = 2.0


def stamped_reply() -> order_pb2.OrderReply:
    reply = order_pb2.OrderReply(result=True)
    # The wall clock, not a monotonic one: the client compares it with its own wall clock.
    reply.responseTime.FromNanoseconds(time.time_ns())
    return reply


class OrderService(order_pb2_grpc.OrderServiceServicer):
    def AddOrder(
        self, request: order_pb2.Order, context: grpc.ServicerContext
    ) -> order_pb2.OrderReply:
        return stamped_reply()

    def AddOrderStream(
        self, request_iterator: Iterator[order_pb2.Order], context: grpc.ServicerContext
    ) -> Iterator[order_pb2.OrderReply]:
        for _order in request_iterator:
            yield stamped_reply()


def last_non_empty(values: list[str] | None) -> str:
    """--tls_dir may be given twice (the command's default, then the matrix's); the last wins,
    and an empty value means "keep the default"."""
    chosen = [v for v in (values or []) if v]
    return chosen[-1] if chosen else ""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=10, help="thread pool size (seed: 10)")
    parser.add_argument("--security", choices=["plaintext", "tls"], default="plaintext")
    parser.add_argument(
        "--tls_dir", action="append", help="folder with server.pem and server.key (for tls)"
    )
    return parser.parse_args()


def server_credentials(tls_dir: str) -> grpc.ServerCredentials:
    folder = Path(tls_dir)
    key = (folder / "server.key").read_bytes()
    chain = (folder / "server.pem").read_bytes()
    return grpc.ssl_server_credentials([(key, chain)])


def main() -> None:
    args = parse_args()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=args.workers),
        # Without SO_REUSEPORT a leftover server on the same port makes bind fail loudly
        # instead of silently sharing the load with this one.
        options=[("grpc.so_reuseport", 0)],
    )
    order_pb2_grpc.add_OrderServiceServicer_to_server(OrderService(), server)
    address = f"{args.host}:{args.port}"
    if args.security == "tls":
        server.add_secure_port(address, server_credentials(last_non_empty(args.tls_dir)))
    else:
        server.add_insecure_port(address)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        server.stop(GRACE_S)

    signal.signal(signal.SIGTERM, on_sigterm)
    server.start()
    print("READY", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
