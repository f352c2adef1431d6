"""throughput study (seed 002): grpcio's server streaming a payload allocated before it serves.

--api sync: grpcio's thread-pool server; aio: grpc.aio on asyncio. Both in the documented
streaming shape, a (async) generator of responses. Each message is a slice of the payload
(protobuf bytes fields take bytes, so a slice is one copy of a chunk, as in the seed's server).
"""

import argparse
import asyncio
import hashlib
import mmap
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from concurrent import futures
from pathlib import Path
from types import FrameType
from typing import Any

import data_pb2
import data_pb2_grpc
import grpc

# A random block repeated: os.urandom over gigabytes would take longer than the cell, and
# nothing on the path (no compression) can tell the difference.
BLOCK_BYTES = 1 << 20
GRACE_S = 0.5  # in-flight streams are cancelled, not awaited: one may carry gigabytes


def make_payload(size: int) -> mmap.mmap | bytearray:
    """One allocation of `size` bytes, filled in place (no second copy of the payload).

    The same anonymous private memory a bytearray of this size gets from malloc, with its
    pages faulted in by the kernel at once (MAP_POPULATE) rather than one trap per page as
    the fill first touches it: a 2 GiB fill took 0.9 s instead of 1.4-1.7 s on the
    reference machine, a 10 GiB one several seconds less before READY back to back (on a
    VM that hands idle memory back to its host, its faults after a pause outweigh that).
    The stream reads the same pages either way.
    """
    if size == 0:
        return bytearray()
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    payload = mmap.mmap(-1, size, flags=flags)
    view = memoryview(payload)
    block = os.urandom(min(size, BLOCK_BYTES))
    for offset in range(0, size, len(block)):
        end = min(offset + len(block), size)
        view[offset:end] = block[: end - offset]
    return payload


class DataService(data_pb2_grpc.DataServiceServicer):
    def __init__(self, payload: mmap.mmap | bytearray, chunk: int) -> None:
        self.view = memoryview(payload)
        self.chunk = chunk

    def GiveMeData(
        self, request: data_pb2.DataRequest, context: grpc.ServicerContext
    ) -> Iterator[data_pb2.DataResponse]:
        end = len(self.view)
        if 0 < request.limit_bytes < end:
            end = request.limit_bytes
        for offset in range(0, end, self.chunk):
            yield data_pb2.DataResponse(
                data=bytes(self.view[offset : min(offset + self.chunk, end)])
            )


class AioDataService(data_pb2_grpc.DataServiceServicer):
    def __init__(self, payload: mmap.mmap | bytearray, chunk: int) -> None:
        self.view = memoryview(payload)
        self.chunk = chunk

    async def GiveMeData(
        self, request: data_pb2.DataRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[data_pb2.DataResponse]:
        end = len(self.view)
        if 0 < request.limit_bytes < end:
            end = request.limit_bytes
        for offset in range(0, end, self.chunk):
            yield data_pb2.DataResponse(
                data=bytes(self.view[offset : min(offset + self.chunk, end)])
            )


def server_credentials(security: str, tls_dir: Path) -> grpc.ServerCredentials:
    """TLS presents server.pem; mTLS also requires a client certificate signed by ca.pem."""
    key_pair = ((tls_dir / "server.key").read_bytes(), (tls_dir / "server.pem").read_bytes())
    if security == "tls":
        return grpc.ssl_server_credentials([key_pair])
    return grpc.ssl_server_credentials(
        [key_pair], root_certificates=(tls_dir / "ca.pem").read_bytes(), require_client_auth=True
    )


class KeepNonEmpty(argparse.Action):
    """Stores the value unless it is empty, so a later empty option keeps the earlier one."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if str(values) not in ("", "."):
            setattr(namespace, self.dest, values)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--size", type=int, required=True, help="payload bytes")
    parser.add_argument("--chunk_bytes", type=int, required=True, help="bytes per message")
    parser.add_argument("--security", choices=["none", "tls", "mtls"], default="none")
    # The command passes {home}/tls; an empty --tls_dir from the matrix keeps it.
    parser.add_argument("--tls_dir", type=Path, action=KeepNonEmpty, default=Path())
    parser.add_argument("--api", choices=["sync", "aio"], default="sync")
    parser.add_argument("--workers", type=int, default=2, help="thread pool size (sync)")
    parser.add_argument("--checksum", type=int, default=0, help="1: print the payload's SHA256")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    try:
        credentials = (
            None if args.security == "none" else server_credentials(args.security, args.tls_dir)
        )
    except OSError as exc:
        sys.exit(f"cannot set up {args.security}: {exc}")
    payload = make_payload(args.size)
    if args.checksum:
        print("SHA256", hashlib.sha256(payload).hexdigest(), flush=True)
    if args.api == "aio":
        asyncio.run(serve_aio(args, payload, credentials))
        return
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=args.workers),
        options=[("grpc.so_reuseport", 0)],
    )
    data_pb2_grpc.add_DataServiceServicer_to_server(DataService(payload, args.chunk_bytes), server)
    address = f"{args.host}:{args.port}"
    if credentials is None:
        server.add_insecure_port(address)
    else:
        server.add_secure_port(address, credentials)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        server.stop(GRACE_S)

    signal.signal(signal.SIGTERM, on_sigterm)
    server.start()
    print("READY", flush=True)
    server.wait_for_termination()


async def serve_aio(
    args: argparse.Namespace,
    payload: mmap.mmap | bytearray,
    credentials: grpc.ServerCredentials | None,
) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    data_pb2_grpc.add_DataServiceServicer_to_server(
        AioDataService(payload, args.chunk_bytes), server
    )
    address = f"{args.host}:{args.port}"
    if credentials is None:
        server.add_insecure_port(address)
    else:
        server.add_secure_port(address, credentials)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("READY", flush=True)
    await stop.wait()
    await server.stop(GRACE_S)


if __name__ == "__main__":
    main()
