"""The capacity study's analysis: latency against offered load, the knee, CPU per call.

Works on `frames.read_run` rows of study "capacity". Step cells carry everything the analysis
needs in their params, recorded when they ran: `fraction` of the probe's closed-loop req/s,
`offered_rps` (what ghz was told to send), `reference_rps` (the probe's rate), the measured
`duration_s`, and the knobs they are judged by (`slo_ms`, `slo_unloaded_multiple`,
`achieved_within`). Nothing here re-derives a rate.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from perflab.analysis import stats
from perflab.contract.parsers import read_raw_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from perflab.analysis.run import Run

STUDY = "capacity"
STEP = "step"
PARAMS = ["fraction", "offered_rps", "reference_rps", "duration_s"]
KNOBS = ["slo_ms", "slo_unloaded_multiple", "achieved_within"]
METRICS = [
    "count",
    "ok",
    "errors",
    "rps",
    "latency_p50",
    "latency_p90",
    "latency_p99",
    "server_cpu_us_per_call",
    "client_cpu_seconds",
]
# The two SLOs every server is judged at.
FIXED, RELATIVE = "fixed", "relative"


def steps(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per step cell: its params, status, and the metrics it measured (NaN where a
    failed cell measured none), plus the sent rate and server CPU-seconds per 1,000 calls."""
    import pandas as pd

    rows = frame[(frame["study"] == STUDY) & (frame["scenario"] == STEP)]
    if rows.empty:
        return pd.DataFrame(columns=["implementation", "repeat", "status", *PARAMS, *METRICS])
    keys = ["cell_id", "implementation", "repeat", "status", *PARAMS, *KNOBS]
    wide = rows.pivot_table(index=keys, columns="metric", values="value", aggfunc="first")
    wide = wide.reindex(columns=METRICS).reset_index()
    wide.columns.name = None
    for name in [*PARAMS, *KNOBS, "repeat"]:
        wide[name] = wide[name].astype(float)
    wide["sent_rps"] = wide["count"] / wide["duration_s"]
    wide["server_cpu_s_per_1000"] = wide["server_cpu_us_per_call"] / 1000
    return wide.sort_values(["implementation", "repeat", "fraction"], ignore_index=True)


# ghz reports percentiles up to p99; p99.9 comes from the per-call records it wrote, where
# they are enough for it (stats.samples_needed(0.999)).
P999 = 0.999


def ok_latencies_ms(cell_dir: Path) -> list[float]:
    """The latencies (ms) of the successful calls ghz.json lists (perflab keeps an evenly
    spaced sample of at most perflab.host.ghz.DETAILS_KEPT of them)."""
    details = json.loads(read_raw_text(cell_dir / "ghz.json")).get("details") or []
    return [d["latency"] / 1e6 for d in details if d.get("status") == "OK"]


def with_p999(step_rows: pd.DataFrame, run: Run) -> pd.DataFrame:
    """Adds `latency_p99.9` (ms) from each step's per-call records where they hold enough
    calls for it, NaN elsewhere; `p999_samples` is how many there were."""
    import numpy as np

    values, counts = [], []
    for row in step_rows.itertuples(index=False):
        folder = run.folder / STUDY / str(row.cell_id)
        latencies = ok_latencies_ms(folder) if row.status != "failed" else []
        counts.append(len(latencies))
        supported = stats.percentile_supported(P999, len(latencies))
        values.append(float(np.percentile(latencies, 100 * P999)) if supported else math.nan)
    return step_rows.assign(**{"latency_p99.9": values, "p999_samples": counts})


def p999_sentence(step_rows: pd.DataFrame) -> str:
    """Markdown: for how many steps p99.9 is shown, and what it needs."""
    if step_rows.empty:
        return "No step was measured."
    need = stats.samples_needed(P999)
    shown = int(step_rows["latency_p99.9"].notna().sum()) if "latency_p99.9" in step_rows else 0
    if shown == len(step_rows):
        return f"p99.9 is shown for every step: each recorded at least {need:,} calls."
    missing = step_rows[step_rows["p999_samples"] < need]
    made = missing[missing["count"] >= need]
    short = missing[missing["count"] < need]
    why = []
    if not made.empty:
        why.append(
            f"{len(made)} made that many calls but kept fewer successful per-call latencies "
            f"in their raw file, a thinned sample (as few as {int(made['p999_samples'].min()):,})"
        )
    if not short.empty:
        why.append(f"{len(short)} made fewer calls (as few as {int(short['count'].min()):,})")
    return (
        f"p99.9 is shown for {shown} of {len(step_rows)} steps: it needs {need:,} per-call "
        f"latencies (the project's percentile rule). Of the others, {'; '.join(why)}."
    )


def unloaded_p50(step_rows: pd.DataFrame) -> pd.Series:
    """Per server, the median p50 of its lowest step: the server all but idle."""
    lowest = step_rows[
        step_rows["fraction"] == step_rows.groupby("implementation")["fraction"].transform("min")
    ]
    return lowest.groupby("implementation")["latency_p50"].median()


def slo_ms(step_rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """{server: {FIXED: ms, RELATIVE: ms}}: the fixed SLO and the unloaded-p50 multiple."""
    base = unloaded_p50(step_rows)
    out = {}
    for impl, group in step_rows.groupby("implementation"):
        fixed = float(group["slo_ms"].iloc[0])
        relative = float(group["slo_unloaded_multiple"].iloc[0]) * float(base.get(impl, math.nan))
        out[str(impl)] = {FIXED: fixed, RELATIVE: relative}
    return out


@dataclass(frozen=True)
class Knee:
    """One server, one repeat, one SLO: the highest offered rate held at every step up to it."""

    implementation: str
    repeat: int
    slo: str
    slo_ms: float
    knee_rps: float  # 0: not even the lowest step held
    lowest_rps: float  # the lowest step's offered rate: a knee of 0 lies below it
    past_rps: float  # the offered rate of the step that did not hold: the knee lies below it
    server_cpu_us_per_call: float  # at the knee step; NaN without one
    floor: bool  # the search ended on a bound step, or every step held: at least this
    why: str  # what ended the search


def step_fails(step: pd.Series, limit_ms: float) -> str:
    """Why a step is past the knee ('' when it held); a bound step is not the server's."""
    if step["status"] == "bound":
        return f"the step at {step['offered_rps']:,.0f} req/s is bound (the load generator's limit)"
    if step["status"] == "failed":
        return f"the step at {step['offered_rps']:,.0f} req/s failed"
    if not step["rps"] >= (1 - step["achieved_within"]) * step["offered_rps"]:
        return (
            f"achieved {step['rps']:,.0f} of {step['offered_rps']:,.0f} req/s offered "
            f"(under {1 - step['achieved_within']:.0%})"
        )
    if not step["latency_p99"] <= limit_ms:
        return (
            f"p99 {step['latency_p99']:.2f} ms above {limit_ms:.2f} ms "
            f"at {step['offered_rps']:,.0f} req/s"
        )
    return ""


def knee_of(run: pd.DataFrame, slo: str, limit_ms: float) -> Knee:
    """`run`: one server's steps of one repeat, by increasing fraction."""
    knee, cpu, why, floor, past = 0.0, math.nan, "", True, math.nan
    for _, step in run.iterrows():
        why = step_fails(step, limit_ms)
        if why:
            floor = step["status"] == "bound"
            past = math.nan if floor else float(step["offered_rps"])
            break
        knee, cpu = float(step["offered_rps"]), float(step["server_cpu_us_per_call"])
    first = run.iloc[0]
    return Knee(
        str(first["implementation"]),
        int(first["repeat"]),
        slo,
        limit_ms,
        knee,
        float(first["offered_rps"]),
        past,
        cpu,
        floor,
        why or "every step held: the knee is above the highest step",
    )


def knees(step_rows: pd.DataFrame) -> pd.DataFrame:
    """Every server's knee in every repeat at both SLOs."""
    import pandas as pd

    limits = slo_ms(step_rows)
    found = [
        knee_of(run.sort_values("fraction"), slo, limits[str(impl)][slo])
        for (impl, _), run in step_rows.groupby(["implementation", "repeat"])
        for slo in (FIXED, RELATIVE)
    ]
    return pd.DataFrame([k.__dict__ for k in found])


def ranking(knee_rows: pd.DataFrame) -> pd.DataFrame:
    """Per server: median knee and interval at each SLO, server CPU per call at the fixed
    SLO's knee, whether a figure is a floor; sorted by the fixed SLO's knee, best first."""
    import pandas as pd

    if knee_rows.empty:
        return pd.DataFrame()
    rows = []
    for impl, group in knee_rows.groupby("implementation"):
        row: dict[str, object] = {"implementation": impl}
        for slo in (FIXED, RELATIVE):
            part = group[group["slo"] == slo]
            row[slo] = stats.median_ci(part["knee_rps"].tolist())
            row[f"{slo}_floor"] = bool(part["floor"].any())
            row[f"{slo}_slo_ms"] = float(part["slo_ms"].iloc[0])
        row["lowest_rps"] = float(group["lowest_rps"].min())
        row["past"] = stats.median_ci(group[group["slo"] == FIXED]["past_rps"].tolist())
        row["cpu"] = stats.median_ci(
            group[group["slo"] == FIXED]["server_cpu_us_per_call"].tolist()
        )
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["order"] = [e.median for e in table[FIXED]]
    return table.sort_values("order", ascending=False, ignore_index=True).drop(columns="order")


# A knee whose search ended on a bound step before any step held: nothing is known.
UNJUDGED = "– (bound before any step held)"


def estimate_text(
    estimate: stats.Estimate, floor: bool = False, digits: int = 0, lowest: float = math.nan
) -> str:
    """'12,300 [11,900, 12,500]', '≥ ' ahead when it is a floor; one repeat: the value.
    A knee of 0 means no step held: the server was never offered less than its lowest step
    (`lowest`), so such a knee, or a median pulled under that step by one, reads '< lowest',
    never as a rate."""
    if estimate.n == 0 or estimate.median != estimate.median:
        return "–"
    if floor and estimate.median == 0:
        return UNJUDGED
    below = f"< {lowest:,.{digits}f}"
    if lowest == lowest and estimate.median < lowest:
        held = "no step held" if estimate.median == 0 else "no step held in some repeats"
        return f"{below} ({held})"
    text = f"{estimate.median:,.{digits}f}"
    if estimate.low == estimate.low:
        low = below if lowest == lowest and estimate.low == 0 else f"{estimate.low:,.{digits}f}"
        text += f" [{low}, {estimate.high:,.{digits}f}]"
    return ("≥ " if floor else "") + text


def ranking_table(table: pd.DataFrame) -> pd.DataFrame:
    """The ranked table the page and the index show: sustainable req/s at each SLO and
    server CPU µs per call, each a median with its interval over repeats."""
    import pandas as pd

    if table.empty:
        return pd.DataFrame()
    rows = []
    for rank, row in enumerate(table.itertuples(index=False), start=1):
        rows.append(
            {
                "rank": rank,
                "server": row.implementation,
                f"req/s at p99 ≤ {row.fixed_slo_ms:g} ms": estimate_text(
                    row.fixed, row.fixed_floor, lowest=row.lowest_rps
                ),
                # The steps bracket the knee: how finely this run placed it.
                "first step past it (req/s)": estimate_text(row.past),
                "relative SLO (ms)": f"{row.relative_slo_ms:.2f}",
                "req/s at p99 ≤ relative SLO": estimate_text(
                    row.relative, row.relative_floor, lowest=row.lowest_rps
                ),
                "server CPU µs per call at the knee": estimate_text(row.cpu, digits=1),
            }
        )
    return pd.DataFrame(rows).set_index("rank")


def interval_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The ranking's estimates in stats.interval_sentence's shape (n, interval, coverage)."""
    import pandas as pd

    columns = (FIXED, RELATIVE, "past", "cpu")
    estimates = [e for column in columns for e in table.get(column, [])]
    return pd.DataFrame(
        {
            "n": [e.n for e in estimates],
            "interval": [e.interval for e in estimates],
            "coverage": [e.coverage for e in estimates],
        }
    )


def knee_sentence(table: pd.DataFrame) -> str:
    """Markdown: which server sustains the most and the least at the fixed SLO."""
    if table.empty:
        return "No step of any server was measured: there is no knee to report."
    held = table[[e.median > 0 for e in table[FIXED]]]
    slo = f"p99 ≤ {table['fixed_slo_ms'].iloc[0]:g} ms"
    if held.empty and not table["fixed_floor"].any():
        return f"No server held even its lowest step at {slo}: no knee."
    if held.empty:
        return (
            f"No server's knee at {slo} could be placed: "
            + ", ".join(
                f"{row.implementation} ({'bound' if row.fixed_floor else 'held no step'})"
                for row in table.itertuples(index=False)
            )
            + "."
        )
    best, worst = held.iloc[0], held.iloc[-1]
    sentence: str = (
        f"At {slo}, **{best['implementation']}** sustains the most offered load, "
        f"{estimate_text(best[FIXED], best['fixed_floor'], lowest=best['lowest_rps'])} req/s"
    )
    if len(held) > 1:
        sentence += (
            f"; **{worst['implementation']}** the least, "
            f"{estimate_text(worst[FIXED], worst['fixed_floor'], lowest=worst['lowest_rps'])} req/s"
        )
    rest = table[[e.median == 0 for e in table[FIXED]]]
    failed = sorted(rest.loc[~rest["fixed_floor"], "implementation"])
    unjudged = sorted(rest.loc[rest["fixed_floor"], "implementation"])
    if failed:
        sentence += f"; {', '.join(failed)} held no step at it"
    if unjudged:
        sentence += (
            f"; {', '.join(unjudged)} reached a step the load generator could not hold "
            "(bound) before any step held, so this run cannot place them"
        )
    return sentence + "."


def floor_sentence(table: pd.DataFrame) -> str:
    """Markdown: what '≥' means where the table has one, '' where it has none."""
    floors = [
        str(row["implementation"])
        for _, row in table.iterrows()
        if row["fixed_floor"] or row["relative_floor"]
    ]
    if not floors:
        return ""
    return (
        f"'≥': the knee of {', '.join(floors)} is a lower bound: its search ended on a step "
        "the load generator could not hold (bound), or every step up to the highest held."
    )


def probe_sentence(study_cells: pd.DataFrame) -> str:
    """Markdown: the servers whose closed-loop probe was bound, so that their steps are
    fractions of a lower bound of their rate; '' when no probe was."""
    probes = study_cells[(study_cells["scenario"] != STEP) & (study_cells["status"] == "bound")]
    if probes.empty:
        return ""
    names = ", ".join(sorted(probes["implementation"].astype(str).unique()))
    return (
        f"The closed-loop probe of {names} was bound (the load generator's limit): the "
        "steps offered them fractions of a lower bound of their rate, so even their "
        "highest step may not have reached what the server can take."
    )


def bound_sentence(step_rows: pd.DataFrame) -> str:
    """Markdown: the steps marked bound, named, and what that means; or that there were none."""
    bound = step_rows[step_rows["status"] == "bound"]
    if step_rows.empty:
        return "No step was measured."
    if bound.empty:
        return (
            f"The load generator held the schedule of all {len(step_rows)} steps: "
            "none is marked bound."
        )
    named = ", ".join(
        f"{row.implementation} at {row.offered_rps:,.0f} req/s (repeat {row.repeat:.0f})"
        for row in bound.itertuples(index=False)
    )
    return (
        f"{len(bound)} of {len(step_rows)} steps are marked bound, the load generator's limit "
        f"and not the server's: {named}. A knee search ends at a bound step as a lower bound."
    )


def step_table(step_rows: pd.DataFrame) -> pd.DataFrame:
    """Per server and step, medians over repeats: offered, sent and achieved req/s,
    p50/p90/p99 (ms), errors (summed), server CPU-s per 1,000 calls, client CPU-s, and how
    many repeats were bound."""
    if step_rows.empty:
        return step_rows
    if "latency_p99.9" not in step_rows:  # shown only where with_p999 found enough calls
        step_rows = step_rows.assign(**{"latency_p99.9": math.nan})
    grouped = step_rows.groupby(["implementation", "fraction"])
    table = grouped.agg(
        offered_rps=("offered_rps", "median"),
        sent_rps=("sent_rps", "median"),
        achieved_rps=("rps", "median"),
        p50_ms=("latency_p50", "median"),
        p90_ms=("latency_p90", "median"),
        p99_ms=("latency_p99", "median"),
        p99_9_ms=("latency_p99.9", "median"),
        errors=("errors", "sum"),
        server_cpu_s_per_1000_ok_calls=("server_cpu_s_per_1000", "median"),
        client_cpu_s=("client_cpu_seconds", "median"),
        repeats=("repeat", "count"),
        bound=("status", lambda s: int((s == "bound").sum())),
    )
    if table["p99_9_ms"].isna().all():  # p999_sentence says why there is none
        table = table.drop(columns="p99_9_ms")
    return table.round(
        {
            "offered_rps": 0,
            "sent_rps": 0,
            "achieved_rps": 0,
            "p50_ms": 3,
            "p90_ms": 3,
            "p99_ms": 3,
            "p99_9_ms": 3,
            "server_cpu_s_per_1000_ok_calls": 4,
            "client_cpu_s": 2,
        }
    )


def latency_figure(
    step_rows: pd.DataFrame, knee_rows: pd.DataFrame, colors: dict[str, str]
) -> Figure:
    """p99 against offered req/s for every server on one log-log plot; a bound step hollow,
    each server's median knee at the fixed SLO a star, the fixed SLO a dashed line."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    medians = step_table(step_rows).reset_index()
    for impl, part in medians.groupby("implementation"):
        color = colors.get(str(impl))
        ax.plot(part["offered_rps"], part["p99_ms"], "-", color=color, label=str(impl))
        held = part["bound"] == 0
        ax.plot(part.loc[held, "offered_rps"], part.loc[held, "p99_ms"], "o", color=color)
        ax.plot(
            part.loc[~held, "offered_rps"], part.loc[~held, "p99_ms"], "o", mfc="none", color=color
        )
        knee = knee_point(knee_rows, str(impl))
        if knee is not None:
            ax.plot(*knee, "*", color=color, markersize=16, markeredgecolor="black")
    if not step_rows.empty:
        ax.axhline(
            float(step_rows["slo_ms"].iloc[0]), color="grey", linestyle="--", label="fixed SLO"
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered load (requests per second)")
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title(
        "capacity: p99 against offered load (star: median knee on the fixed SLO; hollow: bound)"
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def knee_point(knee_rows: pd.DataFrame, impl: str) -> tuple[float, float] | None:
    """(median knee, fixed SLO) of a server at the fixed SLO: where its curve meets the SLO.
    The median of the repeats' knees need not be a step, so it sits on the SLO line, not on
    a step's p99. None when it held no step."""
    mine = knee_rows[(knee_rows["implementation"] == impl) & (knee_rows["slo"] == FIXED)]
    if mine.empty or not float(mine["knee_rps"].median()) > 0:
        return None
    return float(mine["knee_rps"].median()), float(mine["slo_ms"].iloc[0])


def index_html(run: Run) -> str:
    """The overview's capacity ranking (after the verdicts), '' when the run has no steps."""
    step_rows = steps(run.frame)
    if step_rows.empty:
        return ""
    table = ranking(knees(step_rows))
    return (
        "<h2>Capacity: sustainable req/s at the SLO</h2>\n"
        + f"<p>{markdown_bold_to_html(knee_sentence(table))}</p>\n"
        + ranking_table(table).to_html()
        + f"\n<p>{stats.interval_sentence(interval_summary(table))}</p>"
    )


def markdown_bold_to_html(text: str) -> str:
    """The sentences mark server names **bold** for the notebook; HTML gets <b>."""
    parts = text.split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


def knee_reasons(knee_rows: pd.DataFrame) -> pd.DataFrame:
    """Per server, repeat and SLO: the knee, the SLO it was judged at, what ended it."""
    if knee_rows.empty:
        return knee_rows
    table = knee_rows[["implementation", "repeat", "slo", "slo_ms", "knee_rps", "why"]]
    return table.round({"slo_ms": 3}).set_index(["implementation", "repeat", "slo"])
