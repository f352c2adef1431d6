"""Capacity: its matrix in every profile, the generator's options, and its analysis on
constructed searches (each sentence both ways) and on the fixture runs (a real run of the
generator, and one of the old ghz ladder)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from perflab.analysis import frames, stats
from perflab.analysis.run import read as read_folder
from perflab.contract.cell import LoadSpec
from perflab.contract.matrix import HELLO_RPC, MatrixError, expand
from perflab.contract.parsers import MalformedRawFile
from perflab.contract.runid import RUN_PROFILES as PROFILES
from perflab.host.ghz import SCHEDULE_TOLERANCE, ghz_argv, open_loop_rate, schedule_shortfall
from perflab.host.impls import command_argv, discover
from perflab.studies import get_study
from perflab.studies.capacity import analysis as capacity
from perflab.studies.capacity.matrix import (
    GENERATOR,
    PREFIX,
    knee_seconds,
    read,
    search_rates,
    search_seconds,
)
from tests.conftest import REPO, study_vars

FIXTURE = REPO / "tests" / "data" / "runs" / "capacity_fixture"
LADDER = REPO / "tests" / "data" / "runs" / "capacity_ladder_fixture"
KNOWN = set(discover(REPO / "servers"))


def cells(profile: str, **override: object) -> list:
    matrix, profiles = study_vars("capacity")
    return expand("r", get_study("capacity"), {**matrix, **override}, profiles, profile, KNOWN)


# --- matrix ----------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_runs_one_search_per_server_and_round_with_the_generator(profile):
    run = [c for c in cells(profile) if "aa" not in c.params]
    matrix, _ = study_vars("capacity")
    assert run and all(c.scenario == "search" and c.load.client_impl == GENERATOR for c in run)
    m = read({**matrix, **study_vars("capacity")[1].get(profile, {})}, KNOWN)
    rounds = {c.repeat for c in run}
    assert rounds == set(range(1, m.searches + 1))
    for name in m.run_implementations:
        mine = sorted(c.repeat for c in run if c.implementation == name)
        assert mine == ([1] if name in m.searched_once else sorted(rounds)), name
    for c in run:
        # Every option is one the generator takes (impl.toml), and the params record them.
        argv = command_argv(
            discover(REPO / "servers")[GENERATOR],
            HostPathsStub(),
            c.load.client_options,
            target="t",
            out="o",
        )
        assert argv[argv.index("--mode") + 1] == "search"
        assert c.params == c.load.client_options


class HostPathsStub:
    home = python = bin = gen = src = Path("/x")


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_steps_long_enough_for_their_p99_and_repeats_each_rate_thrice(profile):
    # min_calls sizes a step; the percentile rule (stats.samples_needed) says what it needs.
    for c in cells(profile):
        assert c.load.client_options["min_calls"] >= stats.samples_needed(0.99)
        assert c.load.client_options["repeats"] >= 3


def test_the_quick_profile_measures_capacity_within_eight_minutes():
    # Each Python server's knee anywhere above 2 up to 16 times the first rate, where 9 rates
    # bracket it within 10%; cpp's and go's search ends (the generator's limit) anywhere
    # above that up to the search's highest. Each server's start and stop, about a second,
    # on top of its search.
    matrix, profiles = study_vars("capacity")
    m = read({**matrix, **profiles.get("quick", {})}, KNOWN)

    def worst(low: float, high: float) -> float:
        knees = [low * 1.01**i for i in range(1, int(math.log(high / low, 1.01)) + 1)]
        return max(knee_seconds(m, k) for k in knees) + 1

    python = [n for n in m.run_implementations if n not in m.searched_once]
    assert m.searches >= 3 and python
    total = len(python) * m.searches * worst(2 * m.search_start_rps, 16 * m.search_start_rps)
    total += len(m.searched_once) * worst(2 * m.search_start_rps, 2 * m.search_max_rps)
    assert total <= 8 * 60


@pytest.mark.parametrize("knee", [1001, 1700, 2100, 3800, 5000, 7999, 10**9])
def test_a_replayed_search_brackets_its_knee_within_the_width(knee):
    matrix, profiles = study_vars("capacity")
    m = read({**matrix, **profiles.get("quick", {})}, KNOWN)
    rates = search_rates(m, knee)
    assert rates[0] == m.search_start_rps and len(rates) <= m.max_rates
    held, failed = [r for r in rates if r < knee], [r for r in rates if r >= knee]
    if knee > m.search_max_rps:
        # Every rate held: the search stops at its highest.
        assert not failed and max(held) * m.search_factor > m.search_max_rps
    else:
        # The other way: a knee inside the range ends with a bracket within the width.
        assert max(held) < knee <= min(failed) <= (1 + m.bracket) * max(held)


def test_a_search_seconds_replay_counts_each_rate_tried():
    matrix, _ = study_vars("capacity")
    small = {"warmup_s": 1, "repeats": 3, "settle_s": 0.5, "rest_s": 0.5, "step_s": 1}
    m = read({**matrix, **small, "min_calls": 1000, "search_start_rps": 500}, KNOWN)
    # 500 held, 1000 failed, then 750, 625, ... bisected: each 3 x (0.5 + 1000 / r + 0.5).
    rates = search_rates(m, 700)
    assert rates[:3] == [500, 1000, 750]
    expected = 1 + sum(3 * (1 + max(1, 1000 / r)) for r in rates)
    assert knee_seconds(m, 700) == pytest.approx(expected)


def test_search_seconds_counts_every_step_of_every_rate():
    matrix, _ = study_vars("capacity")
    small = {"warmup_s": 1, "repeats": 3, "settle_s": 0.5, "rest_s": 0.5, "step_s": 1}
    m = read({**matrix, **small, "min_calls": 1000, "search_start_rps": 500, "max_rates": 2}, KNOWN)
    # First rate: 3 x (0.5 + 1000 / 500 + 0.5); the second at 750: 3 x (0.5 + 1.33 + 0.5).
    assert search_seconds(m) == pytest.approx(1 + 9 + 3 * (1 + 1000 / 750))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("repeats", 2),
        ("bracket", 1.5),
        ("slo_ms", 0),
        ("arrival", "bursty"),
        ("search_factor", 1),
        ("search_start_rps", 10**6),
        ("min_calls", 0),
        ("run_implementations", ["nope"]),
        ("searched_once", ["nope"]),
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


# --- analysis on constructed searches ----------------------------------------------------


def step(rate: float, repeat: int, p99: float, held: bool = True, bound: bool = False) -> dict:
    """One step of a generator report, 1 s measured from t = 10 s + 2 s x its index."""
    return {
        "offered_rps": rate,
        "repeat": repeat,
        "sent_rps": rate,
        "achieved_rps": rate,
        "scheduled": int(rate),
        "ok": int(rate),
        "failed": 0,
        "max_lag_ms": 50.0 if bound else 1.0,
        "generator_cpu_fraction": 0.2,
        "generator_bound": bound,
        "held": held and not bound,
        "why": "" if held else "p99 above the SLO",
        "measure_s": 1.0,
        "latency_ms": {
            "p50": p99 / 4,
            "p90": p99 / 2,
            "p99": p99,
            "p999": p99 * 2,
            "max": p99 * 3,
            "n": int(rate),
        },
        "latency_from_send_ms": {"p99": p99 / 2},
        "windows": [
            {
                "t": 0.1 * i,
                "settle": i < 3,
                "scheduled": rate / 10,
                "sent": rate / 10,
                "ok": rate / 10,
                "failed": 0,
                "p99_ms": p99,
                "lag_ms": 1.0,
            }
            for i in range(13)
        ],
        "errors": {},
    }


def search(
    impl: str,
    knee: tuple[float, float, str],
    steps: list[dict],
    n: int = 1,
    cores_per_call: float = 1e-4,
) -> capacity.Search:
    """A Search as capacity.searches reads it; server CPU: cores_per_call x achieved (s/s)."""
    report = {
        "config": {"slo_ms": 10, "search_start_rps": 500},
        "knee": {"low_rps": knee[0], "high_rps": knee[1], "limit": knee[2], "why": "w"},
        "steps": [],
    }
    for i, s in enumerate(steps):
        s = dict(s, measure_start_unix=10.0 + 2 * i, measure_end_unix=11.0 + 2 * i)
        report["steps"].append(s)
    cpu_at = lambda t: 0.0  # noqa: E731 - replaced below through the rows
    rows = capacity.step_rows(report, cpu_at, Path("x"))
    if not rows.empty:
        rows["server_cores"] = cores_per_call * rows["achieved_rps"]
        rows["server_cpu_us_per_call"] = 1e6 * cores_per_call
    rows.insert(0, "search", n)
    rows.insert(0, "implementation", impl)
    return capacity.Search(impl, n, report, 1, rows)


def rate_steps(rate: float, p99: float, held: bool = True, bound: bool = False) -> list[dict]:
    return [step(rate, r, p99, held, bound) for r in (1, 2, 3)]


def test_the_server_cpu_of_a_step_is_the_difference_over_its_measured_window():
    samples = [
        {"role": "server", "pid": "1", "t": str(t), "cpu_seconds": str(0.5 * t)}
        for t in (0.0, 1.0, 2.0, 3.0)
    ] + [{"role": "client", "pid": "2", "t": "1.0", "cpu_seconds": "9"}]
    cpu_at = capacity.server_cpu_at(samples, start_unix=100.0)
    assert cpu_at(102.5) - cpu_at(101.0) == pytest.approx(0.75)
    report = {"steps": [dict(step(1000, 1, 2.0), measure_start_unix=101.0, measure_end_unix=102.0)]}
    row = capacity.step_rows(report, cpu_at, Path("x")).iloc[0]
    assert row["server_cores"] == pytest.approx(0.5)
    assert row["server_cpu_us_per_call"] == pytest.approx(500.0)


def test_a_report_without_steps_is_refused_naming_the_file():
    with pytest.raises(MalformedRawFile, match="c/client.json"):
        capacity.step_rows({"steps": [{"offered_rps": 1}]}, lambda t: 0.0, Path("c"))


def test_brackets_read_as_the_limit_says():
    found = [
        search("py", (2000, 2200, "server"), rate_steps(2000, 3)),
        search("go", (16000, 0, "generator"), rate_steps(16000, 2)),
        search("slow", (0, 500, "unplaced"), rate_steps(500, 30, held=False)),
        search("all", (8000, 0, "search_max"), rate_steps(8000, 2)),
    ]
    texts = {b.implementation: b.text() for b in capacity.brackets(found)}
    assert texts == {
        "py": "[2,000, 2,200)",
        "go": "at least 16,000 (generator limit on this machine)",
        "slow": "below 500 (no rate held)",
        "all": "at least 8,000 (every rate up to the search's highest held)",
    }


def test_several_searches_give_the_union_of_their_brackets():
    found = [
        search("py", (2000, 2200, "server"), []),
        search("py", (2100, 2300, "server"), [], n=2),
    ]
    (b,) = capacity.brackets(found)
    assert (b.low, b.high, b.searches) == (2000, 2300, 2)


def test_a_server_one_search_of_which_the_generator_stopped_says_how_many():
    # grpc_aio on 20261127T111956Z-quick: two searches held 2 500 and 2 750 req/s, one hit
    # the generator's limit at its first rate; the row read "generator limit at the first
    # rate" beside the held rates.
    found = [
        search("aio", (2500, 2750, "server"), [], n=1),
        search("aio", (2750, 3000, "server"), [], n=2),
        search("aio", (0, 0, "generator"), [], n=3),
    ]
    (b,) = capacity.brackets(found)
    assert b.text() == "not placed (generator limit at the first rate in 1 of 3 searches)"
    (alone,) = capacity.brackets(found[2:])
    assert alone.text() == "not placed (generator limit at the first rate)"


def test_a_knee_is_placed_only_by_enough_searches_each_within_the_width_both_ways():
    three = [search("py", (2000, 2150, "server"), [], n=i) for i in (1, 2, 3)]
    (b,) = capacity.brackets(three)
    assert b.placed(0.1, 3) and b.each_text() == "[2,000, 2,150); [2,000, 2,150); [2,000, 2,150)"
    sentence = capacity.placed_sentence([b], 0.1)
    assert sentence.startswith("Knee placed within 10% by at least 3 searches each: **py**")
    assert "Not placed" not in sentence
    # The other way: one search wider than 10%, too few searches, a generator limit.
    wide = [*three[:2], search("py", (2000, 2400, "server"), [], n=3)]
    (b,) = capacity.brackets(wide)
    assert not b.placed(0.1, 3) and (b.low, b.high) == (2000, 2400)
    assert "py (2 of 3 searches within 10%)" in capacity.placed_sentence([b], 0.1)
    (b,) = capacity.brackets(three[:2])
    assert "py (2 of 2 searches within 10%)" in capacity.placed_sentence([b], 0.1)
    (b,) = capacity.brackets([search("go", (16000, 0, "generator"), [])])
    assert not b.placed(0.1, 1) and b.each_text() == "–"
    assert "go (at least 16,000 (generator limit" in capacity.placed_sentence([b], 0.1)


def test_overlapping_searches_keep_two_servers_unranked_though_each_search_differs():
    # Each search of a lies above b's, but their unions overlap: not ranked.
    found = [
        search("a", (2000, 2200, "server"), [], n=1),
        search("a", (1500, 1650, "server"), [], n=2),
        search("b", (1800, 1950, "server"), [], n=1),
        search("b", (1400, 1500, "server"), [], n=2),
    ]
    ranks = {
        row.server: rank
        for rank, row in capacity.bracket_table(capacity.brackets(found)).iterrows()
    }
    assert ranks == {"a": "1-2", "b": "1-2"}


def test_servers_rank_only_where_brackets_do_not_overlap_both_ways():
    apart = [search("a", (3000, 3300, "server"), []), search("b", (2000, 2200, "server"), [])]
    table = capacity.bracket_table(capacity.brackets(apart))
    assert list(table["server"]) == ["a", "b"] and list(table.index) == ["1", "2"]
    assert capacity.ranking_sentence(capacity.brackets(apart)).startswith(
        "Ranked only where brackets do not overlap: **a** above b."
    )
    overlapping = [search("a", (2000, 2300, "server"), []), search("b", (2100, 2200, "server"), [])]
    table = capacity.bracket_table(capacity.brackets(overlapping))
    assert list(table.index) == ["1-2", "1-2"]
    assert "overlap: this run cannot rank them" in capacity.ranking_sentence(
        capacity.brackets(overlapping)
    )
    # Lower bounds above the closed brackets, tied with each other.
    mixed = [
        *apart,
        search("go", (16000, 0, "generator"), []),
        search("cpp", (8000, 0, "generator"), []),
    ]
    ranks = {
        row.server: rank
        for rank, row in capacity.bracket_table(capacity.brackets(mixed)).iterrows()
    }
    assert ranks == {"go": "1-2", "cpp": "1-2", "a": "3", "b": "4"}
    sentence = capacity.ranking_sentence(capacity.brackets(mixed))
    assert "**go** above a, b; **cpp** above a, b; **a** above b." in sentence


def test_an_open_bracket_below_a_closed_one_is_not_ranked_above_it():
    # The reference run's case: grpc_aio "at least 2,000" (generator limit) beside
    # grpcio_sync_w10 [3,750, 4,000): the open bracket may reach past it, so neither ranks
    # above the other; both rank above a server wholly below 2,000.
    found = capacity.brackets(
        [
            search("aio", (2000, 0, "generator"), []),
            search("w10", (3750, 4000, "server"), []),
            search("slow", (1625, 1750, "server"), []),
        ]
    )
    ranks = {row.server: rank for rank, row in capacity.bracket_table(found).iterrows()}
    assert ranks == {"aio": "1-2", "w10": "1-2", "slow": "3"}
    sentence = capacity.ranking_sentence(found)
    assert "**aio** above slow" in sentence and "**w10** above slow" in sentence
    assert "above w10" not in sentence and "above aio" not in sentence


def test_the_slo_sentence_says_whether_the_slo_sits_clearly_above_the_floor_both_ways():
    assert "sits 10.0x above it" in capacity.slo_sentence(10, 1.0, 500)
    assert "only 2.0x the floor" in capacity.slo_sentence(10, 5.0, 500)
    assert "floor was not measured" in capacity.slo_sentence(10, math.nan, 500)


def test_the_floor_is_the_cpp_servers_p99_at_the_common_rate():
    steps = capacity.all_steps(
        [search("cpp", (0, 0, "generator"), rate_steps(500, 0.8) + rate_steps(1000, 9))]
    )
    assert capacity.floor_ms(steps, 500) == pytest.approx(0.8)
    assert math.isnan(capacity.floor_ms(steps.assign(implementation="go"), 500))


def test_the_bound_sentence_names_generator_limited_searches_and_says_when_none_were():
    server = [search("py", (2000, 2200, "server"), rate_steps(2000, 3))]
    text = capacity.bound_sentence(capacity.brackets(server), capacity.all_steps(server))
    assert text.startswith("The generator kept its schedule") and "0 of 3 steps" in text
    bound = [*server, search("go", (16000, 0, "generator"), rate_steps(32000, 2, bound=True))]
    text = capacity.bound_sentence(capacity.brackets(bound), capacity.all_steps(bound))
    assert text.startswith("The searches of go ended") and "3 of 6 steps" in text
    assert "lower bound: go at least 16,000 (generator limit on this machine) req/s" in text


def test_cpu_per_call_is_compared_only_among_servers_that_held_the_common_rate():
    found = [
        search("cheap", (0, 0, "server"), rate_steps(500, 1), cores_per_call=2e-5),
        search("dear", (0, 0, "server"), rate_steps(500, 1), cores_per_call=1e-4),
        search("slow", (0, 0, "server"), rate_steps(500, 30, held=False), cores_per_call=5e-5),
    ]
    common = capacity.at_common_rate(capacity.all_steps(found), 500)
    text = capacity.cpu_sentence(common, 500)
    assert "**cheap** costs its server the least CPU per call, 20.0 µs" in text
    assert "**dear** the most, 100.0 µs (5.0x)" in text and "slow did not hold that rate" in text
    none = capacity.at_common_rate(capacity.all_steps(found[2:]), 500)
    assert "No server held the common rate" in capacity.cpu_sentence(none, 500)


def test_per_core_throughput_is_shown_only_at_saturation():
    saturated = search("py", (2000, 2200, "server"), rate_steps(2000, 3), cores_per_call=4.9e-4)
    idle = search("go", (16000, 0, "generator"), rate_steps(16000, 3), cores_per_call=2e-5)
    table = capacity.per_core([saturated, idle], capacity.all_steps([saturated, idle]))
    assert table.loc["py", "req/s per server core"] == round(2000 / 0.98)
    assert table.loc["go", "req/s per server core"] == "– (not saturated)"
    assert table.loc["go", "saturated"] == "no: the generator's limit came first"
    assert table.loc["py", "saturated"] == "yes"
    # A server whose latency ended its search below saturation: not the generator's doing.
    queued = search("py", (2000, 2200, "server"), rate_steps(2000, 3), cores_per_call=4e-4)
    why = capacity.per_core([queued], capacity.all_steps([queued])).loc["py", "saturated"]
    assert why == "no: 80% busy; its latency ended the search first"


def test_what_was_not_measured_lists_generator_limits_missing_floor_and_short_p999():
    found = [search("go", (8000, 0, "generator"), rate_steps(8000, 2))]
    steps = capacity.all_steps(found)
    missing = capacity.not_measured(capacity.brackets(found), steps, math.nan)
    assert any("knee of go" in m for m in missing) and any("floor" in m for m in missing)
    assert any("p99.9" in m for m in missing)
    server = [search("py", (2000, 2200, "server"), rate_steps(20000, 2), cores_per_call=4.9e-5)]
    steps = capacity.all_steps(server)
    cores = capacity.per_core(server, steps)
    assert capacity.not_measured(capacity.brackets(server), steps, 1.0, cores) == []
    idle = capacity.per_core(server, steps.assign(server_cores=0.1))
    assert capacity.not_measured(capacity.brackets(server), steps, 1.0, idle) == [
        "Throughput per server core of py: never saturated."
    ]


def test_p999_is_shown_only_for_steps_with_the_calls_it_needs():
    short = capacity.all_steps([search("py", (0, 0, "server"), rate_steps(2000, 3))])
    assert "p99_9_ms" not in capacity.rate_table(short)
    assert "not shown for 3 of 3 steps" in capacity.p999_sentence(short)
    enough = capacity.all_steps([search("py", (0, 0, "server"), rate_steps(20000, 3))])
    assert capacity.rate_table(enough)["p99_9_ms"].iloc[0] == pytest.approx(6.0)
    assert capacity.p999_sentence(enough).startswith("p99.9 is shown for every step")
    both = capacity.all_steps(
        [search("py", (0, 0, "server"), rate_steps(20000, 3) + rate_steps(2000, 3))]
    )
    shown = capacity.rate_table_shown(both)["p99_9_ms"]
    assert shown.loc[("py", 2000)] == "–" and shown.loc[("py", 20000)] == pytest.approx(6.0)
    assert capacity.rate_table_shown(short).equals(capacity.rate_table(short))


def test_the_series_step_is_the_highest_held_rate_of_a_server_limited_search():
    found = [
        search(
            "py", (2000, 2200, "server"), rate_steps(2000, 3) + rate_steps(2200, 30, held=False)
        ),
        search("go", (16000, 0, "generator"), rate_steps(16000, 2)),
    ]
    shown = capacity.series_step(found)
    assert (shown["implementation"], shown["offered_rps"]) == ("py", 2000)
    # One step that held at a rate whose other two failed is not the rate held.
    lucky = rate_steps(2200, 30, held=False)
    lucky[0] = step(2200, 1, 5, True, False)
    one_of_three = [search("py", (2000, 2200, "server"), rate_steps(2000, 3) + lucky)]
    assert capacity.series_step(one_of_three)["offered_rps"] == 2000
    # Turned around: two of three held, so that rate is held and shown.
    lucky[1] = step(2200, 2, 5, True, False)
    two_of_three = [search("py", (2200, 0, "server"), rate_steps(2000, 3) + lucky)]
    assert capacity.series_step(two_of_three)["offered_rps"] == 2200
    assert (
        capacity.series_step([search("s", (0, 500, "unplaced"), rate_steps(500, 30, held=False))])
        is None
    )


# --- the fixture runs ---------------------------------------------------------------------


def test_the_fixture_run_reads_into_steps_with_server_cpu_and_a_bracket_per_server():
    found = capacity.searches(read_folder(FIXTURE))
    steps = capacity.all_steps(found)
    assert {s.implementation for s in found} == {"cpp", "go", "grpcio_sync_w1"}
    assert not steps.empty and (steps["server_cores"] > 0).all()
    assert all(b.text() for b in capacity.brackets(found))
    shown = capacity.index_html(read_folder(FIXTURE))
    assert "<h2>Capacity: the knee at the SLO</h2>" in shown
    slo = capacity.slo_ms(found)
    assert f"holds with p99 ≤ {slo:g} ms (the SLO)" in shown


def test_an_old_ladder_run_is_named_and_not_analysed():
    cells = frames.read_cells(LADDER)
    assert (
        capacity.searches(read_folder(LADDER)) == []
        and capacity.index_html(read_folder(LADDER)) == ""
    )
    assert "old ghz ladder" in capacity.old_ladder(cells[cells["study"] == "capacity"])
    assert capacity.old_ladder(cells.iloc[0:0]) == ""


# --- the page's figures ---------------------------------------------------------------------


def overlapping_tick_labels(fig) -> list[tuple[str, str, str]]:
    """(axes title, label, label) for every two shown tick labels of one axis whose drawn
    boxes overlap: read from the rendered figure, as a reader sees them."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            shown = [
                (label.get_text(), label.get_window_extent(renderer))
                for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]
                for label in (tick.label1, tick.label2)
                if label.get_visible() and label.get_text() and low <= tick.get_loc() <= high
            ]
            for i, (text, box) in enumerate(shown):
                for other, other_box in shown[i + 1 :]:
                    if box.overlaps(other_box):
                        found.append((ax.get_title(), text, other))
    return found


@pytest.mark.parametrize(
    "rates",
    [
        # Under two decades: matplotlib's default labels 3x10^3 and 4x10^3 side by side.
        (500, 1000, 2000, 3000, 3500, 4000, 5000, 6000),
        (500, 1000, 2000, 2250, 2500, 3000),
        # Under one decade, and over three.
        (3000, 3500, 4000, 5000, 6000),
        (250, 500, 4000, 16000, 64000, 250000),
    ],
)
def test_latency_figure_tick_labels_do_not_overlap(rates):
    import matplotlib.pyplot as plt

    found = [
        search(name, (0, 0, "server"), [s for r in rates for s in rate_steps(r, p99 * r / 500)])
        for name, p99 in (("a", 2.0), ("b", 0.3), ("c", 40.0))
    ]
    fig = capacity.latency_figure(capacity.all_steps(found), 10.0, 2.0)
    try:
        labels = [t.get_text() for t in fig.axes[0].xaxis.get_ticklabels() if t.get_text()]
        assert len(labels) >= 2, labels  # an axis that shows no scale is no fix
        assert overlapping_tick_labels(fig) == []
    finally:
        plt.close(fig)


def test_the_fixture_runs_latency_figure_has_no_overlapping_tick_labels():
    import matplotlib.pyplot as plt

    fig = capacity.latency_figure(
        capacity.all_steps(capacity.searches(read_folder(FIXTURE))), 10.0, 2.0
    )
    try:
        assert overlapping_tick_labels(fig) == []
    finally:
        plt.close(fig)


@pytest.mark.parametrize("held", [True, False])
def test_the_step_series_names_its_units_and_whether_the_step_held(held):
    import matplotlib.pyplot as plt

    found = [search("py", (0, 0, "server"), rate_steps(2000, 3 if held else 30, held=held))]
    shown = capacity.all_steps(found).iloc[0]
    fig = capacity.series_figure(shown)
    try:
        rate_ax, p99_ax = fig.axes
        assert "calls/s" in rate_ax.get_ylabel() and "(ms)" in p99_ax.get_ylabel()
        title = rate_ax.get_title()
        assert (": held," in title) is held and (": not held," in title) is not held
        assert f"p99 of its measured calls {3 if held else 30:.2f} ms" in title
        # Rates drawn from zero: a 1% wobble does not fill the panel.
        assert rate_ax.get_ylim()[0] == 0 and p99_ax.get_ylim()[0] == 0
    finally:
        plt.close(fig)
