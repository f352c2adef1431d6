"""Test only: a hello server that stalls on purpose, for the open-loop method's test.

One handler thread answers every SayHello with an empty HelloReply (grpcio's generic
handler, no generated code). Call number --stall-after sleeps --stall-s first, and with
one thread every call behind it waits too: an open-loop load generator must show that
wait in the latency of every call it scheduled during the stall. Prints `READY <port>`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from concurrent import futures

import grpc

SERVICE = "helloworld.Greeter"


def handler(stall_after: int, stall_s: float) -> grpc.GenericRpcHandler:
    calls = itertools.count(1)

    def say_hello(request: bytes, context: grpc.ServicerContext) -> bytes:
        if next(calls) == stall_after:
            time.sleep(stall_s)
        return b""  # an empty HelloReply

    method = grpc.unary_unary_rpc_method_handler(
        say_hello, request_deserializer=None, response_serializer=None
    )
    return grpc.method_handlers_generic_handler(SERVICE, {"SayHello": method})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stall-after", type=int, required=True, help="the call that stalls")
    parser.add_argument("--stall-s", type=float, required=True, help="how long it stalls")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    server.add_generic_rpc_handlers((handler(args.stall_after, args.stall_s),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"READY {port}", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    server.stop(0)


if __name__ == "__main__":
    main()
