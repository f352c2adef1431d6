"""The resource sampler: a phase change is sampled at the moment it happens."""

from __future__ import annotations

import csv
import os
import time

from perflab.parsers import parse_resources
from perflab.sampler import ResourceSampler


def test_a_phase_change_is_one_sample_under_both_phases(tmp_path):
    out = tmp_path / "resources.csv"
    # A long interval: the only samples inside "measure" are the two at its ends.
    sampler = ResourceSampler(out, interval_s=5.0)
    sampler.watch("server", os.getpid())  # this process: no other is started
    sampler.start()
    time.sleep(0.2)
    sampler.phase("measure")
    end = time.monotonic() + 0.3
    while time.monotonic() < end:  # busy, so the phase's CPU is more than a tick
        sum(range(10_000))
    sampler.phase("stop")
    sampler.stop()
    rows = list(csv.DictReader(out.open()))
    phases = [r["phase"] for r in rows]
    assert phases.count("measure") == 2, phases
    first, last = (r for r in rows if r["phase"] == "measure")
    # Each end of the phase is the same instant and the same CPU as the phase beside it.
    before = next(r for r in rows if r["phase"] == "start" and r["t"] == first["t"])
    after = next(r for r in rows if r["phase"] == "stop" and r["t"] == last["t"])
    assert before["cpu_seconds"] == first["cpu_seconds"]
    assert after["cpu_seconds"] == last["cpu_seconds"]
    metrics = {m.metric: m.value for m in parse_resources(out.read_text())}
    assert 0.25 <= metrics["server_cpu_window"] < 1.0
    assert metrics["server_cpu_seconds"] > 0.1
