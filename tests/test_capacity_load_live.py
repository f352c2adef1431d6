"""The capacity study's load generator (servers/go/capacity_load) on real processes: a stall,
of the server or of the generator itself, shows in the latency of every call scheduled during
it with its full lateness, because each call is timed from its intended send; the same calls
timed from their actual send (what a tool that times its own sends reports) hide it. A step
whose generator fell behind is marked generator-bound; one where only the server stalled
is not blamed on the generator."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.analysis.run import read as read_folder
from perflab.contract.matrix import expand
from perflab.host.impls import HostPaths, discover
from perflab.host.net import free_port
from perflab.host.runner import CellRunner
from perflab.studies import get_study
from perflab.studies.capacity import analysis as capacity
from tests.conftest import REPO, study_vars
from tests.fixtures_live import stall_server

pytestmark = pytest.mark.live

RATE = 200  # calls/s: a low rate, far below what any hello server takes
STALL_S = 0.2
STEP_S = 3.0
LATE_S = STALL_S / 2
# A call scheduled t into a stall waits at least STALL_S - t: every call scheduled in the
# stall's first half, RATE x STALL_S / 2 of them (20), is late by more than LATE_S.
LATE_CALLS = RATE * STALL_S / 2


def generator(host_paths: HostPaths) -> Path:
    binary = host_paths.bin / "capacity_load_go"
    assert binary.is_file(), f"{binary} is missing: roles/go_build builds it (make setup)"
    return binary


def argv(binary: Path, target: str, out: Path, *extra: str) -> list[str]:
    return [
        str(binary),
        *("--target", target, "--out", str(out), "--calls_csv", str(out.with_suffix(".csv"))),
        *("--mode", "rates", "--rates", str(RATE), "--repeats", "1", "--connections", "1"),
        *("--warmup_s", "0", "--settle_s", "0", "--step_s", str(STEP_S), "--min_calls", "0"),
        *extra,
    ]


def results(out: Path) -> tuple[dict, list[dict]]:
    """The one step of the report, and its calls (ms since the step's start)."""
    (step,) = json.loads(out.read_text())["steps"]
    with out.with_suffix(".csv").open() as handle:
        calls = list(csv.DictReader(handle))
    assert len(calls) == pytest.approx(RATE * STEP_S, abs=1), "one step of RATE for STEP_S"
    assert not any(c["failed"] == "true" for c in calls), step["errors"]
    return step, calls


def late(calls: list[dict], since: str) -> list[float]:
    """Latencies (s) above LATE_S, timed from the call's intended or actual send."""
    latencies = [(float(c["end_ms"]) - float(c[f"{since}_ms"])) / 1000 for c in calls]
    return [s for s in latencies if s > LATE_S]


@pytest.fixture
def stall_target(host_paths: HostPaths) -> Iterator[str]:
    """One handler thread that stalls STALL_S on the call one second in (the generator's
    connect makes call 1)."""
    with stall_server(host_paths, RATE + 1, STALL_S) as target:
        yield target


def test_a_server_stall_shows_in_every_call_scheduled_during_it(host_paths, stall_target, tmp_path):
    # One call in flight at most, as a closed-loop tool's one worker: the calls scheduled in
    # the stall wait in the generator, where timing from the actual send would not see them.
    out = tmp_path / "server_stall.json"
    binary = generator(host_paths)
    subprocess.run(argv(binary, stall_target, out, "--max_inflight", "1"), check=True, timeout=60)
    step, calls = results(out)
    from_intended, from_send = late(calls, "intended"), late(calls, "start")
    assert len(from_intended) >= 0.9 * LATE_CALLS, from_intended
    assert max(from_intended) >= 0.9 * STALL_S
    assert step["latency_ms"]["max"] >= 0.9 * STALL_S * 1000
    # The failure mode it guards: from the actual send only the stalled call itself is late
    # (and, on a machine shared with other work, the odd call the scheduler held up).
    assert 1 <= len(from_send) < len(from_intended) / 4, from_send
    # The server stalled, not the generator: the windows that sent the late calls (queued
    # behind the stalled one) show no lag of the generator's own. (Over the whole step it may
    # have some: on a shared machine another process can take its CPU for a while.)
    late_windows = {
        int(float(c["start_ms"]) // 100)
        for c in calls
        if float(c["end_ms"]) - float(c["intended_ms"]) > LATE_S * 1000
    }
    lags = [step["windows"][i]["lag_ms"] for i in sorted(late_windows)]
    assert lags and max(lags) < LATE_S * 1000 / 2, lags


@pytest.fixture
def cpp_target(host_paths: HostPaths) -> Iterator[str]:
    port = free_port()
    command = [str(host_paths.bin / "hello_server_cpp"), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "READY", f"cpp server said {line!r}"
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def stalled_generator(binary: Path, target: str, out: Path, *extra: str) -> None:
    """Runs the one step and stops the generator's process for STALL_S half-way through."""
    proc = subprocess.Popen(argv(binary, target, out, *extra))
    try:
        time.sleep(STEP_S / 2)  # inside the step: the generator has no warm-up here
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(STALL_S)
        os.kill(proc.pid, signal.SIGCONT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_generator_stall_shows_in_every_call_scheduled_during_it_and_marks_the_step(
    host_paths, cpp_target, tmp_path
):
    out = tmp_path / "generator_stall.json"
    stalled_generator(generator(host_paths), cpp_target, out)
    step, calls = results(out)
    from_intended, from_send = late(calls, "intended"), late(calls, "start")
    assert len(from_intended) >= 0.9 * LATE_CALLS, from_intended
    assert max(from_intended) >= 0.9 * STALL_S
    # The failure mode it guards: sent late, the calls themselves were fast (but for one the
    # stop may have caught in flight, whose answer the stopped process could not read, and,
    # on a machine shared with other work, the odd call the scheduler held up).
    assert len(from_send) < len(from_intended) / 4, from_send
    # The generator fell behind in a 100 ms window, and its lag explains the step's p99 over
    # the SLO: the step is its limit, not the server's.
    assert step["generator_bound"] and not step["held"], step
    assert step["max_lag_ms"] >= 0.9 * STALL_S * 1000
    assert "generator-bound" in step["why"] and "enough to explain" in step["why"]


def test_a_generator_lag_that_cannot_change_the_verdict_does_not_discard_the_step(
    host_paths, cpp_target, tmp_path
):
    # The same stall against an SLO above it: the late calls carry their full lateness and
    # the step still holds, so the lag did not decide it and the step counts.
    out = tmp_path / "generator_stall_within_slo.json"
    slo_ms = 5 * STALL_S * 1000
    stalled_generator(generator(host_paths), cpp_target, out, "--slo_ms", str(slo_ms))
    step, calls = results(out)
    assert len(late(calls, "intended")) >= 0.9 * LATE_CALLS
    assert step["max_lag_ms"] >= 0.9 * STALL_S * 1000
    assert step["latency_ms"]["max"] >= 0.9 * STALL_S * 1000
    assert step["held"] and not step["generator_bound"], step
    assert "lag counted" in step["why"]


def test_a_step_whose_generator_used_its_cpus_up_is_marked_generator_bound(
    host_paths, cpp_target, tmp_path
):
    # The CPU rule alone (lag allowed up to 10 s): any CPU above 0.1% of its CPUs is too much.
    out = tmp_path / "cpu.json"
    extra = ("--cpu_limit", "0.001", "--lag_limit_ms", "10000")
    subprocess.run(argv(generator(host_paths), cpp_target, out, *extra), check=True, timeout=60)
    step, _ = results(out)
    assert step["generator_bound"] and not step["held"], step
    assert "of its" in step["generator_why"] and "CPU" in step["generator_why"]
    # The other way: the same step under a limit it stays within is the server's to hold.
    relaxed = tmp_path / "relaxed.json"
    extra = ("--cpu_limit", "0.99", "--lag_limit_ms", "10000", "--slo_ms", "10000")
    subprocess.run(argv(generator(host_paths), cpp_target, relaxed, *extra), check=True, timeout=60)
    step, _ = results(relaxed)
    assert not step["generator_bound"] and step["held"], step


def test_a_bad_option_is_refused_naming_it(host_paths, tmp_path):
    done = subprocess.run(
        [str(generator(host_paths)), "--target", "x:1", "--out", str(tmp_path / "o.json")]
        + ["--arrival", "bursty"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "--arrival" in done.stderr


def test_a_search_cell_runs_through_the_runner_and_reads_into_the_analysis(host_paths, tmp_path):
    # The matrix's cell as the study runs it, small: two rates against the C++ server.
    matrix, profiles = study_vars("capacity")
    small = {"run_implementations": ["cpp"], "search_max_rps": 1000, "max_rates": 2}
    small |= {"step_s": 0.5, "min_calls": 200, "warmup_s": 0.5, "settle_s": 0.2}
    known = set(discover(REPO / "servers"))
    (spec,) = [
        c
        for c in expand("r", get_study("capacity"), matrix | small, profiles, "quick", known)
        if c.repeat == 1
    ]
    runner = CellRunner(host_paths, tmp_path)
    record = runner.run(spec)
    assert record is not None and record.status == "ok", record and record.error
    (found,) = capacity.searches(read_folder(tmp_path / "r"))
    assert found.report["config"]["slo_ms"] == matrix["slo_ms"]
    assert found.report["knee"]["limit"] in ("server", "generator", "search_max", "unplaced")
    # Every step of every rate tried, each with its windows and the server's CPU under it.
    assert len(found.steps) == 3 * len(found.report["rates"]) >= 3
    assert (found.steps["server_cores"] > 0).all()
    assert all(len(w) >= 5 for w in found.steps["window_series"])
