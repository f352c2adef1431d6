"""pyclients study: what every Python client shares: arguments, answer checks, timing, output.

Standard library only, so that it adds the same small cost to every client and no
client's memory figure carries another library's imports. A client supplies a session
(open a channel, make the scenario's call and check every value, close); this module
times it by one of two methods and writes client.json:

- seed:   the seed's `python -m timeit "asyncio.run(client.call())"`: every timed loop runs
          a fresh event loop, opens a channel, makes one call, closes it; best of R repeats
          of N loops. It mostly measures event-loop and channel set-up, as the seed did.
- steady: one event loop and one channel; warm-up calls (discarded), then back-to-back
          calls, each timed, so the per-call latency distribution and calls/s are known.

Every call checks what it received (the reply text; the numbers 1..count in order and
their count); a wrong answer raises WrongAnswer and the client exits with code 3.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

# Numbers per call of each scenario; 0 is the unary request-reply.
SCENARIOS = {"request_reply": 0, "stream_10": 10, "stream_100000": 100_000}
METHODS = ("seed", "steady")
NAME = "perflab"
EXPECTED_REPLY = "Hello, " + NAME
WRONG_ANSWER_EXIT = 3


# Libraries whose versions decide a client's figures, as imported (module: report key). Read
# from sys.modules at the end, so recording them imports nothing and costs no memory.
LIBRARIES = {
    "grpc": "grpcio",
    "google.protobuf": "protobuf",
    "grpclib": "grpclib",
    "betterproto": "betterproto",
    "betterproto2": "betterproto2",
}


def take_gen_path() -> None:
    """--gen-path DIR (from impl.toml's command) goes first on sys.path, not to the parser:
    a client of another stack imports that stack's generated code, not PYTHONPATH's."""
    if "--gen-path" in sys.argv:
        at = sys.argv.index("--gen-path")
        sys.path.insert(0, sys.argv[at + 1])
        del sys.argv[at : at + 2]


def imported_versions() -> dict[str, str]:
    """The versions of the libraries this process actually imported."""
    found = {}
    for module, name in LIBRARIES.items():
        loaded = sys.modules.get(module)
        if loaded is not None:
            found[name] = str(getattr(loaded, "__version__", "unknown"))
    return found


class WrongAnswer(Exception):
    """The server's answer is not the one the scenario defines."""


def check_reply(message: str) -> None:
    if message != EXPECTED_REPLY:
        raise WrongAnswer(f"reply {message!r}, expected {EXPECTED_REPLY!r}")


def wrong_number(position: int, number: int) -> WrongAnswer:
    return WrongAnswer(f"stream message {position} carried {number}, expected {position}")


def check_count(received: int, count: int) -> None:
    if received != count:
        raise WrongAnswer(f"stream ended after {received} numbers, expected {count}")


def split_target(target: str) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    return host.strip("[]"), int(port)


def parse_args(description: str, loops: tuple[str, ...]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--target", required=True, help="host:port of the numbers server")
    parser.add_argument("--out", required=True, help="where to write client.json")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--method", choices=METHODS, required=True)
    parser.add_argument("--loop", choices=loops, default=loops[0], help="event loop")
    counts = {
        "seed-loops": (100, "seed: calls per timed repeat"),
        "seed-repeats": (5, "seed: best of this many repeats"),
        "steady-calls": (1000, "steady: timed calls"),
        "warmup-calls": (100, "calls made first and discarded"),
    }
    for flag, (default, text) in counts.items():
        # impl.toml options arrive as --seed_loops; people type --seed-loops.
        parser.add_argument(
            f"--{flag}", f"--{flag.replace('-', '_')}", type=int, default=default, help=text
        )
    args = parser.parse_args()
    for key in ("seed_loops", "seed_repeats", "steady_calls"):
        if getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be at least 1")
    if args.warmup_calls < 0:
        parser.error("--warmup-calls must not be negative")
    return args


class SyncSession(Protocol):
    def call(self) -> None: ...
    def close(self) -> None: ...


class AsyncSession(Protocol):
    async def call(self) -> None: ...
    async def close(self) -> None: ...


def percentile(ordered: list[int], fraction: float) -> int:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def seed_result(
    timed_loops: Callable[[int], float], loops: int, repeats: int, warmup: int
) -> dict[str, Any]:
    """timeit's shape: warm-up loops, then `repeats` timings of `loops` loops; best wins."""
    if warmup:
        timed_loops(warmup)
    cpu0 = time.process_time()
    totals = [timed_loops(loops) for _ in range(repeats)]
    cpu = time.process_time() - cpu0
    best = min(totals) / loops
    return {
        "metrics": {
            "time_per_call": (best * 1e3, "ms"),
            "time_per_call_mean": (sum(totals) / len(totals) / loops * 1e3, "ms"),
            "calls_per_s": (1 / best, "calls/s"),
            "measured_cpu_us_per_call": (cpu * 1e6 / (loops * repeats), "us"),
            "calls": (warmup + loops * repeats, "calls"),
        },
        "raw": {"loops": loops, "repeats": repeats, "repeat_seconds": totals, "warmup": warmup},
    }


def steady_result(
    latencies_ns: list[int], elapsed_s: float, cpu_s: float, first_ns: int, warmup: int
) -> dict[str, Any]:
    calls = len(latencies_ns)
    ordered = sorted(latencies_ns)
    return {
        "metrics": {
            "time_per_call": (elapsed_s / calls * 1e3, "ms"),
            "calls_per_s": (calls / elapsed_s, "calls/s"),
            "latency_p50": (percentile(ordered, 0.50) / 1e6, "ms"),
            "latency_p90": (percentile(ordered, 0.90) / 1e6, "ms"),
            "latency_p99": (percentile(ordered, 0.99) / 1e6, "ms"),
            "latency_max": (ordered[-1] / 1e6, "ms"),
            "first_call": (first_ns / 1e6, "ms"),
            "measured_cpu_us_per_call": (cpu_s * 1e6 / calls, "us"),
            "calls": (warmup + 1 + calls, "calls"),
        },
        # Every timed call, in order, in whole microseconds: compact and enough to re-plot.
        "raw": {"warmup": warmup, "latencies_us": [round(ns / 1e3) for ns in latencies_ns]},
    }


def run_sync(args: argparse.Namespace, open_session: Callable[[str, int], SyncSession]) -> None:
    count = SCENARIOS[args.scenario]
    if args.method == "seed":

        def timed_loops(loops: int) -> float:
            start = time.perf_counter()
            for _ in range(loops):
                session = open_session(args.target, count)
                try:
                    session.call()
                finally:
                    session.close()
            return time.perf_counter() - start

        result = seed_result(timed_loops, args.seed_loops, args.seed_repeats, args.warmup_calls)
    else:
        session = open_session(args.target, count)
        try:
            start = time.perf_counter_ns()
            session.call()  # the first call on a new channel: it connects
            first = time.perf_counter_ns() - start
            for _ in range(args.warmup_calls):
                session.call()
            latencies = []
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(args.steady_calls):
                start = time.perf_counter_ns()
                session.call()
                latencies.append(time.perf_counter_ns() - start)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        finally:
            session.close()
        result = steady_result(latencies, wall, cpu, first, args.warmup_calls)
    write(args, count, result)


def loop_runner(loop: str) -> Callable[[Awaitable[Any]], Any]:
    if loop == "uvloop":
        # Imported only here, so the asyncio variant never loads uvloop.
        import uvloop

        return uvloop.run
    return asyncio.run


def run_async(args: argparse.Namespace, open_session: Callable[[str, int], AsyncSession]) -> None:
    """open_session is called inside the running event loop."""
    count = SCENARIOS[args.scenario]
    run = loop_runner(args.loop)
    if args.method == "seed":

        async def one_shot() -> None:
            session = open_session(args.target, count)
            try:
                await session.call()
            finally:
                await session.close()

        def timed_loops(loops: int) -> float:
            start = time.perf_counter()
            for _ in range(loops):
                run(one_shot())  # a fresh event loop per loop, as the seed's timeit statement
            return time.perf_counter() - start

        result = seed_result(timed_loops, args.seed_loops, args.seed_repeats, args.warmup_calls)
    else:

        async def steady() -> dict[str, Any]:
            session = open_session(args.target, count)
            try:
                start = time.perf_counter_ns()
                await session.call()
                first = time.perf_counter_ns() - start
                for _ in range(args.warmup_calls):
                    await session.call()
                latencies = []
                cpu0, wall0 = time.process_time(), time.perf_counter()
                for _ in range(args.steady_calls):
                    start = time.perf_counter_ns()
                    await session.call()
                    latencies.append(time.perf_counter_ns() - start)
                wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            finally:
                await session.close()
            return steady_result(latencies, wall, cpu, first, args.warmup_calls)

        result = run(steady())
    write(args, count, result)


def write(args: argparse.Namespace, count: int, result: dict[str, Any]) -> None:
    metrics = result["metrics"]
    if count:
        calls_per_s = metrics["calls_per_s"][0]
        metrics["numbers_per_s"] = (calls_per_s * count, "numbers/s")
    report = {
        "metrics": [
            {"metric": name, "value": value, "unit": unit}
            for name, (value, unit) in metrics.items()
        ],
        "scenario": args.scenario,
        "method": args.method,
        "loop": args.loop,
        "numbers_per_call": count,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "libraries": imported_versions(),
        **result["raw"],
    }
    Path(args.out).write_text(json.dumps(report, separators=(",", ":")))


def main(run: Callable[[], None]) -> None:
    """Runs a client's main; a wrong answer is a clear message and exit code 3."""
    try:
        run()
    except WrongAnswer as exc:
        print(f"wrong answer from the server: {exc}", file=sys.stderr)
        sys.exit(WRONG_ANSWER_EXIT)
