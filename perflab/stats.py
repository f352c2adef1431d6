"""Medians with 95% bootstrap intervals, and the tables the notebooks show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

BOOTSTRAP_RESAMPLES = 10_000
# A fixed seed: the same data gives the same interval, so re-rendered tables are identical.
BOOTSTRAP_SEED = 20261122


@dataclass(frozen=True)
class Estimate:
    median: float
    low: float
    high: float
    n: int


def median_ci(values: Sequence[float], confidence: float = 0.95) -> Estimate:
    """Median and percentile-bootstrap interval; with one value the interval is that value."""
    data = np.asarray([v for v in values if v == v], dtype=float)  # drop NaN
    if data.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    median = float(np.median(data))
    if data.size == 1:
        return Estimate(median, median, median, 1)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    samples = rng.choice(data, size=(BOOTSTRAP_RESAMPLES, data.size), replace=True)
    medians = np.median(samples, axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return Estimate(median, float(low), float(high), int(data.size))


def summarize(frame: pd.DataFrame, by: list[str], metrics: list[str] | None = None) -> pd.DataFrame:
    """One row per group and metric: median, ci_low, ci_high, n (repeats), unit."""
    import pandas as pd

    data = frame if metrics is None else frame[frame["metric"].isin(metrics)]
    rows = []
    for key, group in data.groupby([*by, "metric", "unit"], sort=True, dropna=False):
        estimate = median_ci(group["value"].tolist())
        rows.append(
            {
                **dict(zip([*by, "metric", "unit"], key, strict=True)),
                "median": estimate.median,
                "ci_low": estimate.low,
                "ci_high": estimate.high,
                "n": estimate.n,
            }
        )
    return pd.DataFrame(rows)


def wide(
    summary: pd.DataFrame, index: list[str], column: str, value: str = "median"
) -> pd.DataFrame:
    """Pivot a summary for display: index rows, one column per value of `column`."""
    return summary.pivot_table(index=index, columns=column, values=value, aggfunc="first")


def compare_published(
    measured: pd.DataFrame,
    published: pd.DataFrame,
    on: list[str],
    metric: str | Mapping[str, str],
    how: str = "outer",
    sort: bool = True,
) -> pd.DataFrame:
    """Published next to measured (median and interval) with the ratio measured/published.

    `measured`: a `summarize` frame (on..., metric, unit, median, ci_low, ci_high, n, and any
    other columns, which are kept); `published`: data/reference rows (on..., metric, value,
    unit, source). `metric`: the name both use, or {published name: measured name} where a
    study names it differently (rows keep the published name). `how`: "outer" keeps every
    row of both sides, "left" what the seed published only, "right" what was measured only.
    Sorted by `on` unless `sort` is False (then a left join keeps the seed's order).

    Columns: on..., metric, unit (the seed's, else ours), published, measured, ci_low,
    ci_high, source, ratio, then the measured side's other columns.
    """
    import pandas as pd

    names = {metric: metric} if isinstance(metric, str) else dict(metric)
    theirs = published[published["metric"].isin(list(names))]
    theirs = theirs[[*on, "metric", "value", *(c for c in ("unit", "source") if c in theirs)]]
    theirs = theirs.rename(columns={"value": "published"})
    theirs["measured_metric"] = theirs["metric"].map(names)
    if {"metric", "median"} <= set(measured.columns):
        mine = measured[measured["metric"].isin(list(names.values()))]
    else:  # an empty frame without columns: nothing was measured
        mine = pd.DataFrame(columns=[*on, "metric", "unit", "median", "ci_low", "ci_high"])
    mine = mine.rename(
        columns={"metric": "measured_metric", "unit": "measured_unit", "median": "measured"}
    )
    table = theirs.merge(mine, on=[*on, "measured_metric"], how=how)
    by_ours = {ours: theirs_name for theirs_name, ours in names.items()}
    table["metric"] = table["metric"].fillna(table["measured_metric"].map(by_ours))
    unit = table["unit"] if "unit" in table else pd.Series(pd.NA, index=table.index)
    table["unit"] = unit.fillna(table["measured_unit"]) if "measured_unit" in table else unit
    # Numbers as floats whatever the join left (an empty side makes object columns): a
    # published 0 (e.g. no error) then gives an infinite or undefined ratio, not an error.
    for column in ("published", "measured", "ci_low", "ci_high"):
        if column in table:
            table[column] = table[column].astype(float)
    table["ratio"] = table["measured"] / table["published"]
    first = [*on, "metric", "unit", "published", "measured", "ci_low", "ci_high", "source", "ratio"]
    first = [c for c in first if c in table]
    rest = [c for c in table if c not in first and c not in ("measured_metric", "measured_unit")]
    table = table[first + rest]
    return table.sort_values(on).reset_index(drop=True) if sort else table.reset_index(drop=True)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a: +1 same order, -1 reversed; NaN with fewer than two items."""
    n = len(a)
    if n < 2:
        return float("nan")
    score = 0
    for i in range(n):
        for j in range(i + 1, n):
            score += int(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]))
    return score / (n * (n - 1) / 2)


def ranking(values: pd.Series) -> list[str]:
    """Index labels from highest to lowest value."""
    return [str(label) for label in values.sort_values(ascending=False).index]


def ranking_agreement(published: pd.Series, measured: pd.Series) -> dict[str, object]:
    """Do both order the common items the same way? Kendall's tau over the common labels."""
    common = [label for label in published.index if label in measured.index]
    tau = kendall_tau(published[common].tolist(), measured[common].tolist())
    return {
        "published_order": ranking(published[common]),
        "measured_order": ranking(measured[common]),
        "same_order": ranking(published[common]) == ranking(measured[common]),
        "kendall_tau": tau,
    }


def ranking_by_group(table: pd.DataFrame, group: str, label: str) -> pd.DataFrame:
    """Per value of `group`, whether published and measured rank the labels alike."""
    import pandas as pd

    rows = []
    for key, part in table.dropna(subset=["published", "measured"]).groupby(group):
        agreement = ranking_agreement(
            part.set_index(label)["published"], part.set_index(label)["measured"]
        )
        rows.append(
            {
                group: key,
                "published order (fastest first)": " > ".join(agreement["published_order"]),
                "measured order (fastest first)": " > ".join(agreement["measured_order"]),
                "same order": agreement["same_order"],
                "kendall tau": round(float(agreement["kendall_tau"]), 2),
            }
        )
    return pd.DataFrame(rows)
