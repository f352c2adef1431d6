"""Medians with intervals labelled by their real coverage, and the tables the notebooks show."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from perflab.analysis.intervals import median_interval
from perflab.contract.bounds import FLOORED_METRICS

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Estimate:
    """A median over repeats and, from two repeats on, an exact order-statistic interval.

    `coverage` is the probability the interval covers the population median (3 repeats:
    their range, 75%); `interval` names the method. One repeat has no interval: low, high
    and coverage are NaN and `interval` is empty.
    """

    median: float
    low: float
    high: float
    n: int
    coverage: float
    interval: str


NAN = float("nan")


def median_ci(values: Sequence[float]) -> Estimate:
    """Median and `intervals.median_interval` (None below two values: no interval)."""
    data = [float(v) for v in values if v == v]  # drop NaN
    if not data:
        return Estimate(NAN, NAN, NAN, 0, NAN, "")
    median = float(np.median(data))
    interval = median_interval(data)
    if interval is None:
        return Estimate(median, NAN, NAN, len(data), NAN, "")
    return Estimate(
        median,
        float(interval.low),
        float(interval.high),
        len(data),
        interval.coverage,
        interval.method,
    )


def any_bound(group: pd.DataFrame) -> bool:
    """Whether a repeat of the group ran `bound` (a frame without statuses: none did)."""
    return "status" in group and bool((group["status"] == "bound").any())


def summarize(frame: pd.DataFrame, by: list[str], metrics: list[str] | None = None) -> pd.DataFrame:
    """One row per group and metric: median, ci_low, ci_high, n (repeats), coverage (the
    interval's probability of covering the median; NaN with one repeat), interval (its
    method), unit, bound (whether any repeat's cell was `bound` by the load generator)."""
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
                "coverage": estimate.coverage,
                "interval": estimate.interval,
                "bound": any_bound(group),
            }
        )
    return pd.DataFrame(rows)


def lower_bounds(summary: pd.DataFrame) -> pd.Series:
    """Per row of a summary (or of a table that kept its `bound` and `metric` columns), whether
    its figure is only a lower bound: a rate (`bounds.FLOORED_METRICS`) that rests on at
    least one `bound` repeat. A row without a `bound` flag (never measured) is not one."""
    import pandas as pd

    if not {"bound", "metric"} <= set(summary.columns):
        return pd.Series(False, index=summary.index, dtype=bool)
    return summary["bound"].eq(True) & summary["metric"].isin(FLOORED_METRICS)


def percent(coverage: float) -> str:
    """Coverage as a whole percent, rounded down (87.5% is not 88%)."""
    return f"{math.floor(coverage * 100 + 1e-9):.0f}%"


def interval_words(n: int, interval: str, coverage: float) -> str:
    """One kind of interval in words, e.g. 'the range of the 3 repeats, which covers the
    median with 75% probability': the coverage is what the method gives for n repeats."""
    what = (
        f"the range of the {n} repeats"
        if interval == "range of the repeats"
        else f"an {interval} from {n} repeats"
    )
    return f"{what}, which covers the median with {percent(coverage)} probability"


def interval_kinds(summary: pd.DataFrame) -> pd.DataFrame:
    """The distinct (n, interval, coverage) of a summary's rows that have an interval."""
    return summary[summary["n"] >= 2].drop_duplicates(["n", "interval"]).sort_values("n")


def interval_sentence(summary: pd.DataFrame, subject: str = "Intervals") -> str:
    """What the intervals of a summary are, generated from its repeat counts, e.g.
    'Intervals: the range of the 3 repeats, which covers the median with 75% probability.'
    `subject` names whose intervals they are ('Intervals of the sequential cells')."""
    if summary.empty or "n" not in summary:
        if subject == "Intervals":
            return "No interval: nothing was measured."
        return f"{subject}: none, nothing was measured."
    parts = [
        interval_words(int(row.n), row.interval, row.coverage)
        for row in interval_kinds(summary).itertuples(index=False)
    ]
    single = int((summary["n"] == 1).sum())
    if not parts:
        if subject == "Intervals":
            return "One repeat per cell: values are single measurements, with no interval."
        return f"{subject}: none, one repeat per cell (values are single measurements)."
    sentence = f"{subject}: " + "; ".join(parts) + "."
    if single:
        sentence += " Cells with one repeat show their value alone, with no interval."
    return sentence


def mixes_intervals(summary: pd.DataFrame) -> bool:
    """Whether a summary's rows carry more than one kind of interval (repeat counts or
    methods differ, or some rows have one repeat and so none): one label for all would
    be wrong for some of them."""
    if summary.empty or "n" not in summary:
        return False
    kinds = {
        (int(n), str(i)) if n >= 2 else (1, "")
        for n, i in zip(summary["n"], summary["interval"], strict=True)
    }
    return len(kinds) > 1


def interval_label(n: float, coverage: float, interval: str) -> str:
    """A row's short interval label: '93%, range of 5 repeats', '97%, order statistics of 10
    repeats', 'none (1 repeat)'."""
    if n != n or n < 2 or coverage != coverage:
        return "none (1 repeat)"
    method = "range" if interval == "range of the repeats" else "order statistics"
    return f"{percent(coverage)}, {method} of {int(n)} repeats"


def interval_labels(summary: pd.DataFrame) -> pd.Series:
    """`interval_label` of every row of a summary."""
    import pandas as pd

    return pd.Series(
        [
            interval_label(n, c, i)
            for n, c, i in zip(summary["n"], summary["coverage"], summary["interval"], strict=True)
        ],
        index=summary.index,
        dtype=object,
    )


def significant(value: float, digits: int = 3) -> str:
    """A number to `digits` significant figures, with thousands separators: 910995.707 ->
    '911,000', 0.99412 -> '0.994'; NaN -> '–'. A median of a few noisy repeats carries
    two or three trustworthy figures, not nine."""
    if value != value:
        return "–"
    if value == 0 or math.isinf(value):
        return f"{value:g}"
    rounded = float(f"{value:.{digits}g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:,.{decimals}f}"


def interval_header(summary: pd.DataFrame) -> str:
    """A short column label for a summary's intervals: '75% range' or 'interval (75-96%)'."""
    if "coverage" not in summary:
        return "interval"
    levels = sorted({percent(c) for c in summary["coverage"].dropna()})
    if not levels:
        return "interval"
    if len(levels) == 1:
        return f"{levels[0]} interval"
    return f"interval ({levels[0]}–{levels[-1]})"


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

    `measured`: a `summarize` frame (on..., metric, unit, median, ci_low, ci_high, n,
    coverage, interval, and any other columns, which are kept); `published`: data/reference
    rows (on..., metric, value, unit, source). `metric`: the name both use, or {published
    name: measured name} where a study names it differently (rows keep the published name).
    `how`: "outer" keeps every row of both sides, "left" what the seed published only,
    "right" what was measured only.
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


# A percentile is an estimate only with this many samples beyond it; with fewer it is
# one of the largest samples (p99.9 of 1 000 calls is the maximum).
TAIL_SAMPLES = 10


def samples_needed(fraction: float) -> int:
    """The fewest values whose `fraction` percentile has TAIL_SAMPLES values beyond it
    (p99: 1 000, p99.9: 10 000)."""
    return math.ceil(TAIL_SAMPLES / (1 - fraction) - 1e-9)


def percentile_supported(fraction: float, samples: float) -> bool:
    """Whether `samples` values support their `fraction` percentile (`samples_needed`)."""
    return samples == samples and samples >= samples_needed(fraction)


def percentile_note(samples: float) -> str:
    """A sentence on which percentiles a cell of `samples` values can show."""
    shown = [
        name for name, f in (("p99", 0.99), ("p99.9", 0.999)) if percentile_supported(f, samples)
    ]
    hidden = [name for name in ("p99", "p99.9") if name not in shown]
    if not hidden:
        return ""
    need = {"p99": samples_needed(0.99), "p99.9": samples_needed(0.999)}
    return (
        f"Percentiles need at least {TAIL_SAMPLES} samples beyond them: "
        + ", ".join(f"{h} ({need[h]:,} samples)" for h in hidden)
        + f" {'is' if len(hidden) == 1 else 'are'} not shown where a cell has "
        f"{samples:,.0f}; the maximum is."
    )


def drop_unsupported_percentiles(
    summary: pd.DataFrame, keys: list[str], count_metric: str, fractions: dict[str, float]
) -> pd.DataFrame:
    """A summary without the percentile rows (metric -> fraction in `fractions`) whose
    configuration (`keys`) counted too few samples (`count_metric`'s median) to support
    them (`percentile_supported`); other rows are kept."""
    counts = summary[summary["metric"] == count_metric].set_index(keys)["median"]
    if counts.empty:
        return summary
    index = summary.set_index(keys).index
    count = counts.reindex(index).to_numpy()
    fraction = summary["metric"].map(fractions).to_numpy()
    unsupported = [
        f == f and not percentile_supported(f, n) for f, n in zip(fraction, count, strict=True)
    ]
    return summary[[not u for u in unsupported]]
