"""perflab ab: the paired ratio and its interval (perflab.analysis.ab), arms laid over a
profile (perflab.host.ab), and refusals before anything runs (perflab.cli)."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest
from scipy import stats

from perflab.analysis.ab import (
    NO_CHANGE_BAND,
    PairedRatio,
    SpreadRatio,
    ab_summary,
    ab_table,
    paired_ratio,
    spread_ratio,
)
from perflab.analysis.simulation import row, write_cells
from perflab.cli import main
from perflab.contract.matrix import MatrixError
from perflab.host.ab import arm_cells, base_id, merged
from perflab.host.impls import discover
from perflab.studies import get_study
from tests.conftest import REPO, study_vars

KNOWN = set(discover(REPO / "servers"))


def test_the_ratio_is_the_geometric_mean_of_the_pairs_with_a_t_interval_on_the_logs():
    a, b = [100.0, 200.0, 50.0, 80.0], [110.0, 230.0, 52.0, 80.0]
    logs = [math.log(y / x) for x, y in zip(a, b, strict=True)]
    half = stats.t.ppf(0.95, 3) * statistics.stdev(logs) / 2
    found = paired_ratio(a, b)
    assert found.pairs == 4
    assert found.ratio == pytest.approx(math.exp(statistics.mean(logs)))
    assert (found.low, found.high) == pytest.approx(
        (math.exp(statistics.mean(logs) - half), math.exp(statistics.mean(logs) + half))
    )
    # The arms' scales cancel within a pair: 100x between pairs changes nothing.
    scaled = paired_ratio(
        [x * 100 if i % 2 else x for i, x in enumerate(a)],
        [y * 100 if i % 2 else y for i, y in enumerate(b)],
    )
    assert scaled == pytest.approx(found)


@pytest.mark.parametrize(
    ("low", "high", "reading"),
    [
        (0.95, 1.05, "no change beyond"),
        (0.80, 0.95, "changed"),
        (1.02, 1.30, "changed"),
        (0.85, 1.05, "undecided: more pairs"),
        (0.95, 1.15, "undecided: more pairs"),
    ],
)
def test_each_reading_comes_from_where_the_interval_lies(low, high, reading):
    assert PairedRatio(8, math.sqrt(low * high), low, high).verdict().startswith(reading)
    assert pytest.approx((1 / 1.1, 1.1)) == NO_CHANGE_BAND


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, 2.0], [1.0], "unpaired"),
        ([1.0], [1.0], "at least two pairs"),
        ([1.0, 0.0], [1.0, 1.0], "positive"),
    ],
)
def test_a_ratio_it_cannot_compute_is_refused(a, b, message):
    with pytest.raises(ValueError, match=message):
        paired_ratio(a, b)


def test_the_table_names_units_and_the_reading():
    table = ab_table(
        [("go-steady-c10", [16000.0, 17000.0, 16500.0], [16100.0, 17100.0, 16400.0])], "req/s"
    )
    assert "median a, req/s" in table and "90% paired t interval" in table
    assert "| go-steady-c10 | 3 | 16,500 | 16,400 |" in table
    assert "no change beyond" in table


def test_the_spread_ratio_is_the_sd_of_the_logs_with_an_f_interval():
    a = [1.0, 2.0, 0.5, 1.5, 0.8, 1.2]
    b = [1.0, 1.1, 0.95, 1.05, 0.9, 1.02]
    found = spread_ratio(a, b)
    sd_a = statistics.stdev(math.log(x) for x in a)
    sd_b = statistics.stdev(math.log(y) for y in b)
    assert (found.sd_a, found.sd_b) == pytest.approx((sd_a, sd_b))
    # By hand: (sd_b / sd_a)^2 divided by F's 95th and 5th percentiles at (5, 5) df.
    squared = (sd_b / sd_a) ** 2
    assert found.low == pytest.approx(math.sqrt(squared / stats.f.ppf(0.95, 5, 5)))
    assert found.high == pytest.approx(math.sqrt(squared / stats.f.ppf(0.05, 5, 5)))
    assert found.verdict() == "less noise"
    # The arms swapped: the same interval, inverted.
    swapped = spread_ratio(b, a)
    assert (swapped.low, swapped.high) == pytest.approx((1 / found.high, 1 / found.low))
    assert swapped.verdict() == "more noise"
    # A scale common to one arm changes no spread of its logs.
    scaled = spread_ratio([x * 7 for x in a], b)
    assert (scaled.sd_a, scaled.low, scaled.high) == pytest.approx((sd_a, found.low, found.high))
    assert spread_ratio([1.0, 1.0], [1.0, 2.0]) is None


def spread_coverage(shared: float, sd_a: float, sd_b: float, trials: int = 2000) -> float:
    """The share of simulated A/Bs (10 pairs) whose F interval holds the true sd b / sd a:
    each pair's two cells share a drift of SD `shared` on the log scale, then each arm adds
    its own noise."""
    rng = random.Random(20261128)
    truth = math.sqrt((shared**2 + sd_b**2) / (shared**2 + sd_a**2))
    held = 0
    for _ in range(trials):
        drifts = [rng.gauss(0, shared) for _ in range(10)]
        a = [math.exp(d + rng.gauss(0, sd_a)) for d in drifts]
        b = [math.exp(d + rng.gauss(0, sd_b)) for d in drifts]
        found = spread_ratio(a, b)
        held += found.low <= truth <= found.high
    return held / trials


def test_the_spread_interval_covers_90pct_and_more_where_the_arms_share_drift():
    # Monte Carlo error of a 90% share over 2000 trials: 0.67%; 3 of them allowed.
    error = 3 * math.sqrt(0.9 * 0.1 / 2000)
    # Independent arms: the F interval's own coverage, equal spreads or halved.
    assert abs(spread_coverage(0.0, 0.2, 0.2) - 0.90) < error
    assert abs(spread_coverage(0.0, 0.2, 0.1) - 0.90) < error
    # A drift both arms share makes their spreads alike: the interval covers more, as the
    # module says, never less.
    assert spread_coverage(0.2, 0.2, 0.1) > 0.90 + error
    assert spread_coverage(0.3, 0.1, 0.1) > 0.90 + error


@pytest.mark.parametrize(
    ("low", "high", "reading"),
    [(0.2, 0.9, "less noise"), (1.1, 3.0, "more noise"), (0.5, 1.5, "noise alike")],
)
def test_each_spread_reading_comes_from_where_its_interval_lies(low, high, reading):
    assert SpreadRatio(1.0, math.sqrt(low * high), low, high).verdict() == reading


def test_the_table_shows_each_arms_spread_and_their_ratio():
    table = ab_table([("go-none-1gib", [1.0, 2.0, 0.5, 1.5], [1.0, 1.1, 0.95, 1.05])], "GiB/s")
    assert "log sd a" in table and "sd b / a, 90% F interval" in table
    assert "less noise" in table
    flat = ab_table([("flat", [1.0, 1.0, 1.0], [1.0, 1.1, 1.2])], "GiB/s")
    assert "an arm does not vary" in flat


def test_overrides_merge_into_nested_mappings_and_replace_the_rest():
    profile = {"latency_overrides": {"far": {"warmup_s": 1, "repeats": 3}}, "concurrency": [2]}
    over = {"latency_overrides": {"far": {"warmup_s": 0.5}}, "concurrency": [10]}
    assert merged(profile, over) == {
        "latency_overrides": {"far": {"warmup_s": 0.5, "repeats": 3}},
        "concurrency": [10],
    }
    assert profile["latency_overrides"]["far"]["warmup_s"] == 1  # the profile is not changed


def test_each_arm_expands_the_profile_with_its_overrides_into_first_round_cells():
    config, profiles = study_vars("hello")
    study = get_study("hello")
    cells = {
        arm: arm_cells(study, config, profiles, "quick", over, KNOWN, "ab-test")
        for arm, over in (("a", {}), ("b", {"warmup_s": 1.0}))
    }
    assert set(cells["a"]) == set(cells["b"])
    assert all(cell.repeat == 1 and "aa" not in cell.params for cell in cells["a"].values())
    steady = cells["a"]["go-steady-c10"]
    assert base_id(steady) == "go-steady-c10"
    assert steady.load.warmup_s == config["warmup_s"]
    assert cells["b"]["go-steady-c10"].load.warmup_s == 1.0
    with pytest.raises(MatrixError, match="warmup_z"):
        arm_cells(study, config, profiles, "quick", {"warmup_z": 1}, KNOWN, "ab-test")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--b", "{warmup_z: 1}", "--cell", "go-steady-c10"], "unknown key(s) ['warmup_z']"),
        (["--b", "[1, 2]", "--cell", "go-steady-c10"], "--b: expected a mapping"),
        (["--b", "{warmup_s: 1}", "--cell", "go-steady-c99"], "--cell go-steady-c99"),
        (["--b", "{warmup_s: 1}", "--cell", "go-steady-c10", "--pairs", "1"], "at least 2"),
    ],
)
def test_a_bad_ab_is_refused_before_any_cell_runs(argv, said, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    runs = tmp_path / "runs"
    code = main(["ab", "--study", "hello", "--metric", "rps", "--runs", str(runs), *argv])
    assert code == 2
    assert said in capsys.readouterr().err
    assert not runs.exists()


@pytest.mark.live
def test_an_ab_runs_its_pairs_on_real_servers_and_writes_every_value(
    host_paths, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO)
    # A server far below ghz's ceiling on this machine (about 5 000 req/s against the
    # reference's 23 700), so no cell reads "bound" and each status says it ran.
    out = tmp_path / "ab.json"
    code = main(
        [
            "ab", "--home", str(host_paths.home), "--study", "hello", "--profile", "smoke",
            "--b", "{warmup_s: 0.25}", "--cell", "grpcio_sync_w10-steady-c10", "--pairs", "2",
            "--metric", "rps", "--runs", str(tmp_path / "runs"), "--out", str(out),
        ]
    )  # fmt: skip
    said = capsys.readouterr().out
    assert code == 0, said
    found = json.loads(out.read_text())
    assert found["arms"] == {"a": {}, "b": {"warmup_s": 0.25}}
    (entry,) = found["configurations"]
    assert entry["statuses"] == {"a": ["ok", "ok"], "b": ["ok", "ok"]}
    assert all(value > 0 for value in entry["a"] + entry["b"])
    # Pair 1 runs a first, pair 2 b first; each cell its own folder in one A/B run.
    assert "[1/4] grpcio_sync_w10-steady-c10 pair 1 arm a: ok" in said
    assert "[3/4] grpcio_sync_w10-steady-c10 pair 2 arm b: ok" in said
    cells = sorted(p.name for p in (tmp_path / "runs" / found["run_id"] / "hello").iterdir())
    assert cells == [f"grpcio_sync_w10-steady-c10-p{p}-{arm}" for p in (1, 2) for arm in ("a", "b")]
    ratio = paired_ratio(entry["a"], entry["b"])
    assert f"| {ratio.ratio:.3f} | [{ratio.low:.3f}, {ratio.high:.3f}] |" in said
    assert found["unit"] == "req/s"
    assert found["code_revisions"] and "unknown" not in found["code_revisions"]


def test_a_pair_with_a_failed_cell_is_dropped_and_counted(tmp_path):
    rates = {"a": [100.0, 110.0, 90.0], "b": [105.0, 0.0, 95.0]}
    rows = [
        {**row("ab", arm, 10, pair, "rps", value), "cell_id": f"x-p{pair}-{arm}", "unit": "req/s"}
        for arm, values in rates.items()
        for pair, value in enumerate(values, start=1)
    ]
    write_cells(rows, tmp_path)
    failed = tmp_path / "ab" / "x-p2-b" / "cell.json"
    failed.write_text(failed.read_text().replace('"status": "ok"', '"status": "failed"'))
    folders = {"x": {arm: [tmp_path / "ab" / f"x-p{p}-{arm}" for p in (1, 2, 3)] for arm in "ab"}}

    summary = ab_summary(folders, "rps", 3)

    (entry,) = summary.configurations
    assert entry["statuses"] == {"a": ["ok"] * 3, "b": ["ok", "failed", "ok"]}
    assert entry["a"] == rates["a"] and entry["b"] == [105.0, None, 95.0]
    assert entry["pairs_dropped"] == 1
    assert summary.rows == [("x", [100.0, 90.0], [105.0, 95.0])]
    assert summary.unit == "req/s" and summary.complete()
    assert "x: 1 of 3 pairs dropped" in summary.text()
    assert "| x | 2 | 95 | 100 |" in summary.text()
