"""Each claim's `published` figure, computed from the seeds' tables (data/reference/*.csv).

A claim's `published_from` (perflab.analysis.claims.PublishedFrom) names reference rows in
the tables' own spelling and a metric: one the tables hold, or one derived here so that
the figure is on the metric the run measures (`SAME_METRIC`): successful calls per second
(`ok_rps` = ok / total, where ghz's Requests/sec counts failed calls too), seconds per 1000
orders, a watch server's CPU as core-seconds, or a ratio the seed's prose states. The
figure is the ratio of the two groups (or one group's value, or its error rate) per
configuration of `pair_by`, and the median over the configurations the seed published.
tests/test_claims_file.py recomputes every claim's figure and compares it with claims.yml.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis.claims import Claim, ClaimsError, PublishedFrom, Selector, read_claims

if TYPE_CHECKING:
    import pandas as pd

# The run's metric -> the reference metrics whose figure is on it (a ratio of the two
# groups' values, or a ratio the seed states in words); a study's own metrics are its
# record's (Study.seed_metrics, handed to published_problems).
SAME_METRIC: dict[str, set[str]] = {
    "rps": {"ok_rps"},
    "rps_ghz": {"rps"},
    "errors_Unavailable": {"errors_Unavailable"},
    "errors": {"errors"},
    "time_per_call": {"time_per_call", "claim_speedup"},
    "client_max_rss": {"max_rss", "prose_max_rss_ratio"},
    "client_page_faults_minor": {"page_faults_minor", "prose_page_faults_minor_ratio"},
    "client_ctx_switches_voluntary": {"ctx_switches_voluntary"},
    "client_ctx_switches_involuntary": {"ctx_switches_involuntary"},
    "numbers_per_s": {"numbers_per_s", "prose_throughput_ratio"},
    "tls_over_none": {"tls_over_none"},
    "elapsed_per_1000_orders": {"elapsed_per_1000_orders", "claim_elapsed_per_1000_orders"},
    "server_cpu_seconds": {"core_seconds"},
    "server_rss_peak": {"rss_peak"},
}
# Columns that say which cell a reference row belongs to (not what was measured).
CELL_COLUMNS = ["study", "scenario", "implementation", "client", "concurrency", "params", "repeat"]

# A study's hook on its reference rows (perflab.contract.study.Study.reference_rows): its
# rows (long, params as JSON text, the shared derived metrics among them) -> the same rows
# with its own columns, plus its own derived rows.
ReferenceRowsHook = Callable[["pd.DataFrame"], "pd.DataFrame"]
# The claims file in a reference folder (data/reference).
CLAIMS_FILE = "claims.yml"


def read_reference_tables(
    reference_dir: str | Path, hooks: Mapping[str, ReferenceRowsHook] | None = None
) -> pd.DataFrame:
    """Every reference row, params spread into columns (concurrency among them), plus the
    derived metrics: the shared ones here, each study's own from its hook in `hooks`."""
    import pandas as pd

    frames = [
        pd.read_csv(path, dtype={"params": str})
        for path in sorted(Path(reference_dir).glob("*.csv"))
    ]
    rows = pd.concat(frames, ignore_index=True)
    rows["params"] = rows["params"].fillna("{}")
    rows["repeat"] = rows["repeat"].fillna(0)
    # A blank, not NaN: pandas would drop a NaN key from every group of derived_rows.
    rows["concurrency"] = rows["concurrency"].map(lambda v: "" if pd.isna(v) else text(v))
    rows = pd.concat([rows, derived_rows(rows)], ignore_index=True)
    hooks = hooks or {}
    parts = [
        hooks[study](part) if study in hooks else part
        for study, part in rows.groupby("study", sort=False)
    ]
    return with_param_columns(pd.concat(parts, ignore_index=True))


def with_param_columns(rows: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    spread = pd.DataFrame([json.loads(text) for text in rows["params"]], index=rows.index)
    return pd.concat([rows, spread.drop(columns=[c for c in spread if c in rows])], axis=1)


def derived_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Reference metrics on the run's metrics, one row per reference cell."""
    import pandas as pd

    wide = cell_metrics(rows)
    derived = {
        "ok_rps": column(wide, "ok") / column(wide, "total"),
        "errors": wide.filter(like="errors_").sum(axis=1, min_count=1),
        # The prose's "N% less" as the ratio it means, and "N% more" likewise.
        "prose_max_rss_ratio": 1 - column(wide, "claim_max_rss_reduction") / 100,
        "prose_page_faults_minor_ratio": 1
        - column(wide, "claim_page_faults_minor_reduction") / 100,
        "prose_throughput_ratio": 1 + column(wide, "claim_throughput_gain") / 100,
    }
    return pd.concat(long_rows(derived), ignore_index=True)


def cell_metrics(rows: pd.DataFrame) -> pd.DataFrame:
    """The reference rows wide: one row per reference cell (CELL_COLUMNS), one column per
    metric; what the shared and the studies' derived metrics are computed on."""
    return widen(rows, CELL_COLUMNS, "metric", "first").dropna(how="all")


def long_rows(derived: Mapping[str, pd.Series]) -> list[pd.DataFrame]:
    """Each derived metric (metric -> its values over `cell_metrics`' cells) as long
    reference rows; a metric no cell has is left out."""
    parts = [
        values.dropna().rename("value").reset_index().assign(metric=name)
        for name, values in derived.items()
    ]
    return [part for part in parts if not part.empty]


def widen(rows: pd.DataFrame, index: list[str], columns: str, how: str) -> pd.DataFrame:
    """One row per index key that occurs, one column per value of `columns`, NaN keys kept:
    the table pivot_table(dropna=False) gives less its empty rows, which it builds as the
    cartesian product of every index level's values (about 20 s of CPU on the seeds)."""
    return rows.groupby([*index, columns], dropna=False)["value"].agg(how).unstack(columns)


def column(wide: pd.DataFrame, name: str) -> pd.Series:
    """A metric's column of the wide table, all NaN where no table has that metric."""
    return wide[name] if name in wide else wide.iloc[:, 0] * math.nan


def matches(value: Any, wanted: Any) -> bool:
    """A selector value, or a list of them (any of), against a reference cell's value."""
    options = wanted if isinstance(wanted, list) else [wanted]
    return any(text(value) == text(option) for option in options)


def text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def select(rows: pd.DataFrame, metric: str, selector: Selector) -> pd.DataFrame:
    # The metric first: the per-value matching below then runs over its rows only, not
    # over every reference row (about 9 s of a report's CPU before).
    rows = rows[rows["metric"] == metric]
    mask = rows["metric"].notna()
    for column in ("implementation", "scenario", "client"):
        wanted = getattr(selector, column)
        if wanted is not None:
            mask &= rows[column].map(lambda v, w=wanted: matches(v, w))
    for name, wanted in selector.params.items():
        if name not in rows:
            return rows.iloc[0:0]
        mask &= rows[name].notna() & rows[name].map(lambda v, w=wanted: matches(v, w))
    return rows[mask]


def by_configuration(rows: pd.DataFrame, pair_by: tuple[str, ...]) -> dict[tuple, pd.DataFrame]:
    if not pair_by:
        return {(): rows} if not rows.empty else {}
    return {
        tuple(text(k) for k in (key if isinstance(key, tuple) else (key,))): part
        for key, part in rows.groupby(list(pair_by), sort=True)
    }


def figures(claim: Claim, rows: pd.DataFrame) -> dict[tuple, float]:
    """The seed's figure per configuration it published (pair_by values -> value)."""
    source = claim.published_from
    if source is None:
        return {}
    pair_by = claim.pair_by if source.pair_by is None else source.pair_by
    missing = [name for name in pair_by if name not in rows]
    if missing:
        # A study's own columns come from its seed_rows hook: a caller that passed none.
        raise ClaimsError(
            f"claim {claim.id}: the reference tables have no column {', '.join(missing)}"
            f" (its study's seed_rows hook derives it)"
        )
    if claim.kind == "error_rate":
        return error_rates(source, rows, pair_by)
    numerators = by_configuration(select(rows, source.metric, source.numerator), pair_by)
    if source.denominator is None:
        return {key: float(part["value"].median()) for key, part in numerators.items()}
    denominators = by_configuration(select(rows, source.metric, source.denominator), pair_by)
    return {
        key: float(numerators[key]["value"].median() / denominators[key]["value"].median())
        for key in sorted(set(numerators) & set(denominators))
    }


def error_rates(source: PublishedFrom, rows: pd.DataFrame, pair_by: tuple[str, ...]) -> dict:
    errors = by_configuration(select(rows, source.metric, source.numerator), pair_by)
    calls = by_configuration(select(rows, "count", source.numerator), pair_by)
    return {
        key: float(errors[key]["value"].sum() / calls[key]["value"].sum())
        for key in sorted(set(errors) & set(calls))
    }


def error_counts(claim: Claim, rows: pd.DataFrame) -> dict[tuple, tuple[int, int]]:
    """An error-rate claim's seed counts per configuration: (errors, calls)."""
    source = claim.published_from
    if source is None or claim.kind != "error_rate":
        return {}
    pair_by = claim.pair_by if source.pair_by is None else source.pair_by
    errors = by_configuration(select(rows, source.metric, source.numerator), pair_by)
    calls = by_configuration(select(rows, "count", source.numerator), pair_by)
    return {
        key: (int(errors[key]["value"].sum()), int(calls[key]["value"].sum()))
        for key in sorted(set(errors) & set(calls))
    }


def published_figure(claim: Claim, rows: pd.DataFrame) -> float | None:
    """The median of the seed's figures over its configurations; None without a source."""
    if claim.published_from is None:
        return None
    found = figures(claim, rows)
    if not found:
        raise ClaimsError(f"claim {claim.id}: published_from selects no reference rows")
    return float(statistics.median(found.values()))


def seed_configurations(
    claim: Claim, rows: pd.DataFrame, found: dict[tuple, float] | None = None
) -> list[dict[str, str]]:
    """The configurations the seed published for this claim, e.g. [{'concurrency': '2'}, ...]:
    what a run's configurations are compared against to say how much of the seed it covers
    (`found`: the claim's `figures`, where the caller has them already)."""
    source = claim.published_from
    pair_by = (
        () if source is None else (claim.pair_by if source.pair_by is None else source.pair_by)
    )
    found = figures(claim, rows) if found is None else found
    return [dict(zip(pair_by, key, strict=True)) for key in found]


def seed_grid(configurations: list[dict[str, str]]) -> dict[str, tuple[str, ...]]:
    """Parameter -> the values the seed published in `configurations`, in its tables' order
    (numbers ascending), where it published more than one configuration; {} otherwise."""
    if len(configurations) < 2:
        return {}
    grid: dict[str, tuple[str, ...]] = {}
    for name in configurations[0]:
        values = {configuration[name] for configuration in configurations}
        grid[name] = tuple(
            sorted(values, key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
        )
    return grid


def with_seed_configurations(claims: list[Claim], rows: pd.DataFrame) -> list[Claim]:
    """Each claim with the seed's configuration grid filled in from the reference tables
    (claims.yml may state its own, which is kept), so every verdict can say how much of
    the seed a run covers, and with the seed's figure per configuration (a configuration
    whose figure sits inside the run's noise is expected at its threshold)."""
    # Each claim's figures once, from its own metrics' rows (the whole tables once per
    # claim and twice over were about 9 s of every report's CPU).
    by_metric = dict(tuple(rows.groupby("metric", sort=False)))
    filled = []
    for claim in claims:
        found = figures(claim, source_rows(claim, rows, by_metric))
        filled.append(
            dataclasses.replace(
                claim,
                seed_configurations=claim.seed_configurations
                or seed_grid(seed_configurations(claim, rows, found)),
                seed_figures=found if figures_keyed_as_verdicts(claim) else {},
            )
        )
    return filled


def source_rows(claim: Claim, rows: pd.DataFrame, by_metric: dict) -> pd.DataFrame:
    """The reference rows `figures` reads for a claim: its source's metric, and the call
    counts an error rate divides by (all of `rows` where the claim has no source)."""
    source = claim.published_from
    if source is None:
        return rows
    import pandas as pd

    parts = [by_metric[m] for m in dict.fromkeys((source.metric, "count")) if m in by_metric]
    return pd.concat(parts) if parts else rows.iloc[0:0]


def figures_keyed_as_verdicts(claim: Claim) -> bool:
    """Whether a claim's seed figures are per its own pair_by, so the verdicts can look a
    configuration's figure up by the key they give it."""
    source = claim.published_from
    return source is not None and (source.pair_by is None or source.pair_by == claim.pair_by)


def published_problems(
    claims: list[Claim],
    rows: pd.DataFrame,
    own_metrics: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> list[str]:
    """Every claim whose `published` is not what its `published_from` computes (rounded as
    written: within 0.6%, or 0.005), whose source is on another metric than the run's (the
    shared SAME_METRIC, or its study's pairs in `own_metrics`: study -> (run metric, seed
    metric) pairs, Study.seed_metrics), or that states a figure without a source."""
    own_metrics = own_metrics or {}
    problems = []
    for claim in claims:
        source = claim.published_from
        if source is None:
            if claim.published is not None:
                problems.append(f"{claim.id}: published {claim.published} with no published_from")
            continue
        own = (claim.metric, source.metric) in own_metrics.get(claim.study, ())
        if not own and source.metric not in SAME_METRIC.get(claim.metric, set()):
            problems.append(f"{claim.id}: published on {source.metric}, the run on {claim.metric}")
        computed = published_figure(claim, rows)
        if claim.published is None or not math.isclose(
            computed, claim.published, rel_tol=0.006, abs_tol=0.0051
        ):
            problems.append(
                f"{claim.id}: published {claim.published}, the tables give {computed:.4g}"
            )
    return problems


def reference_claims(
    reference_dir: Path, hooks: Mapping[str, ReferenceRowsHook] | None = None
) -> list[Claim]:
    """The claims, with the seed configurations each covers from the reference tables (each
    study's own metrics derived by its hook in `hooks`, Run.seed_rows_hooks)."""
    return with_seed_configurations(
        read_claims(reference_dir / CLAIMS_FILE), read_reference_tables(reference_dir, hooks)
    )
