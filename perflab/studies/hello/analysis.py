"""The hello study's analysis (seed 000, hello server): the tables its notebook shows.

Works on `perflab.analysis.frames` rows of study "hello" (params concurrency, connections, and total
or duration_s/warmup_s) and on their summary by SUMMARY_KEYS. Cells recorded before
`connections` was a matrix key ran ghz's default, one connection: they read as 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perflab.analysis import stats
from perflab.contract import params
from perflab.contract.bounds import EffectiveCeiling, ceiling_sentence

if TYPE_CHECKING:
    import pandas as pd

STUDY = "hello"
SUMMARY_KEYS = ["scenario", "implementation", "concurrency", "connections"]
LATENCY_METRICS = ["latency_p50", "latency_p90", "latency_p99"]
CPU_METRICS = ["server_cpu_us_per_call", "client_cpu_us_per_call"]
# The seed's load shape (ghz -n 200): the one its published table answers.
SEED_SCENARIO = "seed_n200"
SEED_CONNECTIONS = 1


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's rows on the current library stack, with `connections` 1 where a cell did
    not record it. Cells on seed 000's grpcio (`stack` seed000) are judged by the claims'
    -seed-stack readings; the tables stay the current stack's."""
    rows = params.with_defaults(frame[frame["study"] == STUDY], ("connections", "stack"))
    return rows[rows["stack"] == params.RECORDED_LATE["stack"]]


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Median and interval over repeats per scenario, server, concurrency, connections.

    When the run varies the connections, each server's label says how many it had, so
    every table and figure keeps them apart; a run of one connection count reads as before.
    """
    summary = stats.summarize(study_rows(frame), SUMMARY_KEYS)
    if summary.empty:
        return summary
    # `server` keeps the implementation's own name, to match the seed's rows by.
    summary["server"] = summary["implementation"]
    if summary["connections"].nunique() <= 1:
        return summary
    return summary.assign(
        implementation=[
            f"{impl} ({k} conn)"
            for impl, k in zip(summary["implementation"], summary["connections"], strict=True)
        ]
    )


def main_scenario(summary: pd.DataFrame) -> str:
    """Steady state when the run has it (smoke and quick do), else the seed's shape."""
    return "steady" if (summary["scenario"] == "steady").any() else SEED_SCENARIO


def rates(summary: pd.DataFrame, scenario: str) -> pd.DataFrame:
    """req/s of one scenario: median and interval per server and concurrency."""
    return summary[(summary["metric"] == "rps") & (summary["scenario"] == scenario)]


def shown(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary rows the page's tables show: req/s of every scenario, latency and CPU per
    call of the main scenario (`latency_table`, `cpu_tables`). What the interval sentence
    describes: a metric no table shows (the sampled client RSS, which short cells have with
    fewer repeats) must not add its repeat counts to it."""
    if summary.empty:
        return summary
    detail = summary["metric"].isin([*LATENCY_METRICS, *CPU_METRICS]) & (
        summary["scenario"] == main_scenario(summary)
    )
    return summary[(summary["metric"] == "rps") | detail]


def seed_servers(part: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The rows of the servers the seed measured (its Python servers): beside C++ and Go
    their differences vanish at the same scale."""
    return part[part["server"].isin(published["implementation"])]


def latency_table(summary: pd.DataFrame, scenario: str) -> pd.DataFrame:
    """p50 / p90 / p99 in ms, 'median [interval]', per server and concurrency."""
    from perflab.analysis import tables

    part = summary[summary["metric"].isin(LATENCY_METRICS) & (summary["scenario"] == scenario)]
    part = part.assign(value=tables.with_interval(part, 2))
    return part.pivot_table(
        index=["implementation", "concurrency"], columns="metric", values="value", aggfunc="first"
    )


def cpu_tables(summary: pd.DataFrame, scenario: str) -> list[tuple[str, pd.DataFrame]]:
    """(metric, table) per CPU-per-call metric: the server's and ghz's µs per call."""
    from perflab.analysis import tables

    part = summary[summary["metric"].isin(CPU_METRICS) & (summary["scenario"] == scenario)]
    return [
        (str(metric), tables.ci_table(rows, "implementation", "concurrency", digits=1))
        for metric, rows in part.groupby("metric")
    ]


def published_vs_measured(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The seed's req/s (its four Python servers, `ghz -n 200`) next to ours in the same
    shape and on one connection as it ran; only the rows the seed published."""
    mine = summary[
        (summary["scenario"] == SEED_SCENARIO) & (summary["connections"] == SEED_CONNECTIONS)
    ]
    mine = mine.assign(implementation=mine["server"])
    theirs = published[published["scenario"] == SEED_SCENARIO]
    table = stats.compare_published(mine, theirs, ["implementation", "concurrency"], "rps")
    table = table[table["published"].notna()]
    return table.assign(
        label=table["implementation"] + " c" + table["concurrency"].astype(int).astype(str)
    )


def ranking(compared: pd.DataFrame) -> pd.DataFrame:
    """Per concurrency, whether the seed and this run rank the servers alike."""
    agreement = stats.ranking_by_group(compared, "concurrency", "implementation")
    return agreement.set_index("concurrency") if not agreement.empty else agreement


def bound_sentence(rates: pd.DataFrame, ceiling: EffectiveCeiling | None, keys: list[str]) -> str:
    """Markdown: which configurations of a `summarize` frame are lower bounds. The ones the
    tables mark "≥" (a repeat recorded `bound` against the calibrated ceiling, the rule the
    verdicts use) are listed; where the run's effective ceiling (see ceiling_sentence) would
    call a different set lower bounds, that set is named too, so the two never disagree
    silently."""
    if ceiling is None:
        return "This run has no calibration: no rate can be called a lower bound or not."

    def listed(rows: pd.DataFrame) -> str:
        return ", ".join(
            " ".join(str(v) for v in row) for row in rows[keys].itertuples(index=False)
        )

    rps = rates[rates["metric"] == "rps"]
    marked = rps[stats.lower_bounds(rps)]
    above = rps[rps["median"] > ceiling.bound_rps]
    text = ceiling_sentence(ceiling)
    if marked.empty and above.empty:
        return text + " No configuration here is above that: every rate is the server's."
    if marked.empty:
        return (
            text + " No repeat here was recorded `bound`, so no figure is marked ≥; by the "
            f"effective ceiling these medians are lower bounds: {listed(above)}."
        )
    text += (
        f" **Lower bounds** (marked ≥, read as 'at least': a repeat was recorded `bound`, "
        f"the rule the verdicts use): {listed(marked)}."
    )
    if listed(above) != listed(marked):
        named = listed(above) or "none of them"
        text += f" By the effective ceiling alone the medians above it are: {named}."
    return text


def load_generator_note(manifest: dict[str, Any]) -> str:
    """Markdown: the run, and the ghz that made the load with its ceiling and why."""
    cal = manifest.get("calibration") or {}
    return (
        f"Run `{manifest['run_id']}`, profile **{manifest['profile']}**, topology "
        f"{manifest['topology']}, git `{manifest['git_sha'][:12]}`.\n\nLoad generator: "
        f"**ghz {cal.get('ghz_version', '?')}**, ceiling "
        f"**{cal.get('ceiling_rps', float('nan')):,.0f} req/s** against the C++ server with "
        f"the same pinning. {cal.get('reason', '')}."
    )
