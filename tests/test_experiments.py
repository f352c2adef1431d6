"""Experiments a knob's value rests on (data/experiments/): their tables recompute from
their raw figures, and the knob is set to what was tested."""

from __future__ import annotations

import json
import math
import re
import statistics

import yaml
from scipy import stats

from tests.conftest import GROUP_VARS, REPO

WARMUP_AB = REPO / "data" / "experiments" / "20261127-hello-warmup-ab"


def paired_ratio(long: list[float], short: list[float]) -> tuple[float, float, float]:
    """The geometric mean of short/long over the pairs, with its 90% paired t interval."""
    logs = [math.log(b / a) for a, b in zip(long, short, strict=True)]
    mean = statistics.mean(logs)
    half = stats.t.ppf(0.95, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def test_the_warmup_ab_table_recomputes_from_its_rates():
    found = json.loads((WARMUP_AB / "ab.json").read_text())
    table = re.findall(
        r"^\| (\w+) \| (\d+) \| ([\d.]+) \| \[([\d.]+), ([\d.]+)\] \|$",
        (WARMUP_AB / "README.md").read_text(),
        re.MULTILINE,
    )
    assert len(table) == len(found["configurations"]) == 10
    for row, config in zip(table, found["configurations"], strict=True):
        assert (row[0], int(row[1])) == (config["implementation"], config["concurrency"])
        assert len(config["w1"]) == len(config["w025"]) == found["pairs"]
        computed = paired_ratio(config["w1"], config["w025"])
        assert [f"{value:.3f}" for value in computed] == list(row[2:])
        # What the README concludes from it: every interval holds 1, within 0.94-1.08.
        assert 0.94 <= computed[1] <= 1 <= computed[2] <= 1.08


def test_hellos_warmup_is_the_arm_the_experiment_tested():
    matrix = yaml.safe_load((GROUP_VARS / "hello.yml").read_text())["perflab_matrix_hello"]
    assert matrix["warmup_s"] == 0.25
    assert "20261127-hello-warmup-ab" in (GROUP_VARS / "hello.yml").read_text()
