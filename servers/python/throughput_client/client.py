"""throughput study (seed 002): grpcio client reading one server stream to its end.

--api sync: grpcio's blocking stub; aio: grpc.aio on asyncio (the same steps, awaited).

Warm-up with a short stream on the same channel, then --calls timed calls one after another,
each for the whole payload; each message is dropped after its bytes are counted (and the first
call's hashed in test mode). client.json has the throughput over all of them (their bytes over
their seconds) and each call's seconds. A wrong byte count in any call, a failed call or the
deadline exits with code 1 and the reason on stderr.
"""

import argparse
import asyncio
import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import data_pb2
import data_pb2_grpc
import grpc


def stream(
    stub: data_pb2_grpc.DataServiceStub, limit: int, deadline: float, digest: Any = None
) -> tuple[int, int]:
    """Reads one call to its end; returns (bytes, messages)."""
    received = messages = 0
    timeout = max(deadline - time.monotonic(), 0.001)
    for response in stub.GiveMeData(data_pb2.DataRequest(limit_bytes=limit), timeout=timeout):
        received += len(response.data)
        messages += 1
        if digest is not None:
            digest.update(response.data)
    return received, messages


async def stream_aio(
    stub: data_pb2_grpc.DataServiceStub, limit: int, deadline: float, digest: Any = None
) -> tuple[int, int]:
    """stream() on a grpc.aio channel."""
    received = messages = 0
    timeout = max(deadline - time.monotonic(), 0.001)
    call = stub.GiveMeData(data_pb2.DataRequest(limit_bytes=limit), timeout=timeout)
    async for response in call:
        received += len(response.data)
        messages += 1
        if digest is not None:
            digest.update(response.data)
    return received, messages


@dataclass
class Timed:
    """The timed calls: each one's (bytes, messages, seconds), and the first one's digest."""

    calls: list[tuple[int, int, float]] = field(default_factory=list)
    digest: Any = None


def channel_credentials(security: str, tls_dir: Path) -> grpc.ChannelCredentials:
    """Trust ca.pem; under mTLS also present client.pem."""
    root = (tls_dir / "ca.pem").read_bytes()
    if security == "tls":
        return grpc.ssl_channel_credentials(root_certificates=root)
    return grpc.ssl_channel_credentials(
        root_certificates=root,
        private_key=(tls_dir / "client.key").read_bytes(),
        certificate_chain=(tls_dir / "client.pem").read_bytes(),
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
    parser.add_argument("--target", required=True, help="host:port; -: read it from stdin")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--security", choices=["none", "tls", "mtls"], default="none")
    # The command passes {home}/tls; an empty --tls_dir from the matrix keeps it.
    parser.add_argument("--tls_dir", type=Path, action=KeepNonEmpty, default=Path())
    parser.add_argument("--expect_bytes", type=int, required=True)
    parser.add_argument("--warmup_bytes", type=int, default=0)
    parser.add_argument("--max_receive_bytes", type=int, default=64 << 20)
    parser.add_argument("--timeout_s", type=float, default=600.0)
    parser.add_argument("--checksum", type=int, default=0)
    parser.add_argument("--api", choices=["sync", "aio"], default="sync")
    parser.add_argument("--calls", type=int, default=1)
    args = parser.parse_args()
    if args.calls < 1:
        parser.error(f"--calls must be at least 1, not {args.calls}")
    if args.target == "-":
        # Started beside its server (impl.toml target_on_stdin): imported while it starts.
        args.target = sys.stdin.readline().strip()
        if not args.target:
            parser.error("--target -: stdin ended before a target came")
    return args


def measure_sync(
    args: argparse.Namespace, credentials: Any, options: list[tuple[str, int]]
) -> Timed:
    """The timed calls, after the warm-up."""
    if credentials is None:
        channel = grpc.insecure_channel(args.target, options=options)
    else:
        channel = grpc.secure_channel(args.target, credentials, options=options)
    stub = data_pb2_grpc.DataServiceStub(channel)
    # One deadline over warm-up and measurement: a bad certificate ends the run, never hangs.
    deadline = time.monotonic() + args.timeout_s
    timed = Timed(digest=hashlib.sha256() if args.checksum else None)
    try:
        if args.warmup_bytes:
            stream(stub, args.warmup_bytes, deadline)
        for call in range(args.calls):
            # Only the first call is hashed: it is the payload; the rest are checked by count.
            digest = timed.digest if call == 0 else None
            start = time.perf_counter()
            received, messages = stream(stub, 0, deadline, digest)
            timed.calls.append((received, messages, time.perf_counter() - start))
        return timed
    finally:
        channel.close()


async def measure_aio(
    args: argparse.Namespace, credentials: Any, options: list[tuple[str, int]]
) -> Timed:
    """measure_sync() on a grpc.aio channel."""
    if credentials is None:
        channel = grpc.aio.insecure_channel(args.target, options=options)
    else:
        channel = grpc.aio.secure_channel(args.target, credentials, options=options)
    async with channel:
        stub = data_pb2_grpc.DataServiceStub(channel)
        deadline = time.monotonic() + args.timeout_s
        timed = Timed(digest=hashlib.sha256() if args.checksum else None)
        if args.warmup_bytes:
            await stream_aio(stub, args.warmup_bytes, deadline)
        for call in range(args.calls):
            digest = timed.digest if call == 0 else None
            start = time.perf_counter()
            received, messages = await stream_aio(stub, 0, deadline, digest)
            timed.calls.append((received, messages, time.perf_counter() - start))
        return timed


def main() -> None:
    args = parse_args()
    options = [("grpc.max_receive_message_length", args.max_receive_bytes)]
    credentials = None
    if args.security != "none":
        try:
            credentials = channel_credentials(args.security, args.tls_dir)
        except OSError as exc:
            sys.exit(f"cannot set up {args.security}: {exc}")
    try:
        if args.api == "aio":
            timed = asyncio.run(measure_aio(args, credentials, options))
        else:
            timed = measure_sync(args, credentials, options)
    except grpc.RpcError as exc:
        sys.exit(f"call failed: {exc.code().name}: {exc.details()}")
    for number, (got, _, _) in enumerate(timed.calls, 1):
        if got != args.expect_bytes:
            sys.exit(
                f"byte count mismatch in timed call {number} of {args.calls}: received {got} "
                f"bytes, expected {args.expect_bytes}"
            )
    received = sum(got for got, _, _ in timed.calls)
    messages = sum(count for _, count, _ in timed.calls)
    seconds = sum(took for _, _, took in timed.calls)
    result: dict[str, Any] = {
        "metrics": [
            {"metric": "throughput", "value": received / 2**30 / seconds, "unit": "GiB/s"},
            {"metric": "stream_seconds", "value": seconds, "unit": "s"},
            {"metric": "bytes", "value": received, "unit": "B"},
            {"metric": "messages", "value": messages, "unit": "count"},
            {"metric": "calls", "value": args.calls, "unit": "count"},
            # The warm-up stream's bytes: CPU of the whole process covers it too.
            {"metric": "warmup_bytes", "value": args.warmup_bytes, "unit": "B"},
        ],
        "calls": args.calls,
        "call_seconds": [took for _, _, took in timed.calls],
        "bytes": received,
        "messages": messages,
        "seconds": seconds,
        "security": args.security,
        "api": args.api,
        "target": args.target,
        "warmup_bytes": args.warmup_bytes,
        "max_receive_bytes": args.max_receive_bytes,
    }
    if timed.digest is not None:
        result["sha256"] = timed.digest.hexdigest()
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
