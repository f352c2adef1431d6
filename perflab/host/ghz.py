"""ghz command lines. Parsing its JSON lives in perflab.contract.parsers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from perflab.contract.cell import LoadSpec


def ghz_binary(bin_dir: Path, version: str) -> Path:
    """Roles install every pinned ghz as bin/ghz-<version> so a run can calibrate between them."""
    return bin_dir / f"ghz-{version}"


def ghz_argv(
    binary: Path,
    load: LoadSpec,
    proto_dir: Path,
    target: str,
    cpus: int,
    out: Path,
    warmup: bool = False,
) -> list[str]:
    concurrency = load.concurrency
    if warmup and load.warmup_concurrency:
        concurrency = min(concurrency, load.warmup_concurrency)
    argv = [
        str(binary),
        "--insecure",
        f"--proto={proto_dir / load.proto}",
        f"--import-paths={proto_dir}",
        f"--call={load.call}",
        f"--data={json.dumps(load.data)}",
        f"--concurrency={concurrency}",
        # HTTP/2 connections the concurrency is spread over: a recorded matrix parameter.
        f"--connections={min(load.connections, concurrency)}",
        f"--cpus={cpus}",
        "--format=json",
        f"--output={out}",
    ]
    total, duration = (
        (load.warmup_total, load.warmup_s) if warmup else (load.total, load.duration_s)
    )
    if total:
        argv.append(f"--total={total}")
    elif duration:
        # "wait" lets calls in flight at the deadline finish and be counted, instead of
        # reporting them as errors the server never caused.
        argv += [f"--duration={duration}s", "--duration-stop=wait"]
    else:
        raise ValueError("a ghz load needs total or duration_s (warm-up: warmup_total or warmup_s)")
    if load.rps:
        # Open loop: a call is sent every 1/rps s, each on its own goroutine (--async), so
        # none waits for an earlier answer; closed-loop cells keep the argv they always had.
        argv += [f"--rps={load.rps}", "--async"]
    argv.append(target)
    return argv


def warmup_summary(report: dict[str, Any], load: LoadSpec) -> dict[str, Any]:
    """What the discarded warm-up asked for and what it did, from its ghz report.

    A warm-up waits for the calls in flight at its end ("wait"), so the window opens on a
    server with nothing left to do; `seconds` against `configured_s` shows that drain
    (far S3, 50 calls queued at 3 a second: 15 s for 1 s asked). Its failed calls are
    counted by status code: discarded with the warm-up, never unsaid.
    """
    codes = {code: int(n) for code, n in (report.get("statusCodeDistribution") or {}).items()}
    return {
        "configured_s": load.warmup_s or 0.0,
        "configured_calls": load.warmup_total or 0,
        "concurrency": min(load.concurrency, load.warmup_concurrency or load.concurrency),
        "seconds": round(report["total"] / 1e9, 3),
        "calls": int(report["count"]),
        "ok": codes.get("OK", 0),
        "not_ok_by_code": {code: n for code, n in sorted(codes.items()) if code != "OK"},
    }


def warmup_note(summary: dict[str, Any]) -> str:
    """The cell's note on a warm-up with failed calls; '' when every call was answered."""
    failed = sum(summary["not_ok_by_code"].values())
    if not failed:
        return ""
    codes = ", ".join(f"{n} {code}" for code, n in summary["not_ok_by_code"].items())
    return (
        f"warm-up: {failed} of {summary['calls']} calls failed ({codes}); discarded with "
        "the warm-up, as its answered calls are"
    )


# An open-loop cell whose sent rate is this far below its offered rate did not run the
# schedule it was asked for.
SCHEDULE_TOLERANCE = 0.01


def open_loop_rate(reference_rps: float, fraction: float) -> int:
    """The offered rate, in whole calls a second (ghz --rps takes an integer), at least 1."""
    return max(1, round(reference_rps * fraction))


def schedule_shortfall(offered_rps: int, duration_s: float, measured: dict[str, float]) -> str:
    """A note when ghz itself could not hold its schedule, else ''.

    ghz counts every call it sent (`count`) over the `duration_s` it sent for. With --async
    each call goes out on its own goroutine the moment its tick comes, whatever the server
    does with earlier ones, so a sent rate below the offered one is the sender's own limit
    (its CPU), never the server's: the cell says nothing about the server at that rate. The
    note also gives what the server answered (`rps`, successful calls a second until the
    last answer), so a reader sees whether it kept up with what it was sent.
    """
    sent = measured["count"] / duration_s
    if sent >= (1 - SCHEDULE_TOLERANCE) * offered_rps:
        return ""
    return (
        f"ghz sent {sent:,.0f} calls/s of the {offered_rps:,} offered (below "
        f"{1 - SCHEDULE_TOLERANCE:.0%}; the server answered {measured['rps']:,.0f}/s): "
        "the load generator could not keep its schedule, a bound of the generator"
    )


# ghz --format=json lists every request; a 5 s cell against the C++ server is 150 000 of
# them (1.4 MB gzipped) and the committed reference run must stay under 50 MiB. Every
# figure perflab reports comes from ghz's summary fields, which ghz computed over all
# requests before this thinning, except capacity's p99.9 (ghz stops at p99), taken from
# this sample where it holds stats.samples_needed(0.999) = 10 000 calls. So an evenly
# spaced sample of exactly DETAILS_KEPT is kept, never fewer (every k-th call kept
# 10 000 / k calls and fell short), and the file says what was dropped.
DETAILS_KEPT = 10_000


def thin_report(report: dict[str, Any], keep: int = DETAILS_KEPT) -> str:
    """Keeps `keep` evenly spaced entries of ghz's per-request `details` (in time order), in
    place; returns a note, or ''."""
    details = report.get("details")
    if not isinstance(details, list) or len(details) <= keep:
        return ""
    report["details"] = [details[i * len(details) // keep] for i in range(keep)]
    report["perflabDetailsThinned"] = {"of": len(details), "kept": keep}
    return (
        f"ghz details thinned to {keep} evenly spaced of {len(details)} requests "
        "(summary fields cover all of them)"
    )


def store_thinned(path: Path, keep: int = DETAILS_KEPT) -> str:
    """ghz.json thinned and gzipped beside it as ghz.json.gz in one read, the plain file
    removed; returns thin_report's note. Part of a ghz cell's teardown: with the runner's
    own parse, a 53 000-call report took 0.132 s read, thinned, rewritten and gzipped (level
    9) in separate passes, and takes 0.106 s so. A report that needs no thinning is stored
    byte for byte."""
    raw = path.read_bytes()
    report = json.loads(raw)
    note = thin_report(report, keep) if isinstance(report, dict) else ""
    if note:
        raw = json.dumps(report).encode()
    with gzip.open(path.with_name(path.name + ".gz"), "wb", compresslevel=6) as out:
        out.write(raw)
    path.unlink()
    return note
