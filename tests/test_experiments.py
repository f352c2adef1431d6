"""Experiments a knob's value rests on (data/experiments/): their tables recompute from
their raw figures, and the knob is set to what was tested."""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from tests.conftest import GROUP_VARS, REPO, load_script

WARMUP_AB = REPO / "data" / "experiments" / "20261127-hello-warmup-ab"


def experiment(folder: Path, row: str) -> tuple[dict, list[tuple[str, ...]]]:
    """An experiment's ab.json and its README's table rows matching `row` (a regex)."""
    table = re.findall(f"^{row}$", (folder / "README.md").read_text(), re.MULTILINE)
    return json.loads((folder / "ab.json").read_text()), table


def paired_ratio(long: list[float], short: list[float]) -> tuple[float, float, float]:
    """The geometric mean of short/long over the pairs, with its 90% paired t interval."""
    logs = [math.log(b / a) for a, b in zip(long, short, strict=True)]
    mean = statistics.mean(logs)
    half = stats.t.ppf(0.95, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def test_the_warmup_ab_table_recomputes_from_its_rates():
    found, table = experiment(
        WARMUP_AB, r"\| (\w+) \| (\d+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \|"
    )
    assert len(table) == len(found["configurations"]) == 10
    for row, config in zip(table, found["configurations"], strict=True):
        assert (row[0], int(row[1])) == (config["implementation"], config["concurrency"])
        assert len(config["w1"]) == len(config["w025"]) == found["pairs"]
        computed = paired_ratio(config["w1"], config["w025"])
        assert [f"{value:.3f}" for value in computed] == list(row[2:])
        # What the README concludes from it: every interval holds 1, within 0.94-1.08.
        assert 0.94 <= computed[1] <= 1 <= computed[2] <= 1.08


def test_the_warmup_abs_t_intervals_cover_90pct_under_its_own_pairs_spread():
    """The t interval assumes normal log ratios; check that instead of assuming it. Each
    configuration's log ratios, centred and scaled to unit SD, pooled (80 values with the
    pairs' own skew and tails); 8 drawn with replacement a trial, true mean 0, so the share
    of intervals holding 0 is the coverage the README's 90% really has."""
    found = json.loads((WARMUP_AB / "ab.json").read_text())
    residuals = []
    for config in found["configurations"]:
        logs = np.log(np.array(config["w025"]) / np.array(config["w1"]))
        residuals.extend((logs - logs.mean()) / logs.std(ddof=1))
    pairs, trials = found["pairs"], 20_000
    draws = np.random.default_rng(20261127).choice(residuals, (trials, pairs))
    half = stats.t.ppf(0.95, pairs - 1) * draws.std(axis=1, ddof=1) / math.sqrt(pairs)
    coverage = float(np.mean(np.abs(draws.mean(axis=1)) <= half))
    monte_carlo_error = math.sqrt(coverage * (1 - coverage) / trials)
    assert abs(coverage - 0.90) <= 3 * monte_carlo_error
    assert f"{coverage:.1%}" in (WARMUP_AB / "README.md").read_text()


def test_hellos_warmup_is_the_arm_the_experiment_tested():
    matrix = yaml.safe_load((GROUP_VARS / "hello.yml").read_text())["perflab_matrix_hello"]
    assert matrix["warmup_s"] == 0.25
    assert "20261127-hello-warmup-ab" in (GROUP_VARS / "hello.yml").read_text()


PAYLOAD_AB = REPO / "data" / "experiments" / "20261128-throughput-payload-ab"
GIB = 2**30


def test_the_payload_ab_table_recomputes_from_its_cells():
    found, table = experiment(
        PAYLOAD_AB,
        r"\| (\w+) \| (\d+) GiB \| (\d+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \| ([\d.]+) \| "
        r"([\d.]+) \|",
    )
    assert len(table) == len(found["configurations"]) == 7
    excluding_one = []
    for row, config in zip(table, found["configurations"], strict=True):
        assert (row[0], int(row[1]) * GIB) == (config["implementation"], config["size"])
        assert len(config["made"]) == len(config["kept"]) == int(row[2])
        computed = paired_ratio(config["made"], config["kept"])
        assert [f"{value:.3f}" for value in computed] == list(row[3:6])
        ready = [statistics.median(config["ready_s"][arm]) for arm in ("made", "kept")]
        assert [f"{value:.2f}" for value in ready] == list(row[6:])
        if not computed[1] <= 1 <= computed[2]:
            excluding_one.append((row[0], row[1]))
    # What the README concludes from it.
    assert excluding_one == [("python_aio", "1"), ("go", "10")]


AWS_IO_WARMUP_AB = REPO / "data" / "experiments" / "20261128-aws-io-warmup-ab"


def aws_io_ab_row(found: dict, row: tuple[str, ...], config: dict) -> tuple[tuple, list[float]]:
    """An aws_io A/B's table row against its configuration (its cell, every cell ok, the
    ratio and interval as printed): the ratio and interval, and each arm's median warm-up."""
    assert row[0] == config["cell"]
    assert config["statuses"] == {arm: ["ok"] * found["pairs"] for arm in ("a", "b")}
    computed = paired_ratio(config["a"], config["b"])
    assert [f"{value:.3f}" for value in computed] == list(row[1:4])
    warmups = [
        statistics.median(w["warmup_s"] for w in config["warmup"][arm]) for arm in ("a", "b")
    ]
    return computed, warmups


def test_the_aws_io_warmup_ab_table_recomputes_from_its_cells():
    found, table = experiment(
        AWS_IO_WARMUP_AB,
        r"\| ([\w-]+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \| ([\d.]+) \| ([\d.]+) \|",
    )
    assert len(table) == len(found["configurations"]) == 4
    for row, config in zip(table, found["configurations"], strict=True):
        computed, warmups = aws_io_ab_row(found, row, config)
        assert [f"{value:.2f}" for value in warmups] == list(row[4:])
        # What the README concludes: no change beyond 0.937-1.068, each warm-up shorter.
        assert 0.937 <= round(computed[1], 3) <= 1 <= round(computed[2], 3) <= 1.068
        assert warmups[1] < warmups[0] - 0.5


def test_quicks_far_s3_warmup_is_the_arm_the_experiment_tested():
    found = json.loads((AWS_IO_WARMUP_AB / "ab.json").read_text())
    text = (GROUP_VARS / "aws_io.yml").read_text()
    far = yaml.safe_load(text)["perflab_profiles_aws_io"]["quick"]["latency_overrides"]
    tested = found["arms"]["b"]["latency_overrides"]["seed_far_s3"]
    assert {key: far["seed_far_s3"][key] for key in tested} == tested
    assert "20261128-aws-io-warmup-ab" in text


AWS_IO_NEAR_WARMUP_AB = REPO / "data" / "experiments" / "20261201-aws-io-warmup-near-ab"


def test_the_aws_io_near_warmup_ab_table_recomputes_from_its_cells():
    found, table = experiment(
        AWS_IO_NEAR_WARMUP_AB,
        r"\| ([\w-]+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \| (\d+) \| ([\d.]+) \| ([\d.]+) "
        r"\| (-?[\d.]+) \|",
    )
    assert len(table) == len(found["configurations"]) == 4
    outside = []
    for row, config in zip(table, found["configurations"], strict=True):
        computed, warmups = aws_io_ab_row(found, row, config)
        calls = {w["warmup_calls"] for arm in ("a", "b") for w in config["warmup"][arm]}
        assert calls == {int(row[4])}
        assert [f"{value:.2f}" for value in warmups] == list(row[5:7])
        assert f"{warmups[0] - warmups[1]:.2f}" == row[7]
        if computed[1] < 0.90 or computed[2] > 1.10:
            outside.append(row[0])
    # What the README concludes: grpclib's unary at 50 changed, so the knob does not land.
    changed = next(c for c in found["configurations"] if c["cell"] == outside[0])
    assert paired_ratio(changed["a"], changed["b"])[2] < 1


def test_quicks_far_s3_cells_keep_the_latency_through_their_warmup():
    found = json.loads((AWS_IO_NEAR_WARMUP_AB / "ab.json").read_text())
    assert found["arms"]["b"] == {
        "latency_overrides": {"seed_far_s3": {"latency_after_warmup": True}}
    }
    # The knob did not land: it is a patch beside the A/B, named by no profile.
    assert (AWS_IO_NEAR_WARMUP_AB / "latency-after-warmup.patch").is_file()
    assert "latency_after_warmup" not in (GROUP_VARS / "aws_io.yml").read_text()


CALLS_AB = REPO / "data" / "experiments" / "20261128-throughput-calls-ab"


def test_the_throughput_calls_ab_tables_recompute_from_its_cells():
    found, table = experiment(
        CALLS_AB,
        r"\| ([\w-]+) \| 10 \| [\d.]+ \| [\d.]+ \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \| [^|]+ "
        r"\| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \[([\d.]+), ([\d.]+)\] \| ([a-z ]+) \|",
    )
    seconds = json.loads((CALLS_AB / "cell_seconds.json").read_text())
    costs = re.findall(
        r"^\| ([\w-]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$",
        (CALLS_AB / "README.md").read_text(),
        re.MULTILINE,
    )
    assert len(table) == len(costs) == len(found["configurations"]) == 5
    assert found["arms"] == {"a": {}, "b": {"measured_bytes": 3 * 2**30}}
    worth = []
    for row, cost, config in zip(table, costs, found["configurations"], strict=True):
        assert row[0] == cost[0] == config["cell"]
        assert config["statuses"] == {arm: ["ok"] * found["pairs"] for arm in ("a", "b")}
        ratio = paired_ratio(config["a"], config["b"])
        assert [f"{value:.3f}" for value in ratio] == list(row[1:4])
        sd_a, sd_b = (statistics.stdev(np.log(config[arm])) for arm in ("a", "b"))
        variance = (sd_b / sd_a) ** 2
        n = found["pairs"] - 1
        f_low, f_high = stats.f.ppf(0.95, n, n), stats.f.ppf(0.05, n, n)
        spread = [sd_a, sd_b]
        ends = [math.sqrt(variance), math.sqrt(variance / f_low), math.sqrt(variance / f_high)]
        assert [f"{value:.3f}" for value in spread] == list(row[4:6])
        assert [f"{value:.2f}" for value in ends] == list(row[6:9])
        reading = "less noise" if ends[2] < 1 else "more noise" if ends[1] > 1 else "noise alike"
        assert row[9] == reading
        took = [statistics.median(seconds[config["cell"]][arm]) for arm in ("a", "b")]
        worth.append((1 / variance) / (took[1] / took[0]))
        expected = [*took, took[1] / took[0], variance, worth[-1]]
        assert [f"{value:.2f}" for value in expected] == list(cost[1:])
    # What the README concludes: two configurations less noisy, none louder, no level past
    # its interval, and three calls worth about what the same minutes of rounds buy.
    assert sum(row[9] == "less noise" for row in table) == 2
    assert all(float(row[2]) <= 1 <= float(row[3]) for row in table)
    assert f"{math.exp(statistics.mean(map(math.log, worth))):.2f}" == "0.93"


def test_quicks_throughput_cells_time_the_one_call_the_experiment_kept():
    text = (GROUP_VARS / "throughput.yml").read_text()
    found = yaml.safe_load(text)
    quick = {**found["perflab_matrix_throughput"], **found["perflab_profiles_throughput"]["quick"]}
    assert quick["measured_bytes"] == 0
    assert "20261128-throughput-calls-ab" in text


AA_HISTORY = REPO / "data" / "experiments" / "20261128-aa-drift-history"


def test_the_aa_drift_history_tables_recompute_from_its_series():
    series = json.loads((AA_HISTORY / "aa_series.json").read_text())
    readme = (AA_HISTORY / "README.md").read_text()
    for entry in series:
        logs = entry["log_ratios"]
        t = statistics.mean(logs) / (statistics.stdev(logs) / math.sqrt(len(logs)))
        assert entry["p"] == pytest.approx(2 * stats.t.sf(abs(t), len(logs) - 1))
    shares = re.findall(r"^\| (0\.\d\d) \| (\d+) of (\d+) \| ([\d.]+)% \|", readme, re.MULTILINE)
    assert [level for level, *_ in shares] == ["0.01", "0.05", "0.10", "0.20"]
    for level, below, total, share in shares:
        count = sum(entry["p"] < float(level) for entry in series)
        assert (int(below), int(total)) == (count, len(series))
        assert share == f"{100 * count / len(series):.1f}"
    pooled = re.findall(
        r"^\| (\w+) \| ([^|]+) \| (\w+) \| (\d+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] "
        r"\| ([\d.]+) \|",
        readme,
        re.MULTILINE,
    )
    assert len(pooled) == 17
    for study, kind, metric, runs, drift, low, high, q_p in pooled:
        group = [
            e
            for e in series
            if e["study"] == study
            and e["metric"] == metric
            and ", ".join(e["kind"].split(", ")[:2]) == kind
        ]
        assert len(group) == int(runs)
        weights = np.array([e["rounds"] / e["sd"] ** 2 for e in group])
        means = np.array([e["mean"] for e in group])
        centre = float(weights @ means / weights.sum())
        half = stats.norm.ppf(0.95) / math.sqrt(weights.sum())
        q = float(weights @ (means - centre) ** 2)
        computed = [math.exp(centre), math.exp(centre - half), math.exp(centre + half)]
        assert [f"{value:.3f}" for value in computed] == [drift, low, high]
        assert f"{stats.chi2.sf(q, len(group) - 1):.2f}" == q_p
    # What the README concludes: shares near their levels, every pooled drift within 0.846-1.071.
    assert all(abs(float(share) / 100 - float(level)) < 0.02 for level, _, _, share in shares)
    assert min(float(row[5]) for row in pooled) == 0.846
    assert max(float(row[6]) for row in pooled) == 1.071


LOOK_CALIBRATION = REPO / "data" / "experiments" / "20261128-look-calibration"


def test_the_look_calibration_table_recomputes_from_its_claims():
    claims = json.loads((LOOK_CALIBRATION / "claims.json").read_text())
    readme = (LOOK_CALIBRATION / "README.md").read_text()
    rows = re.findall(
        r"^\| (9\d)% \([^)]+\) \| ([a-z ]+) \| (\d+) \| (\d+) \| ([\d.]+)% "
        r"\| \[([\d.]+)%, ([\d.]+)%\] \|$",
        readme,
        re.MULTILINE,
    )
    assert len(rows) == 4
    for coverage, says, count, decided, share, low, high in rows:
        key = "expected_at_90" if coverage == "90" else "expected_at_look"
        group = [c for c in claims if c[key] == (says == "settles")]
        hits = sum(c["final_verdict"] in ("holds", "does not hold") for c in group)
        assert (int(count), int(decided)) == (len(group), hits)
        ends = (
            stats.beta.ppf(0.05, hits, len(group) - hits + 1),
            stats.beta.ppf(0.95, hits + 1, len(group) - hits),
        )
        assert [f"{100 * v:.1f}" for v in (hits / len(group), *ends)] == [share, low, high]
    # What the README concludes: the claims it passes fall short of its 80%, at either
    # coverage, and still settle far more often than the rest.
    passed = [row for row in rows if row[1] == "settles"]
    assert all(float(row[6]) < 80 for row in passed)
    assert float(rows[0][4]) > 5 * float(rows[1][4])


THROUGHPUT_ROUNDS = REPO / "data" / "experiments" / "20261128-throughput-rounds"


def throughput_rounds_judge():
    """The experiment's judge.py, imported from its folder."""
    return load_script(THROUGHPUT_ROUNDS / "judge.py", "judge")


def test_the_throughput_rounds_verdicts_recompute_from_the_run():
    committed = json.loads((THROUGHPUT_ROUNDS / "verdicts.json").read_text())
    assert throughput_rounds_judge().every_arm() == committed


def test_the_throughput_rounds_table_is_its_verdicts():
    committed = json.loads((THROUGHPUT_ROUNDS / "verdicts.json").read_text())
    readme = (THROUGHPUT_ROUNDS / "README.md").read_text()
    arms = list(committed)
    assert f"| claim | {' | '.join(arms)} |" in readme
    for index, reading in enumerate(committed[arms[0]]):
        cells = [
            "{verdict}, {effect:.3f}x [{low:.3f}, {high:.3f}]".format(**committed[arm][index])
            for arm in arms
        ]
        assert f"| {reading['claim']} | {' | '.join(cells)} |" in readme
    decided = {
        arm: sum(r["verdict"] in ("holds", "does not hold") for r in readings)
        for arm, readings in committed.items()
    }
    # What the README concludes: 1 decided on 3 rounds, 3 on five rounds of the 1 GiB cells,
    # and nothing more for the once sizes' rounds 4-5.
    assert re.search(r"1 of the 16 readings on 3 rounds, 3 on 5 rounds", readme)
    assert list(decided.values()) == [1, 3, 3]
    assert len(committed[arms[0]]) == 16


def test_quicks_throughput_rounds_are_the_arm_the_experiment_kept():
    quick = yaml.safe_load((GROUP_VARS / "throughput.yml").read_text())[
        "perflab_profiles_throughput"
    ]["quick"]
    assert (quick["repeats"], quick["once"]["repeats"]) == (5, 3)
