"""The resource sampler: a phase change is sampled at the moment it happens."""

from __future__ import annotations

import csv
import os
import time

from perflab.contract.parsers import parse_resources
from perflab.host.sampler import ResourceSampler


def test_a_phase_change_is_one_sample_under_both_phases(tmp_path):
    out = tmp_path / "resources.csv"
    # A long interval: the only samples inside "measure" are the two at its ends.
    sampler = ResourceSampler(out, interval_s=5.0)
    # This process (its tree may hold a live fixture's processes when the whole suite runs:
    # only this pid's rows are counted below).
    sampler.watch("server", os.getpid())
    sampler.start()
    time.sleep(0.2)
    sampler.phase("measure")
    began = time.monotonic()
    cpu_began = time.process_time()
    # Busy by CPU time, not wall time: on a loaded host the phase still holds 0.2 s of CPU.
    while time.process_time() - cpu_began < 0.2:
        sum(range(10_000))
    busy_wall = time.monotonic() - began
    sampler.phase("stop")
    sampler.stop()
    rows = [r for r in csv.DictReader(out.open()) if r["pid"] == str(os.getpid())]
    phases = [r["phase"] for r in rows]
    assert phases.count("measure") == 2, phases
    first, last = (r for r in rows if r["phase"] == "measure")
    # Each end of the phase is the same instant and the same CPU as the phase beside it.
    before = next(r for r in rows if r["phase"] == "start" and r["t"] == first["t"])
    after = next(r for r in rows if r["phase"] == "stop" and r["t"] == last["t"])
    assert before["cpu_seconds"] == first["cpu_seconds"]
    assert after["cpu_seconds"] == last["cpu_seconds"]
    # The window is the phase (not the 5 s sampling interval), its CPU at least what was spent.
    own = float(last["cpu_seconds"]) - float(first["cpu_seconds"])
    assert own >= 0.2 - 0.02  # cpu_seconds has the kernel's 10 ms tick
    metrics = {m.metric: m.value for m in parse_resources(out.read_text())}
    assert busy_wall - 0.05 <= metrics["server_cpu_window"] < 5.0
    assert metrics["server_cpu_seconds"] >= own - 1e-9
