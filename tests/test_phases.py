"""Where a run's minutes go: phase times recorded per cell, read back from the raw files of
cells recorded before the field, summed per study and run, and the measuring efficiency."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from perflab.analysis.report import manifest_markdown
from perflab.contract.parsers import parse_ghz, read_raw_text
from perflab.contract.phases import (
    PhaseClock,
    PhaseTimes,
    TimedCell,
    cell_phases,
    configuration_of,
    largest_overheads,
    manifest_entry,
    overheads_table,
    pause_marks,
    split_cells,
    split_table,
)

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "20261125-quick"
GHZ_CELL = REFERENCE / "aws_io" / "grpcio_sync_w10-list_unary-steady-c10-seed_far_s3-r1"
ORDERS_CELL = REFERENCE / "orders" / "aa-b-unary-plaintext-c10-n1000-r2"


def record_of(folder: Path) -> dict:
    return json.loads((folder / "cell.json").read_text())


def test_an_old_ghz_cell_is_split_from_its_resources_and_ghz_total():
    record = record_of(GHZ_CELL)
    assert "phases" not in record  # recorded before the field: read back from raw files
    times = cell_phases(GHZ_CELL, record)
    ghz = {m.metric: m.value for m in parse_ghz(read_raw_text(GHZ_CELL / "ghz.json"))}
    assert times.window == ghz["total"]
    # The boundaries are resources.csv's first sample of each phase.
    rows = (GHZ_CELL / "resources.csv").read_text().splitlines()[1:]
    first = {}
    for row in rows:
        t, _, _, phase, *_ = row.split(",")
        first.setdefault(phase, float(t))
    assert times.server_start == first["warmup"]
    assert times.warmup == pytest.approx(first["measure"] - first["warmup"])
    assert times.load == pytest.approx(first["stop"] - first["measure"])
    parts = times.server_start + times.ready + times.warmup + times.load + times.teardown
    assert parts == pytest.approx(times.total)
    assert 0 < times.window <= times.load


def test_an_old_client_cell_takes_its_window_from_the_clients_elapsed():
    record = record_of(ORDERS_CELL)
    metrics = {
        m["metric"]: m["value"]
        for m in json.loads((ORDERS_CELL / "client.json").read_text())["metrics"]
    }
    times = cell_phases(ORDERS_CELL, record)
    assert times.window == metrics["elapsed"]
    assert times.warmup == 0.0  # the client warms up inside its own run


def test_recorded_phases_are_taken_as_they_are():
    record = {
        "phases": {
            "server_start": 1,
            "ready": 2,
            "warmup": 3,
            "load": 4,
            "window": 3.5,
            "teardown": 1,
            "total": 11,
        }
    }
    times = cell_phases(Path("/nonexistent"), record)
    assert times == PhaseTimes(1, 2, 3, 4, 3.5, 1, 11)
    assert times.overhead == 7.5


def cell(study: str, start: float, end: float, window: float) -> TimedCell:
    def iso(seconds: float) -> str:
        return f"2026-11-25T10:00:{seconds:06.3f}+00:00"

    total = end - start
    return TimedCell(
        study,
        iso(start),
        iso(end),
        PhaseTimes(
            server_start=0.5, warmup=total - 0.5 - window, load=window, window=window, total=total
        ),
    )


def test_the_split_counts_gaps_within_a_study_and_handovers_between_studies():
    split = split_cells(
        [cell("b", 20.0, 30.0, 8.0), cell("a", 0.0, 4.0, 2.0), cell("a", 5.0, 9.0, 2.0)]
    )
    assert split.wall == 30.0
    assert (split.gaps, split.gap_count) == (1.0, 1)  # a 4 -> a 5
    assert (split.handovers, split.handover_count) == (11.0, 1)  # a 9 -> b 20
    assert split.window == 12.0 and split.efficiency == pytest.approx(0.4)
    assert sum(split.parts.values()) == pytest.approx(split.wall)
    assert split.cells_by_study == {"a": 2, "b": 1}
    assert manifest_entry(split)["studies"]["a"]["window"] == 4.0
    assert "| gaps between cells (negative: teardown beside the next start) | 0.0 | 3% |" in (
        split_table(split)
    )


def test_a_gap_with_a_stop_or_resume_mark_in_it_is_a_pause_left_out_of_the_wall():
    cells = [cell("a", 0.0, 4.0, 2.0), cell("a", 30.0, 34.0, 2.0), cell("a", 35.0, 39.0, 2.0)]
    progress = (
        "2026-11-25T10:00:04.500+00:00 stopped by signal 2 before hello/x-r1\n"
        "2026-11-25T10:00:29.000+00:00 start hello [2/3] hello/x-r1\n"
        "not a line of ours\n"
    )
    marks = pause_marks(progress)
    assert len(marks) == 1
    paused = split_cells(cells, marks)
    assert (paused.paused, paused.pause_count) == (26.0, 1)
    assert paused.wall == 39.0 - 26.0 and (paused.gaps, paused.gap_count) == (1.0, 1)
    assert sum(paused.parts.values()) == pytest.approx(paused.wall)
    assert manifest_entry(paused)["paused_s"] == 26.0
    assert "Left out: 0.4 min paused between a stop and its resume (1 pause)." in split_table(
        paused
    )
    # Without a mark the same gap is the runner's own time between cells.
    unmarked = split_cells(cells)
    assert (unmarked.paused, unmarked.wall, unmarked.gaps) == (0.0, 39.0, 27.0)
    assert "Left out" not in split_table(unmarked)
    resumed = pause_marks("2026-11-25T10:00:20.000+00:00 resumed: 1 of these 3 cells\n")
    assert split_cells(cells, resumed).pause_count == 1


def test_efficiency_rises_when_the_same_windows_take_less_wall_time():
    slow = split_cells([cell("a", 0.0, 10.0, 2.0), cell("a", 20.0, 30.0, 2.0)])
    fast = split_cells([cell("a", 0.0, 2.5, 2.0), cell("a", 2.6, 5.1, 2.0)])
    assert slow.efficiency == pytest.approx(4.0 / 30.0)
    assert fast.efficiency == pytest.approx(4.0 / 5.1)


def test_the_clock_gives_a_phase_never_reached_no_time_and_the_rest_to_teardown():
    clock = PhaseClock()
    clock.mark("server")
    time.sleep(0.01)
    times = clock.times(window=0.0)  # the server never got ready
    assert times.ready == times.warmup == times.load == 0.0
    assert times.teardown >= 0.01
    assert times.server_start + times.teardown == pytest.approx(times.total)
    with pytest.raises(ValueError, match="no phase mark 'measure'"):
        clock.mark("measure")


def test_the_index_says_the_measuring_efficiency_beside_the_duration():
    manifest = {
        "run_id": "r",
        "profile": "quick",
        "topology": "localhost",
        "git_sha": "abc",
        "start": "s",
        "end": "e",
    }
    assert "measuring" not in manifest_markdown(manifest)  # a run collected before the split
    manifest["measuring"] = {"wall_s": 600.0, "window_s": 450.0, "efficiency": 0.75}
    assert "10.0 min measuring, 75% of it inside measured windows (7.5 min)" in manifest_markdown(
        manifest
    )


@pytest.mark.live
def test_a_real_ghz_cell_records_its_window_as_ghz_timed_it(host_paths, tmp_path):
    from perflab.host.runner import CellRunner
    from tests.fixtures_live import hello_cell

    spec = hello_cell("cpp/hello", "cpp")
    record = CellRunner(host_paths, tmp_path).run(spec)
    assert record is not None and record.status == "ok", record.error
    folder = tmp_path / spec.run_id / spec.study / spec.cell_id
    ghz = {m.metric: m.value for m in parse_ghz(read_raw_text(folder / "ghz.json"))}
    phases = json.loads((folder / "cell.json").read_text())["phases"]
    assert phases["window"] == pytest.approx(ghz["total"], abs=0.001)
    assert 0 < phases["window"] <= phases["load"] < phases["total"]
    assert phases["warmup"] > 0  # the 0.5 s warm-up run
    # The warm-up's own counts: asked 0.5 s, every call answered, none left unsaid.
    warmup = json.loads((folder / "cell.json").read_text())["warmup"]
    assert warmup["configured_s"] == 0.5
    assert warmup["calls"] == warmup["ok"] > 0 and warmup["not_ok_by_code"] == {}
    assert 0.5 <= warmup["seconds"] <= phases["warmup"]
    parts = sum(phases[k] for k in ("server_start", "ready", "warmup", "load", "teardown"))
    assert parts == pytest.approx(phases["total"], abs=0.005)
    # The same cell read back from its raw files (as an old cell would be) agrees.
    old = {k: v for k, v in json.loads((folder / "cell.json").read_text()).items() if k != "phases"}
    again = cell_phases(folder, old)
    assert again.window == pytest.approx(phases["window"], abs=0.001)
    assert again.load == pytest.approx(phases["load"], abs=0.05)


def test_the_largest_overheads_sum_repeats_and_put_the_most_time_outside_windows_first():
    def times(total: float, window: float, ready: float = 0.0) -> PhaseTimes:
        return PhaseTimes(
            ready=ready, warmup=total - window - ready, load=window, window=window, total=total
        )

    cells = [
        # Long windows, little around them: 2 x 1 s outside.
        ("hello", "cpp", "steady-c10-r1", times(11.0, 10.0)),
        ("hello", "cpp", "steady-c10-r2", times(11.0, 10.0)),
        # Short windows, a long start: 2 x 4 s outside, 3 s of each before READY.
        ("orders", "py", "bidi-c1000-r1", times(5.0, 1.0, ready=3.0)),
        ("orders", "py", "bidi-c1000-r2", times(5.0, 1.0, ready=3.0)),
        ("orders", "py", "unary-c1-rtt-r1", times(1.5, 1.0)),
    ]
    top = largest_overheads(cells, 2)
    assert [(e.configuration, e.cells, e.phases.overhead) for e in top] == [
        ("bidi-c1000", 2, 8.0),
        ("steady-c10", 2, 2.0),
    ]
    table = overheads_table(top)
    assert "| orders | py | bidi-c1000 | 2 | 8 | 6 | 2 | 0 | 2 |" in table
    # The same cells with the windows the other way round: hello comes first.
    swapped = [(s, i, c, times(t.total, t.total - t.window)) for s, i, c, t in cells]
    assert largest_overheads(swapped, 1)[0].configuration == "steady-c10"
    assert configuration_of("unary-c1-rtt-r12") == "unary-c1-rtt"
    assert configuration_of("unary-c1-rtt") == "unary-c1-rtt"


def test_a_capacity_search_counts_its_steps_measured_windows(tmp_path: Path):
    from perflab.contract.parsers import MalformedRawFile
    from perflab.contract.phases import measured_window

    steps = [{"offered_rps": r, "measure_s": 2.0} for r in (500, 1000)] + [
        {"offered_rps": 1500, "measure_s": 1.5}
    ]
    report = {"metrics": [{"metric": "steps", "value": 3, "unit": "count"}], "steps": steps}
    (tmp_path / "client.json").write_text(json.dumps(report))
    assert measured_window(tmp_path, "client") == 5.5
    # A client that states no window and no steps counts none (openssl speed).
    (tmp_path / "client.json").write_text(json.dumps({"metrics": report["metrics"]}))
    assert measured_window(tmp_path, "client") == 0.0
    # A step without its window is named, not counted as nothing.
    (tmp_path / "client.json").write_text(json.dumps({**report, "steps": [{"offered_rps": 1}]}))
    with pytest.raises(MalformedRawFile, match="measure_s"):
        measured_window(tmp_path, "client")
