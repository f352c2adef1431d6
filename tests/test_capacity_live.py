"""Open-loop ghz on real processes (perflab.host.ghz.ghz_argv with LoadSpec.rps), the method
the capacity study used before its own generator: a server's stall shows in every call
scheduled during it, where closed loop hides it (coordinated omission); the runner resolves a
step's rate from its probe cell and marks `bound` a step whose rate ghz could not send. And
the capacity pages: a run of the generator, and a run of the old ghz ladder."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.analysis.report import render_run
from perflab.cli import claim_frame_hooks
from perflab.contract.cell import CellSpec, LoadSpec
from perflab.contract.matrix import HELLO_RPC
from perflab.contract.parsers import read_raw_text
from perflab.host.ghz import ghz_argv, ghz_binary
from perflab.host.impls import HostPaths
from perflab.host.runner import CellRunner
from tests.conftest import REPO, overclaimed_intervals
from tests.fixtures_live import GHZ_VERSION, hello_cell, stall_server

pytestmark = pytest.mark.live

STALL_S = 0.5
OPEN_RATE = 200  # calls/s: STALL_S x OPEN_RATE = 100 calls scheduled during the stall
DURATION_S = 3.0


@pytest.fixture
def stall_target(host_paths: HostPaths) -> Iterator[str]:
    """The stall server, stalling at the call one second in."""
    with stall_server(host_paths, OPEN_RATE, STALL_S) as target:
        yield target


def latencies_s(host_paths: HostPaths, load: LoadSpec, target: str, out: Path) -> list[float]:
    binary = ghz_binary(host_paths.bin, GHZ_VERSION)
    argv = ghz_argv(binary, load, REPO / "proto", target, 1, out)
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    details = json.loads(out.read_text())["details"]
    assert all(d["status"] == "OK" for d in details), "the stall server answers every call"
    return [d["latency"] / 1e9 for d in details]


def test_open_loop_shows_the_stall_in_every_call_scheduled_during_it(
    host_paths, stall_target, tmp_path
):
    load = HELLO_RPC.load(10, 1, duration_s=DURATION_S, rps=OPEN_RATE)
    waited = latencies_s(host_paths, load, stall_target, tmp_path / "o.json")
    # A call scheduled t into the stall waits at least STALL_S - t: every call sent in the
    # stall's first half, OPEN_RATE x STALL_S / 2 of them (50), waits more than STALL_S / 2
    # (more may: the one thread then works off the queue the stall left).
    expected = OPEN_RATE * STALL_S / 2
    long_waits = sum(s > STALL_S / 2 for s in waited)
    assert long_waits >= 0.9 * expected, long_waits
    assert max(waited) >= 0.9 * STALL_S


def test_closed_loop_hides_the_same_stall(host_paths, stall_target, tmp_path):
    # The other way round: one caller waits for each answer, so it sends nothing during the
    # stall and only the stalled call itself is slow (coordinated omission).
    load = HELLO_RPC.load(1, 1, duration_s=DURATION_S)
    waited = latencies_s(host_paths, load, stall_target, tmp_path / "c.json")
    assert sum(s > STALL_S / 2 for s in waited) == 1


def probe_and_step(fraction: float, min_calls: int) -> tuple[CellSpec, CellSpec]:
    probe = hello_cell("go/hello", "go")
    probe.study, probe.cell_id, probe.scenario = "capacity", "go-probe", "probe"
    step = hello_cell("go/hello", "go")
    step.study, step.cell_id, step.scenario = "capacity", "go-step-r1", "step"
    step.load.rate_of = {"cell": probe.cell_id, "fraction": fraction, "min_calls": min_calls}
    step.params = {"fraction": fraction}
    return probe, step


def cell_json(runner: CellRunner, spec: CellSpec) -> dict:
    return json.loads((runner.cell_dir(spec) / "cell.json").read_text())


def test_a_step_runs_at_its_fraction_of_the_probe_and_records_it(host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path)
    probe, step = probe_and_step(0.1, 500)
    runner.run(probe)
    runner.run(step)
    probe_rps = json.loads(read_raw_text(runner.cell_dir(probe) / "ghz.json"))["rps"]
    record = cell_json(runner, step)
    assert record["status"] == "ok", record["error"] or record["notes"]
    offered = record["params"]["offered_rps"]
    assert offered == round(0.1 * record["params"]["reference_rps"])
    assert record["params"]["reference_rps"] == pytest.approx(probe_rps, rel=0.02)
    # Stretched to min_calls / rate when the step's own duration is too short for them.
    assert record["params"]["duration_s"] == pytest.approx(max(1.0, 500 / offered), rel=1e-3)
    assert record["spec"]["load"]["rps"] == offered


def test_a_step_ghz_cannot_send_is_marked_bound(host_paths, tmp_path):
    # Twenty times the closed-loop rate: more than ghz can send from its one CPU.
    runner = CellRunner(host_paths, tmp_path)
    probe, step = probe_and_step(20.0, 0)
    runner.run(probe)
    runner.run(step)
    record = cell_json(runner, step)
    assert record["status"] == "bound", record["notes"]
    assert any("could not keep its schedule" in note for note in record["notes"])


def test_a_step_whose_probe_is_missing_fails_saying_so(host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path)
    _, step = probe_and_step(0.5, 0)
    runner.run(step)
    record = cell_json(runner, step)
    assert record["status"] == "failed" and "has not run in this run" in record["error"]


FIXTURE = REPO / "tests" / "data" / "runs" / "capacity_fixture"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    run = tmp_path_factory.mktemp("data") / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    pages = render_run(
        run, REPO / "data" / "reference", out, REPO / "notebooks", claim_frame_hooks()
    )
    assert {p.name for p in pages} == {"capacity.html", "index.html"}
    return out


def test_the_capacity_page_has_its_plot_ranking_and_steps(rendered):
    html = (rendered / "capacity.html").read_text()
    for heading in (
        "The knee at the SLO",
        "Latency against achieved rate",
        "One step over time",
        "Server CPU per call at the common rate",
        "Throughput per server core at saturation",
        "What this machine could not measure",
        "Every rate",
        "Errors and failed cells",
    ):
        assert heading in html
    assert "Traceback (most recent call last)" not in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert not overclaimed_intervals(html)
    assert (rendered / "figures" / "capacity_latency_vs_achieved.png").stat().st_size > 10_000


def test_the_index_lists_the_capacity_ranking_after_the_verdicts(rendered):
    html = (rendered / "index.html").read_text()
    assert html.index("Capacity: the knee at the SLO") > html.index("Verdicts")
    assert "Traceback (most recent call last)" not in html


LADDER = REPO / "tests" / "data" / "runs" / "capacity_ladder_fixture"


def test_a_run_of_the_old_ghz_ladder_still_renders_and_says_what_it_was(tmp_path):
    run = tmp_path / "data" / LADDER.name
    shutil.copytree(LADDER, run)
    render_run(
        run,
        REPO / "data" / "reference",
        tmp_path / "reports",
        REPO / "notebooks",
        claim_frame_hooks(),
    )
    html = (tmp_path / "reports" / "capacity.html").read_text()
    assert "measured with the old ghz ladder" in html
    assert "Traceback (most recent call last)" not in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
