"""What an A/B of two knob values measured (perflab ab): per configuration, the paired
ratio of its metric, arm b over arm a, and a paired t interval.

Each pair is one cell of each arm run back to back on fresh servers (perflab.host.ab), so
what drifts slowly on the host cancels within a pair: the ratio is the geometric mean of the
pairs' ratios and the interval is Student's t on their logs (n - 1 degrees of freedom). t
assumes the log ratios roughly normal; data/experiments/20261127-hello-warmup-ab checked
that by resampling its own 80 pairs (90.1% for a nominal 90%, Monte Carlo error 0.2%).

A knob may change a cell's noise rather than its level (more bytes timed per cell): each arm's
spread is the SD of its values' logs across pairs, and their ratio b / a gets the F interval
of two independent samples. The arms share the host's slow drift, which the F interval does
not remove; that correlation makes the two spreads alike, so the interval is wider than its
coverage needs, not narrower (simulated in tests/test_ab.py: 90% with independent arms,
above it with a shared drift).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scipy import stats

from perflab.analysis.frames import cell_metrics
from perflab.contract.cell import cell_record

# The coverage an A/B's intervals are computed at, and the band "no change" is claimed in
# when an interval lies inside it (hello's warm-up A/B held its change to 0.94-1.08, within
# the 10% floor of the decision margins).
AB_COVERAGE = 0.90
NO_CHANGE_BAND = (1 / 1.1, 1.1)


@dataclass(frozen=True)
class PairedRatio:
    pairs: int
    ratio: float
    low: float
    high: float

    def verdict(self, band: tuple[float, float] = NO_CHANGE_BAND) -> str:
        """What the interval says against the band: the sentence an A/B's table ends with."""
        if band[0] <= self.low and self.high <= band[1]:
            return f"no change beyond {band[0]:.3f}-{band[1]:.3f}"
        if self.high < 1 or self.low > 1:
            return "changed"
        return "undecided: more pairs"


def paired_ratio(
    a: Sequence[float], b: Sequence[float], coverage: float = AB_COVERAGE
) -> PairedRatio:
    """b over a, pair by pair; needs two pairs or more, every value positive."""
    if len(a) != len(b):
        raise ValueError(f"unpaired: {len(a)} values of arm a, {len(b)} of arm b")
    if len(a) < 2:
        raise ValueError("a paired interval needs at least two pairs")
    if min(*a, *b) <= 0:
        raise ValueError("a ratio needs positive values in both arms")
    logs = [math.log(y / x) for x, y in zip(a, b, strict=True)]
    mean = statistics.mean(logs)
    half = stats.t.ppf(0.5 + coverage / 2, len(logs) - 1) * statistics.stdev(logs)
    half /= math.sqrt(len(logs))
    return PairedRatio(len(logs), math.exp(mean), math.exp(mean - half), math.exp(mean + half))


@dataclass(frozen=True)
class SpreadRatio:
    """Each arm's SD of its values' logs, and sd b / sd a with its F interval."""

    sd_a: float
    sd_b: float
    low: float
    high: float

    @property
    def ratio(self) -> float:
        return self.sd_b / self.sd_a

    def verdict(self) -> str:
        if self.high < 1:
            return "less noise"
        if self.low > 1:
            return "more noise"
        return "noise alike"


def spread_ratio(
    a: Sequence[float], b: Sequence[float], coverage: float = AB_COVERAGE
) -> SpreadRatio | None:
    """sd b / sd a of the logs; None where an arm does not vary (no ratio to take)."""
    sd_a = statistics.stdev(math.log(x) for x in a)
    sd_b = statistics.stdev(math.log(y) for y in b)
    if sd_a == 0 or sd_b == 0:
        return None
    ratio = (sd_b / sd_a) ** 2
    upper = stats.f.ppf(0.5 + coverage / 2, len(b) - 1, len(a) - 1)
    lower = stats.f.ppf(0.5 - coverage / 2, len(b) - 1, len(a) - 1)
    return SpreadRatio(sd_a, sd_b, math.sqrt(ratio / upper), math.sqrt(ratio / lower))


def figure(value: float) -> str:
    """A median as a table shows it: whole units from 100 up, four significant digits below."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def ab_table(rows: Sequence[tuple[str, Sequence[float], Sequence[float]]], unit: str) -> str:
    """A markdown table: each configuration's medians per arm, the ratio and its interval,
    then each arm's spread and their ratio with its interval."""
    lines = [
        f"| configuration | pairs | median a, {unit} | median b, {unit} | b / a "
        f"| {AB_COVERAGE:.0%} paired t interval | reading | log sd a | log sd b "
        f"| sd b / a, {AB_COVERAGE:.0%} F interval | spread |",
        "|---|---:|---:|---:|---:|---|---|---:|---:|---|---|",
    ]
    for name, a, b in rows:
        found = paired_ratio(a, b)
        spread = spread_ratio(a, b)
        noise = (
            f"| {spread.sd_a:.3f} | {spread.sd_b:.3f} | {spread.ratio:.2f} "
            f"[{spread.low:.2f}, {spread.high:.2f}] | {spread.verdict()} |"
            if spread
            else "| | | | an arm does not vary |"
        )
        lines.append(
            f"| {name} | {found.pairs} | {figure(statistics.median(a))} "
            f"| {figure(statistics.median(b))} "
            f"| {found.ratio:.3f} | [{found.low:.3f}, {found.high:.3f}] | {found.verdict()} "
            + noise
        )
    return "\n".join(lines)


@dataclass
class AbSummary:
    """An A/B's values per configuration and arm (None: a failed cell, or no such metric),
    and the table of the configurations with two complete pairs or more."""

    metric: str
    pairs: int
    configurations: list[dict[str, Any]] = field(default_factory=list)
    rows: list[tuple[str, list[float], list[float]]] = field(default_factory=list)
    unit: str = ""
    revisions: list[str] = field(default_factory=list)

    def complete(self) -> bool:
        return len(self.rows) == len(self.configurations)

    def text(self) -> str:
        """What was dropped, then the table."""
        lines = [
            f"{entry['cell']}: {entry['pairs_dropped']} of {self.pairs} pairs dropped (a failed "
            f"cell or no {self.metric}; statuses {entry['statuses']})"
            for entry in self.configurations
            if entry["pairs_dropped"]
        ]
        lines.append(
            ab_table(self.rows, self.unit)
            if self.rows
            else "no configuration has two complete pairs"
        )
        return "\n".join(lines)


def ab_summary(folders: dict[str, dict[str, list[Path]]], metric: str, pairs: int) -> AbSummary:
    """Reads each cell's status and metric from its folder as a run's analysis does; a pair
    with a failed cell or a missing value in either arm is dropped, and counted."""
    summary = AbSummary(metric, pairs)
    revisions: set[str] = set()
    for configuration, arms in folders.items():
        values: dict[str, list[float | None]] = {}
        statuses: dict[str, list[str]] = {}
        for arm, cells in arms.items():
            values[arm], statuses[arm] = [], []
            for folder in cells:
                cell = cell_record(folder)
                statuses[arm].append(cell["status"])
                revisions.add(cell.get("code_revision", ""))
                found = (
                    {}
                    if cell["status"] == "failed"
                    else {m.metric: m for m in cell_metrics(folder, cell)}
                )
                values[arm].append(found[metric].value if metric in found else None)
                summary.unit = summary.unit or (found[metric].unit if metric in found else "")
        kept = [(a, b) for a, b in zip(values["a"], values["b"], strict=True) if a and b]
        summary.configurations.append(
            {
                "cell": configuration,
                **values,
                "statuses": statuses,
                "pairs_dropped": pairs - len(kept),
            }
        )
        if len(kept) >= 2:
            summary.rows.append((configuration, [a for a, _ in kept], [b for _, b in kept]))
    summary.revisions = sorted(revisions - {""})
    return summary
