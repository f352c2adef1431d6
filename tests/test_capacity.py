"""Capacity: its matrix in every profile, the open-loop ghz options, and its analysis on
constructed steps (each sentence both ways) and on the fixture run (a real smoke run)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from perflab.analysis import frames, stats
from perflab.contract.cell import LoadSpec
from perflab.contract.matrix import HELLO_RPC, MatrixError, expand
from perflab.contract.runid import RUN_PROFILES as PROFILES
from perflab.host.ghz import SCHEDULE_TOLERANCE, ghz_argv, open_loop_rate, schedule_shortfall
from perflab.host.impls import discover
from perflab.studies import get_study
from perflab.studies.capacity import analysis as capacity
from perflab.studies.capacity.matrix import PREFIX
from tests.conftest import REPO, study_vars

FIXTURE = REPO / "tests" / "data" / "runs" / "capacity_fixture"
KNOWN = set(discover(REPO / "servers"))
KNOBS = {"slo_ms": 5.0, "slo_unloaded_multiple": 10.0, "achieved_within": 0.01}


def cells(profile: str, **override: object) -> list:
    matrix, profiles = study_vars("capacity")
    return expand("r", get_study("capacity"), {**matrix, **override}, profiles, profile, KNOWN)


# --- matrix ----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_expands_with_each_probe_before_its_steps(profile):
    run = cells(profile)
    order = {c.cell_id: i for i, c in enumerate(run)}
    steps = [c for c in run if c.scenario == "step"]
    assert steps and len(order) == len(run)
    for step in steps:
        assert order[step.load.rate_of["cell"]] < order[step.cell_id]
        assert step.params["fraction"] == step.load.rate_of["fraction"]
        assert {k: step.params[k] for k in KNOBS} == KNOBS


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_runs_steps_long_enough_for_their_p99(profile):
    # min_calls sizes a step; the percentile rule (stats.samples_needed) says what it needs.
    for step in (c for c in cells(profile) if c.scenario == "step"):
        assert step.load.rate_of["min_calls"] >= stats.samples_needed(0.99)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("fractions", [0.5, 0.1]),
        ("fractions", [0.1, 4.0]),
        ("achieved_within", 1.5),
        ("slo_ms", 0),
        ("slo_unloaded_multiple", "ten"),
        ("min_calls", 0),
        ("connections", [1, 2]),
        ("run_implementations", ["nope"]),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(key, value):
    with pytest.raises(MatrixError, match=rf"{PREFIX}\.{key}"):
        cells("quick", **{key: value})


# --- open-loop ghz -----------------------------------------------------------------------


def test_open_loop_argv_adds_rps_and_async_and_closed_loop_is_unchanged():
    closed = HELLO_RPC.load(10, 1, duration_s=2.0)
    opened = HELLO_RPC.load(10, 1, duration_s=2.0, rps=1234)
    args = (Path("/bin/ghz"), Path("/p"), "127.0.0.1:1", 1, Path("/o.json"))
    closed_argv = ghz_argv(args[0], closed, *args[1:])
    open_argv = ghz_argv(args[0], opened, *args[1:])
    assert not [a for a in closed_argv if a.startswith("--rps") or a == "--async"]
    assert open_argv[:-1] == closed_argv[:-1] + ["--rps=1234", "--async"]
    assert open_argv[-1] == closed_argv[-1] == "127.0.0.1:1"


def test_an_old_load_spec_without_the_open_loop_fields_reads_as_closed_loop():
    raw = {"kind": "ghz", "proto": "hello.proto", "call": "c", "concurrency": 2}
    assert LoadSpec(**raw).rps == 0 and LoadSpec(**raw).rate_of == {}


def test_open_loop_rate_is_a_whole_positive_number():
    assert open_loop_rate(2_345.6, 0.5) == 1_173
    assert open_loop_rate(3.0, 0.1) == 1


def test_a_schedule_ghz_kept_has_no_note_and_one_it_missed_has():
    offered, seconds = 1_000, 2.0
    kept = {"count": offered * seconds, "rps": 990.0}
    missed = {"count": offered * seconds * (1 - 2 * SCHEDULE_TOLERANCE), "rps": 975.0}
    assert schedule_shortfall(offered, seconds, kept) == ""
    assert "could not keep its schedule" in schedule_shortfall(offered, seconds, missed)


# --- analysis on constructed steps -------------------------------------------------------


def step_rows(
    impl: str, repeat: int, plan: list[tuple[float, float, float, str]], reference: float = 1000
) -> list[dict]:
    """plan: (fraction, achieved share of offered, p99 ms, status) per step; p50 = p99 / 4."""
    rows = []
    for fraction, share, p99, status in plan:
        offered = open_loop_rate(reference, fraction)
        base = {
            "study": "capacity",
            "scenario": "step",
            "implementation": impl,
            "cell_id": f"{impl}-f{fraction}-r{repeat}",
            "status": status,
            "repeat": repeat,
            "fraction": fraction,
            "offered_rps": offered,
            "reference_rps": reference,
            "duration_s": 2.0,
            **KNOBS,
        }
        metrics = {
            "count": offered * 2.0,
            "ok": offered * 2.0 * share,
            "errors": 0.0,
            "rps": offered * share,
            "latency_p50": p99 / 4,
            "latency_p90": p99 / 2,
            "latency_p99": p99,
            "server_cpu_us_per_call": 100.0 * repeat,
            "client_cpu_seconds": 0.5,
        }
        rows += [{**base, "metric": m, "value": v, "unit": ""} for m, v in metrics.items()]
    return rows


HELD = (1.0, 1.0, "ok")  # achieved share, p99 ms, status of a step that holds


def frame(*parts: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for part in parts for row in part])


def test_the_knee_is_the_last_step_under_the_slo_and_a_late_recovery_does_not_count():
    plan = [(0.1, *HELD), (0.5, *HELD), (1.0, 1.0, 9.0, "ok"), (1.3, *HELD)]
    knee = capacity.knees(capacity.steps(frame(step_rows("a", 1, plan))))
    fixed = knee[knee["slo"] == capacity.FIXED].iloc[0]
    assert fixed["knee_rps"] == 500 and not fixed["floor"]
    assert "p99 9.00 ms above 5.00 ms" in fixed["why"]
    # The knee lies between 500 and the step that ended it: the table shows that step.
    assert fixed["past_rps"] == 1000
    shown = capacity.ranking_table(capacity.ranking(knee))
    assert shown["first step past it (req/s)"].iloc[0] == "1,000"


def test_an_achieved_rate_short_of_offered_ends_the_knee():
    plan = [(0.1, *HELD), (0.5, 0.95, 1.0, "ok")]
    knee = capacity.knees(capacity.steps(frame(step_rows("a", 1, plan))))
    assert set(knee["knee_rps"]) == {100}
    assert knee["why"].str.contains("achieved 475 of 500").all()


def test_a_bound_step_ends_the_knee_as_a_lower_bound_and_all_held_is_one_too():
    bound = [(0.1, *HELD), (0.5, 1.0, 1.0, "bound"), (1.0, *HELD)]
    held = [(0.1, *HELD), (0.5, *HELD)]
    knee = capacity.knees(capacity.steps(frame(step_rows("a", 1, bound), step_rows("b", 1, held))))
    by = knee[knee["slo"] == capacity.FIXED].set_index("implementation")
    assert (by.loc["a", "knee_rps"], bool(by.loc["a", "floor"])) == (100, True)
    assert (by.loc["b", "knee_rps"], bool(by.loc["b", "floor"])) == (500, True)
    assert "bound" in by.loc["a", "why"]
    # Neither search ended on a step the server failed: no step bounds either knee above.
    assert by["past_rps"].isna().all()


def test_the_relative_slo_is_the_multiple_of_the_lowest_steps_median_p50():
    # p50 = p99 / 4 = 0.1 ms at the lowest step: relative SLO 1 ms, so 2 ms ends it there.
    plan = [(0.1, 1.0, 0.4, "ok"), (0.5, 1.0, 2.0, "ok")]
    knee = capacity.knees(capacity.steps(frame(step_rows("a", 1, plan))))
    relative = knee[knee["slo"] == capacity.RELATIVE].iloc[0]
    assert relative["slo_ms"] == pytest.approx(KNOBS["slo_unloaded_multiple"] * 0.1)
    assert relative["knee_rps"] == 100
    assert knee[knee["slo"] == capacity.FIXED].iloc[0]["knee_rps"] == 500


def two_servers(fast_last: float, slow_last: float) -> pd.DataFrame:
    """Two repeats each; 'fast' knees at 1,000 x fast_last, 'slow' at 1,000 x slow_last."""

    def plan(last: float) -> list:
        return [(0.1, *HELD), (last, *HELD), (last + 0.2, 1.0, 50.0, "ok")]

    return frame(
        *(
            step_rows(n, r, plan(x))
            for n, x in (("fast", fast_last), ("slow", slow_last))
            for r in (1, 2)
        )
    )


def test_the_ranking_and_its_sentence_follow_the_data_both_ways():
    first = capacity.ranking(capacity.knees(capacity.steps(two_servers(0.9, 0.3))))
    flipped = capacity.ranking(capacity.knees(capacity.steps(two_servers(0.3, 0.9))))
    assert list(first["implementation"]) == ["fast", "slow"]
    assert list(flipped["implementation"]) == ["slow", "fast"]
    assert "**fast** sustains the most offered load, 900" in capacity.knee_sentence(first)
    assert "**slow** the least, 300" in capacity.knee_sentence(first)
    assert "**slow** sustains the most offered load, 900" in capacity.knee_sentence(flipped)
    table = capacity.ranking_table(first)
    assert table.iloc[0]["server"] == "fast"
    # Two repeats: an interval, and the sentence says what it covers (50%).
    assert "[" in table.iloc[0]["req/s at p99 ≤ 5 ms"]
    assert "50%" in stats.interval_sentence(capacity.interval_summary(first))


def test_a_run_without_steps_says_so_everywhere():
    rows = capacity.steps(frame(step_rows("a", 1, [(0.1, *HELD)])).iloc[:0])
    table = capacity.ranking(capacity.knees(rows))
    assert table.empty and capacity.ranking_table(table).empty
    assert capacity.knee_sentence(table).startswith("No step of any server was measured")
    assert capacity.bound_sentence(rows) == "No step was measured."
    assert capacity.floor_sentence(table) == ""


def test_no_server_holding_any_step_says_so():
    plan = [(0.1, 1.0, 50.0, "ok")]
    table = capacity.ranking(capacity.knees(capacity.steps(frame(step_rows("a", 1, plan)))))
    assert "No server held even its lowest step" in capacity.knee_sentence(table)


def test_a_server_bound_before_any_step_held_is_not_placed_nor_called_failed():
    held = [(0.1, *HELD), (0.5, 1.0, 50.0, "ok")]
    bound = [(0.1, 1.0, 1.0, "bound"), (0.5, *HELD)]
    failed = [(0.1, 1.0, 50.0, "ok")]
    parts = step_rows("a", 1, held), step_rows("b", 1, bound), step_rows("c", 1, failed)
    table = capacity.ranking(capacity.knees(capacity.steps(frame(*parts))))
    sentence = capacity.knee_sentence(table)
    assert "; c held no step at it" in sentence
    assert "; b reached a step the load generator could not hold" in sentence
    shown = capacity.ranking_table(table).set_index("server")["req/s at p99 ≤ 5 ms"]
    assert (
        shown["b"] == capacity.UNJUDGED
        and shown["c"] == "< 100 (no step held)"
        and shown["a"] == "100"
    )
    # Repeats of which one held no step: no rate below the lowest step is reported.
    one_held = [step_rows("c", 1, failed), step_rows("c", 2, held)]
    mixed = capacity.ranking(capacity.knees(capacity.steps(frame(*one_held))))
    assert capacity.ranking_table(mixed)["req/s at p99 ≤ 5 ms"].iloc[0] == (
        "< 100 (no step held in some repeats)"
    )
    assert "< 100 (no step held in some repeats) req/s" in capacity.knee_sentence(mixed)
    three = one_held + [step_rows("c", 3, held)]
    ranked = capacity.ranking(capacity.knees(capacity.steps(frame(*three))))
    assert capacity.ranking_table(ranked)["req/s at p99 ≤ 5 ms"].iloc[0] == "100 [< 100, 100]"
    alone = capacity.ranking(capacity.knees(capacity.steps(frame(step_rows("b", 1, bound)))))
    assert (
        capacity.knee_sentence(alone)
        == "No server's knee at p99 ≤ 5 ms could be placed: b (bound)."
    )


def test_the_bound_sentence_names_bound_steps_and_says_when_there_are_none():
    some = capacity.steps(frame(step_rows("a", 1, [(0.1, *HELD), (1.3, 1.0, 1.0, "bound")])))
    none = capacity.steps(frame(step_rows("a", 1, [(0.1, *HELD), (1.3, *HELD)])))
    assert capacity.bound_sentence(some).startswith("1 of 2 steps are marked bound")
    assert "a at 1,300 req/s (repeat 1)" in capacity.bound_sentence(some)
    assert "none is marked bound" in capacity.bound_sentence(none)


def test_the_floor_sentence_appears_only_with_a_floor():
    ends = [(0.1, *HELD), (0.5, 1.0, 50.0, "ok")]
    assert (
        capacity.floor_sentence(
            capacity.ranking(capacity.knees(capacity.steps(frame(step_rows("a", 1, ends)))))
        )
        == ""
    )
    held = [(0.1, *HELD), (0.5, *HELD)]
    text = capacity.floor_sentence(
        capacity.ranking(capacity.knees(capacity.steps(frame(step_rows("a", 1, held)))))
    )
    assert text.startswith("'≥': the knee of a is a lower bound")


def test_server_cpu_per_call_is_taken_at_the_knee_step():
    # server_cpu_us_per_call is 100 x repeat in the constructed rows: median of 100 and 200.
    table = capacity.ranking(capacity.knees(capacity.steps(two_servers(0.9, 0.3))))
    assert table.iloc[0]["cpu"].median == pytest.approx(150.0)


# --- the fixture run (a real smoke run) ----------------------------------------------------


@pytest.fixture(scope="module")
def fixture_steps() -> pd.DataFrame:
    return capacity.steps(frames.read_run(FIXTURE))


def test_every_fixture_step_recorded_the_rate_it_was_offered(fixture_steps):
    assert not fixture_steps.empty
    for row in fixture_steps.itertuples(index=False):
        assert row.offered_rps == open_loop_rate(row.reference_rps, row.fraction)
        assert row.duration_s >= 1


def test_the_fixture_gives_a_knee_or_says_why_not_for_every_server(fixture_steps):
    knee = capacity.knees(fixture_steps)
    assert set(knee["implementation"]) == set(fixture_steps["implementation"])
    assert knee["why"].str.len().gt(0).all()
    assert not math.isnan(knee["slo_ms"].sum())


def test_the_index_lists_the_ranking_for_a_capacity_run_and_nothing_otherwise():
    assert "Capacity: sustainable req/s" in capacity.index_html(str(FIXTURE))
    assert capacity.index_html(str(REPO / "tests" / "data" / "runs" / "hello_fixture")) == ""


def write_ghz(folder: Path, calls: int) -> None:
    """A ghz.json.gz whose details list `calls` successful calls of 1..calls microseconds."""
    folder.mkdir(parents=True)
    details = [{"latency": 1000 * (i + 1), "status": "OK"} for i in range(calls)]
    with gzip.open(folder / "ghz.json.gz", "wt") as out:
        json.dump({"details": details + [{"latency": 1, "status": "Unavailable"}]}, out)


def test_p999_is_shown_where_the_step_recorded_enough_calls_and_not_elsewhere(tmp_path):
    enough, few = stats.samples_needed(capacity.P999), stats.samples_needed(0.99)
    plan = [(0.1, *HELD), (0.5, *HELD)]
    rows = capacity.steps(frame(step_rows("a", 1, plan)))
    for cell_id, calls in zip(rows["cell_id"], (few, enough), strict=True):
        write_ghz(tmp_path / "capacity" / cell_id, calls)
    shown = capacity.with_p999(rows, tmp_path)
    assert math.isnan(shown["latency_p99.9"].iloc[0])
    # The failed call is not a latency: p99.9 of 1..enough us is just under enough us.
    assert shown["latency_p99.9"].iloc[1] == pytest.approx(enough * 0.999 / 1000, rel=1e-3)
    assert list(shown["p999_samples"]) == [few, enough]
    assert capacity.p999_sentence(shown).startswith("p99.9 is shown for 1 of 2 steps")
    # step_rows' steps make 2 s x the offered rate of calls: fewer than p99.9 needs here.
    assert capacity.p999_sentence(shown).endswith(
        f"Of the others, 1 made fewer calls (as few as {int(rows['count'].iloc[0]):,})."
    )
    # A step that made enough calls but whose raw file kept too few is told apart.
    busy = shown.assign(count=float(enough))
    assert (
        f"1 made that many calls but kept fewer successful per-call latencies in their raw "
        f"file, a thinned sample (as few as {few:,})" in capacity.p999_sentence(busy)
    )
    both = capacity.with_p999(rows.iloc[1:], tmp_path)
    assert capacity.p999_sentence(both).startswith("p99.9 is shown for every step")
    assert "p99_9_ms" in capacity.step_table(shown).columns
    # Where no step recorded enough calls the column is left out, not shown empty.
    assert "p99_9_ms" not in capacity.step_table(shown.iloc[:1]).columns
    assert capacity.p999_sentence(rows.iloc[:0]) == "No step was measured."


def test_the_knee_star_sits_on_the_slo_at_the_median_knee_and_not_without_one():
    knee = capacity.knees(capacity.steps(two_servers(0.9, 0.3)))
    assert capacity.knee_point(knee, "fast") == (900.0, KNOBS["slo_ms"])
    none = capacity.knees(capacity.steps(frame(step_rows("a", 1, [(0.1, 1.0, 50.0, "ok")]))))
    assert capacity.knee_point(none, "a") is None


def test_a_bound_probe_is_named_and_no_sentence_without_one():
    cells = pd.DataFrame(
        {
            "scenario": ["probe", "probe", "step"],
            "implementation": ["go", "grpc_aio", "grpc_aio"],
            "status": ["bound", "ok", "bound"],
        }
    )
    sentence = capacity.probe_sentence(cells)
    assert sentence.startswith("The closed-loop probe of go was bound")
    assert "grpc_aio" not in sentence
    assert capacity.probe_sentence(cells.assign(status="ok")) == ""
