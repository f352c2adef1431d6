"""The estimate said before a run: each cell priced from its configured seconds and the
reference run's overhead, or from the same configuration there, or by analogy (counted),
checked against the committed reference run's own measuring time."""

from __future__ import annotations

import copy
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from perflab.analysis.estimate import (
    UNKNOWN_CELL_S,
    ReferenceTimes,
    configured_seconds,
    estimate,
    measured_minutes,
    price,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
# The committed localhost reference: what `make run` prices its cells from.
REFERENCE = (
    REPO_ROOT
    / "data"
    / yaml.safe_load((REPO_ROOT / "data" / "reference" / "reference_runs.yml").read_text())[
        "localhost"
    ]
)

# The localhost reference before it, which `make run` priced the reference's cells from.
PREVIOUS = REPO_ROOT / "data" / "20261129T041406Z-quick"
# The reference before the A/A copies of pyclients' streams: it lacks them.
BEFORE_STREAM_AA = REPO_ROOT / "data" / "20261128T104258Z-quick"


@pytest.fixture(scope="module")
def own_cells() -> dict[str, list[dict]]:
    """Every cell the reference run ran, as the specs it was given (A/A and adaptive too)."""
    cells: dict[str, list[dict]] = defaultdict(list)
    for path in sorted(REFERENCE.glob("*/*/cell.json")):
        record = json.loads(path.read_text())
        cells[record["study"]].append(record["spec"])
    return dict(cells)


@pytest.fixture(scope="module")
def reference() -> ReferenceTimes:
    return ReferenceTimes.read(REFERENCE)


def hello_spec(own_cells: dict[str, list[dict]]) -> dict:
    return copy.deepcopy(next(s for s in own_cells["hello"] if configured_seconds(s)))


def test_configured_seconds_are_warmup_and_duration_of_a_timed_ghz_load():
    timed = {"load": {"kind": "ghz", "duration_s": 20.0, "warmup_s": 5.0}}
    assert configured_seconds(timed) == 25.0
    assert configured_seconds({"load": {"kind": "ghz", "total": 2000, "duration_s": None}}) is None
    assert configured_seconds({"load": {"kind": "client", "duration_s": None}}) is None
    # A warm-up sized in calls configures no seconds: it is priced with the overhead.
    by_calls = {"load": {"kind": "ghz", "duration_s": 4.0, "warmup_s": None, "warmup_total": 10}}
    assert configured_seconds(by_calls) == 4.0


def test_the_estimate_of_the_reference_runs_own_cells_is_within_15_percent_of_it(own_cells):
    result = estimate(own_cells, REFERENCE, 0.0)
    actual = measured_minutes(REFERENCE)
    assert result.cells == sum(len(specs) for specs in own_cells.values())
    # Its own cells: each priced from its own configuration, configured alike there.
    assert result.priced == {"configuration": result.cells}
    assert abs(result.minutes / actual - 1) < 0.15, (result.minutes, actual)


def test_the_reference_run_priced_from_the_one_before_it_is_within_15_percent_of_it(own_cells):
    # What `make run` printed once the reference run had calibrated: its cells priced from
    # the previous localhost reference (an A/A copy it lacked priced as its configuration's
    # cells there) at the pace its ceiling set against that one's, against the minutes the
    # run then took. The previous reference ran on a boot twice as fast: unpaced, 30% short.
    from perflab.analysis.estimate import pace_of

    pace = pace_of(REFERENCE, PREVIOUS)
    result = estimate(own_cells, PREVIOUS, 0.0, pace=pace.factor)
    actual = measured_minutes(REFERENCE)
    assert sum(result.priced.values()) == sum(map(len, own_cells.values()))
    assert abs(result.minutes / actual - 1) < 0.15, (result.minutes, actual)


def test_a_longer_configured_cell_costs_its_added_seconds(own_cells, reference):
    spec = hello_spec(own_cells)
    # Configured as in the reference: what its configuration took there.
    assert price(spec, reference).how == "configuration"
    spec["load"]["duration_s"] = spec["load"]["duration_s"] + 17.0
    longer = price(spec, reference)
    spec["load"]["duration_s"] = spec["load"]["duration_s"] + 17.0
    longest = price(spec, reference)
    assert longer.how == longest.how == "durations"
    assert longest.seconds - longer.seconds == pytest.approx(17.0)


def test_a_cell_timing_more_whole_payload_calls_costs_their_windows(own_cells, reference):
    spec = copy.deepcopy(
        next(s for s in own_cells["throughput"] if s["cell_id"] == "go-go-none-1073741824-r1")
    )
    key = ("throughput", "go-go-none-1073741824")
    assert reference.calls_by_configuration[key] == 1  # the reference timed one call a cell
    one = price(spec, reference)
    assert one.how == "configuration"
    spec["load"]["client_options"]["calls"] = 3
    three = price(spec, reference)
    assert three.how == "calls"
    window = statistics.median(reference.window_by_configuration[key])
    assert three.seconds - one.seconds == pytest.approx(2 * window)
    # A ghz load is not sized in whole-payload calls: nothing of it is scaled so.
    assert not any(study == "hello" for study, _ in reference.calls_by_configuration)


def test_a_far_s3_cell_costs_the_overhead_of_cells_behind_the_proxy(reference):
    # Behind a 250 ms proxy a cell's connect and drain take longer than on loopback.
    def spec(profile: str) -> dict:
        return {
            "study": "aws_io",
            "cell_id": f"grpcio_sync_w10-list_unary-steady-c99-{profile}-r1",
            "implementation": "grpcio_sync_w10",
            "params": {"latency_profile": profile},
            "load": {"kind": "ghz", "duration_s": 4.0, "warmup_s": 1.0},
        }

    far, near = price(spec("seed_far_s3"), reference), price(spec("none"), reference)
    assert far.how == near.how == "durations"
    # Keyed by implementation alone, both would cost the same.
    assert far.seconds > near.seconds + 0.5


def test_cells_the_reference_lacks_are_priced_by_analogy_and_counted(own_cells, reference):
    orders = copy.deepcopy(own_cells["orders"][0])
    orders["cell_id"] = "unary-plaintext-c10-n99999-r1"  # a size the reference never ran
    assert price(orders, reference).how == "analogy"
    result = estimate(
        {"orders": [orders], "newstudy": [{"cell_id": "x-r1", "implementation": "x"}]},
        REFERENCE,
        12,
    )
    assert result.priced == {"analogy": 1, "guess": 1}
    assert result.guessed_studies == ["newstudy"]
    assert result.minutes_by_study["newstudy"] * 60 == pytest.approx(
        UNKNOWN_CELL_S + reference.gap_s + reference.handover_s
    )
    sentence = result.sentence()
    assert "1 by analogy" in sentence and "plus at most 12 min of adaptive rounds" in sentence
    assert "newstudy guessed at 5 s a cell" in sentence


def test_an_aa_copy_the_reference_lacks_is_priced_as_its_configurations_cells():
    # pyclients' stream A/A pairs were new after 20261128T104258Z-quick: a copy of the
    # 100 000-number stream costs what that stream's own cells took there (about 7 s), not
    # the study's median cell (about 1 s).
    reference = ReferenceTimes.read(BEFORE_STREAM_AA)
    spec = {"study": "pyclients", "implementation": "cpp_numbers", "load": {"kind": "client"}}
    configuration = "grpc_aio-asyncio-stream_100000-steady-r1"
    own = price({**spec, "cell_id": configuration}, reference)
    copy_a = price({**spec, "cell_id": f"aa-a-{configuration}"}, reference)
    assert own.how == copy_a.how == "configuration"
    assert copy_a.seconds == own.seconds
    median = statistics.median(reference.by_study["pyclients"])
    assert copy_a.seconds > 3 * median
    # A configuration the reference never ran, copied, is still priced by analogy.
    unknown = price({**spec, "cell_id": "aa-b-grpc_aio-asyncio-stream_7-steady-r1"}, reference)
    assert unknown.how == "analogy"


def profile_estimate(profile: str) -> str:
    """The estimate run_start.yml prints for a profile: every study's cells as `perflab
    matrix` expands them, and the profile's cap of adaptive minutes."""
    from dataclasses import asdict

    import yaml

    from perflab.contract.adaptive import read
    from perflab.contract.matrix import expand
    from perflab.host.impls import discover
    from perflab.studies import get_study, runnable
    from tests.conftest import GROUP_VARS, REPO, study_vars

    known = set(discover(REPO / "servers"))
    cells = {
        study: [
            asdict(c) for c in expand("x", get_study(study), *study_vars(study), profile, known)
        ]
        for study in ["calibration", *runnable()]
    }
    knobs = yaml.safe_load((GROUP_VARS / "adaptive.yml").read_text())
    adaptive = read(knobs["perflab_adaptive"], knobs["perflab_profiles_adaptive"], profile)
    result = estimate(cells, REFERENCE, adaptive.max_minutes if adaptive.max_looks else 0)
    analogy, cells = (
        f"{n:,}".replace(",", " ") for n in (result.priced.get("analogy", 0), result.cells)
    )
    return (
        f"about {result.minutes:.0f} min\n({result.minutes / 60:.1f} h, {analogy} of its "
        f"{cells} cells priced by analogy)"
    )


def test_the_readme_gives_each_profiles_estimate_as_it_comes_out():
    from tests.conftest import REPO

    readme = " ".join((REPO / "README.md").read_text().split())
    quick = profile_estimate("quick").split("\n")[0]
    full = " ".join(profile_estimate("full").split())
    assert f"quick {quick}" in readme
    assert f"full {full}" in readme


def test_a_resume_prices_only_the_cells_without_a_record(own_cells, tmp_path, monkeypatch, capsys):
    import io

    from perflab.analysis.estimate import left_to_run
    from perflab.cli import main

    cells = {"hello": [copy.deepcopy(s) for s in own_cells["hello"][:3]]}
    done, broken, _ = (spec["cell_id"] for spec in cells["hello"])
    (tmp_path / "hello" / done).mkdir(parents=True)
    (tmp_path / "hello" / done / "cell.json").write_text("{}")
    (tmp_path / "hello" / broken).mkdir()  # no record: the runner runs it again
    left, complete = left_to_run(cells, tmp_path)
    assert complete == 1
    assert [spec["cell_id"] for spec in left["hello"]] == [
        spec["cell_id"] for spec in cells["hello"][1:]
    ]

    def said(run_dir: Path) -> str:
        monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(cells)))
        assert (
            main(
                [
                    "estimate",
                    f"--reference={REPO_ROOT / 'data' / 'reference'}",
                    f"--run-dir={run_dir}",
                ]
            )
            == 0
        )
        return capsys.readouterr().out

    (tmp_path / "progress.log").write_text("")
    resumed = said(tmp_path)
    assert resumed.startswith("resuming: 1 cells complete already, the rest: expected measuring")
    # The run's start marks the pause, whichever runner list holds the complete cells.
    assert (
        "resumed: 1 cells complete already (run start)" in (tmp_path / "progress.log").read_text()
    )
    assert "of 2 cells" in resumed
    fresh = said(tmp_path / "none")
    assert fresh.startswith("expected measuring") and "of 3 cells" in fresh


def test_cells_on_a_kept_server_leave_out_its_wait_for_ready(reference):
    from dataclasses import asdict

    from perflab.contract.matrix import expand
    from perflab.host.impls import discover
    from perflab.studies import get_study
    from tests.conftest import study_vars

    known = set(discover(REPO_ROOT / "servers"))

    def hello(reuse: bool) -> list[dict]:
        matrix, profiles = study_vars("hello")
        matrix["reuse_servers"] = reuse
        expanded = expand("x", get_study("hello"), matrix, profiles, "quick", known)
        return [asdict(c) for c in expanded]

    fresh, shared = (estimate({"hello": hello(r)}, REFERENCE, 0) for r in (False, True))
    cells = hello(True)
    servers = {
        (c["repeat"], json.dumps(c["server"], sort_keys=True)) for c in cells if c["reuse_server"]
    }
    # Every sharing cell but the first of its server and round; the A/A copy a starts its own.
    kept = sum(c["reuse_server"] for c in cells) - len(servers)
    assert fresh.kept_server == 0 and shared.kept_server == kept > 0
    saved = (fresh.minutes - shared.minutes) * 60
    # Each cell on a kept server saves its implementation's wait for READY there, which the
    # Python servers spend (tenths of a second) and C++ and Go hardly do.
    ready = {
        impl: statistics.median(found)
        for (study, impl), found in reference.server_s_by_implementation.items()
        if study == "hello"
    }
    assert ready["grpcio_sync_w10"] > 10 * ready["go"]
    kept_cells = [
        c
        for before, c in zip([None, *cells], cells, strict=False)
        if before
        and c["reuse_server"]
        and before["reuse_server"]
        and before["server"] == c["server"]
        and before["repeat"] == c["repeat"]
    ]
    assert len(kept_cells) == kept
    # Never more than half a cell's own price (a seed-method cell on a fast server costs
    # less than a Python server's wait for READY).
    expected = sum(
        min(ready[c["implementation"]], price({"study": "hello", **c}, reference).seconds / 2)
        for c in kept_cells
    )
    assert saved == pytest.approx(expected, rel=1e-6)
    assert f"; {kept} on a kept server, their wait for READY left out" in shared.sentence()
    assert "kept server" not in fresh.sentence()
    # Servers the agent starts on another host are never kept: nothing is left out there.
    remote = estimate({"hello": cells}, REFERENCE, 0, servers_kept=False)
    assert remote.kept_server == 0 and remote.minutes == pytest.approx(fresh.minutes)


def test_a_pause_in_the_reference_prices_no_gap_or_handover(tmp_path):
    from perflab.contract.cell import write_cell_json

    def cell(study: str, cell_id: str, start: str, end: str) -> None:
        folder = tmp_path / study / cell_id
        folder.mkdir(parents=True)
        record = {"study": study, "cell_id": cell_id, "implementation": "go", "status": "ok"}
        record |= {"scenario": "steady", "params": {}}
        write_cell_json(folder, {**record, "start": start, "end": end, "spec": {}})

    cell("hello", "go-r1", "2026-11-27T01:00:00+00:00", "2026-11-27T01:00:10+00:00")
    cell("hello", "go-r2", "2026-11-27T01:00:11+00:00", "2026-11-27T01:00:20+00:00")
    # A stop after hello, resumed an hour later at the next study.
    cell("orders", "go-r1", "2026-11-27T02:00:20+00:00", "2026-11-27T02:00:30+00:00")
    cell("orders", "go-r2", "2026-11-27T02:00:32+00:00", "2026-11-27T02:00:40+00:00")
    cell("watch", "go-r1", "2026-11-27T02:00:45+00:00", "2026-11-27T02:00:50+00:00")
    progress = tmp_path / "progress.log"
    progress.write_text(
        "2026-11-27T01:00:21+00:00 stopped by signal 2 before orders/go-r1\n"
        "2026-11-27T02:00:19+00:00 resumed: 0 cells complete already (run start)\n"
    )
    times = ReferenceTimes.read(tmp_path)
    assert times.handover_s == pytest.approx(5.0)  # orders -> watch only
    assert times.gap_s == pytest.approx(1.5)  # median of 1 s and 2 s
    progress.unlink()  # unmarked, the hour is a handover like any other
    assert ReferenceTimes.read(tmp_path).handover_s == pytest.approx((3600 + 5) / 2)
