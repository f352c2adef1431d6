"""The capacity study's analysis: each server's knee as a searched bracket, who was the limit
of every step, the generator's latency floor, and what a call costs the server in CPU.

Reads the search cells (scenario `search`): the generator's client.json (its steps, rates
and knee, servers/go/capacity_load) and the cell's resources.csv (server CPU, put on the
generator's clock by the cell's start time). Runs recorded before the generator (a
closed-loop ghz probe, then ghz steps at fractions of it) are named, not analysed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis import stats
from perflab.contract.parsers import MalformedRawFile, read_raw_text, resources_frame_rows

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from perflab.analysis.run import Run

STUDY = "capacity"
SEARCH = "search"
OLD_SCENARIOS = ("probe", "step")
# The SLO must sit at least this many times above the generator's floor for a step's
# failure to be the server's latency, not the generator's own.
SLO_MARGIN = 3.0
# A server using at least this share of its pinned CPUs is saturated.
SATURATED = 0.9
P999 = 0.999
# Searches that must each place a server's knee in a bracket within the search's width
# (issue 28's "a knee bracket within 10% from at least 3 repeats").
KNEE_SEARCHES = 3


@dataclass(frozen=True)
class Search:
    """One search cell: the server, which search it was, its generator report."""

    implementation: str
    search: int
    report: dict[str, Any]
    server_cpus: int
    steps: pd.DataFrame


def unix(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def server_cpu_at(samples: list[dict[str, str]], start_unix: float) -> Any:
    """A function (t_unix -> server CPU-seconds so far, summed over its processes),
    interpolated between the 100 ms samples."""
    import numpy as np

    series: dict[str, tuple[list[float], list[float]]] = {}
    for row in samples:
        if row["role"] == "server":
            ts, cpu = series.setdefault(row["pid"], ([], []))
            ts.append(start_unix + float(row["t"]))
            cpu.append(float(row["cpu_seconds"]))
    return lambda t: sum(float(np.interp(t, ts, cpu)) for ts, cpu in series.values())


STEP_COLUMNS = [
    "offered_rps",
    "repeat",
    "sent_rps",
    "achieved_rps",
    "scheduled",
    "ok",
    "failed",
    "max_lag_ms",
    "generator_cpu_fraction",
    "generator_bound",
    "held",
    "why",
    "measure_s",
]


def step_rows(report: dict[str, Any], cpu_at: Any, folder: Path) -> pd.DataFrame:
    """The report's steps, one row each, with their latency percentiles (ms, from intended
    send; `send_p99` from the actual send) and the server's CPU over the measured window."""
    import pandas as pd

    rows = []
    try:
        for step in report["steps"]:
            row = {key: step[key] for key in STEP_COLUMNS}
            for name, value in step["latency_ms"].items():
                row[f"latency_{name}"] = value
            row["send_p99"] = step["latency_from_send_ms"]["p99"]
            cpu = cpu_at(step["measure_end_unix"]) - cpu_at(step["measure_start_unix"])
            row["server_cores"] = cpu / step["measure_s"]
            row["server_cpu_us_per_call"] = 1e6 * cpu / step["ok"] if step["ok"] else math.nan
            row["window_series"] = step["windows"]
            row["errors"] = step.get("errors") or {}
            rows.append(row)
    except (KeyError, TypeError) as exc:
        raise MalformedRawFile(
            folder / "client.json", f"not a capacity_load report ({exc})"
        ) from exc
    return pd.DataFrame(rows)


def searches(run: Run) -> list[Search]:
    """Every search cell that wrote its report; a failed one is counted by the page's
    status table and failures, not here."""
    found = []
    for folder, record in run.cells_of(STUDY):
        if record["scenario"] != SEARCH or record["status"] == "failed":
            continue
        raw = folder / "client.json"
        report = json.loads(read_raw_text(raw))
        samples = resources_frame_rows(read_raw_text(folder / "resources.csv"))
        cpu_at = server_cpu_at(samples, unix(record["start"]))
        cpus = len((record.get("pinning") or {}).get("server_cpus") or []) or 1
        steps = step_rows(report, cpu_at, folder)
        steps.insert(0, "search", int(record["repeat"]))
        steps.insert(0, "implementation", str(record["implementation"]))
        found.append(Search(record["implementation"], int(record["repeat"]), report, cpus, steps))
    return found


def old_ladder(study_cells: pd.DataFrame) -> str:
    """Markdown: that the run's capacity cells were measured with the old ghz ladder; ''
    when it has none."""
    if study_cells.empty or not study_cells["scenario"].isin(OLD_SCENARIOS).any():
        return ""
    count = int(study_cells["scenario"].isin(OLD_SCENARIOS).sum())
    return (
        f"This run's {count} capacity cells were measured with the old ghz ladder (a "
        "closed-loop probe per server, then open-loop ghz steps at fractions of its rate). "
        "That method measured ghz as much as the servers (issue 28: ghz timed calls from "
        "its own sends, fell behind above half the probe's rate, and each step paid for a "
        "new process and connection), so this page does not analyse those cells; "
        "runs from the capacity_load generator on are analysed below."
    )


def all_steps(found: list[Search]) -> pd.DataFrame:
    import pandas as pd

    if not found:
        return pd.DataFrame(columns=["implementation", "search", *STEP_COLUMNS])
    return pd.concat([s.steps for s in found], ignore_index=True)


def slo_ms(found: list[Search]) -> float:
    return float(found[0].report["config"]["slo_ms"]) if found else math.nan


def common_rps(found: list[Search]) -> float:
    """Every search's first rate (the matrix's search_start_rps)."""
    return float(found[0].report["config"]["search_start_rps"]) if found else math.nan


def floor_ms(steps: pd.DataFrame, rate: float, reference: str = "cpp") -> float:
    """The generator's latency floor: the median p99 of the C++ server's steps at the
    common (low) rate; NaN when the run has none."""
    mine = steps[(steps["implementation"] == reference) & (steps["offered_rps"] == rate)]
    return float(mine["latency_p99"].median()) if not mine.empty else math.nan


def slo_sentence(slo: float, floor: float, rate: float) -> str:
    """Markdown: the fixed SLO and the floor, and whether the SLO sits clearly above it."""
    if slo != slo:
        return "No search was measured."
    if floor != floor:
        return (
            f"The SLO is p99 ≤ {slo:g} ms. The generator's floor was not measured (the run "
            "has no C++ search), so whether the SLO sits above it is not known."
        )
    said = (
        f"The SLO is p99 ≤ {slo:g} ms; the generator's floor, its p99 at {rate:,.0f} req/s "
        f"against the C++ server (median of its steps there), is {floor:.2f} ms"
    )
    if slo >= SLO_MARGIN * floor:
        return (
            f"{said}: the SLO sits {slo / floor:.1f}x above it, so a step fails it for the "
            "server's latency."
        )
    return (
        f"{said}: the SLO is only {slo / floor:.1f}x the floor (under {SLO_MARGIN:g}x), so a "
        "step can fail it for the generator's own latency and the knees below are not the "
        "servers' alone."
    )


@dataclass(frozen=True)
class Bracket:
    """A server's knee over its searches: held at `low`, not at `high` (inf: never reached
    a rate it failed; 0 low: held no rate). Over several searches it is the interval across
    them: the union of `each` search's own (low, high), every search's knee inside it."""

    implementation: str
    low: float
    high: float
    limit: str  # server | generator | search_max | unplaced
    searches: int
    why: str
    each: tuple[tuple[float, float], ...] = ()
    # How many of the searches ended at `limit` (the others placed a knee of their own).
    at_limit: int = 0

    def each_text(self) -> str:
        """Each search's own bracket, where more than one search placed the knee."""
        if self.searches < 2 or self.limit != "server":
            return "–"
        return "; ".join(f"[{low:,.0f}, {high:,.0f})" for low, high in self.each)

    def placed(self, share: float, searches: int) -> bool:
        """Whether at least `searches` searches each placed the server's knee in a bracket
        within `share` (high <= (1 + share) x low)."""
        tight = [low > 0 and high <= (1 + share) * low for low, high in self.each]
        return self.limit == "server" and sum(tight) >= searches

    def text(self) -> str:
        # One search stopped by the generator leaves the server unplaced, even where the
        # others held rates: said with the count, the row's held rates read as they are.
        of = f" in {self.at_limit} of {self.searches} searches" if self.searches > 1 else ""
        if self.limit == "generator" and self.low == 0:
            return f"not placed (generator limit at the first rate{of})"
        if self.limit == "generator":
            return f"at least {self.low:,.0f} (generator limit on this machine{of})"
        if self.limit == "search_max":
            return f"at least {self.low:,.0f} (every rate up to the search's highest held)"
        if self.limit == "unplaced" or self.low == 0:
            return f"below {self.high:,.0f} (no rate held)"
        return f"[{self.low:,.0f}, {self.high:,.0f})"


def brackets(found: list[Search]) -> list[Bracket]:
    """Per server, the bracket over its searches: the lowest rate held by every search's
    knee to the highest rate any search failed at (their union: the knee of each search
    lies in it); a limit other than the server's in any search is the server's limit."""
    by_server: dict[str, list[dict[str, Any]]] = {}
    for search in sorted(found, key=lambda s: s.search):
        by_server.setdefault(search.implementation, []).append(search.report["knee"])
    out = []
    for impl, knees in sorted(by_server.items()):
        limits = {k["limit"] for k in knees}
        limit = next((x for x in ("generator", "search_max", "unplaced") if x in limits), "server")
        high = max(k["high_rps"] for k in knees) if limit == "server" else math.inf
        if limit == "unplaced":
            high = max(k["high_rps"] for k in knees)
        why = "; ".join(k["why"] for k in knees)
        each = tuple((float(k["low_rps"]), float(k["high_rps"])) for k in knees)
        low = min(k["low_rps"] for k in knees)
        at_limit = sum(k["limit"] == limit for k in knees)
        out.append(Bracket(impl, low, high, limit, len(knees), why, each, at_limit))
    return out


def above(b: Bracket, other: Bracket) -> bool:
    """Whether `b`'s bracket lies wholly above `other`'s: b held a rate `other` failed at or
    beyond. An open bracket ("at least X") lies above nothing it could still reach."""
    return b is not other and b.low >= other.high


def ranked(found: list[Bracket]) -> list[tuple[str, Bracket]]:
    """(rank, bracket), best first. A rank is the range of places the brackets allow: from
    1 + the servers wholly above to n - the servers wholly below ("2" when they fix it,
    "1-5" when overlaps leave it open), so no server is placed above one it overlaps."""
    n = len(found)
    places = []
    for b in found:
        best = 1 + sum(above(o, b) for o in found)
        worst = n - sum(above(b, o) for o in found)
        places.append((best, worst, b))
    places.sort(key=lambda p: (p[0], p[1], -p[2].low, p[2].implementation))
    return [(str(best) if best == worst else f"{best}-{worst}", b) for best, worst, b in places]


def bracket_table(found: list[Bracket]) -> pd.DataFrame:
    import pandas as pd

    rows = [
        {
            "rank": rank,
            "server": b.implementation,
            "knee (req/s): held, not held": b.text(),
            "bracket width": f"{b.high / b.low - 1:.0%}" if b.limit == "server" and b.low else "–",
            "searches": b.searches,
            "each search's bracket": b.each_text(),
            "what ended the search": b.why,
        }
        for rank, b in ranked(found)
    ]
    return pd.DataFrame(rows).set_index("rank") if rows else pd.DataFrame()


def placed_sentence(found: list[Bracket], share: float, searches: int = KNEE_SEARCHES) -> str:
    """Markdown: which servers had their knee placed within `share` by at least `searches`
    searches each (the interval across them is their bracket's union), and why not the rest."""
    if not found:
        return ""
    placed = [b.implementation for b in found if b.placed(share, searches)]
    rest = []
    for b in found:
        if b.implementation in placed:
            continue
        if b.limit != "server":
            rest.append(f"{b.implementation} ({b.text()})")
            continue
        tight = sum(low > 0 and high <= (1 + share) * low for low, high in b.each)
        rest.append(f"{b.implementation} ({tight} of {b.searches} searches within {share:.0%})")
    parts = []
    if placed:
        parts.append(
            f"Knee placed within {share:.0%} by at least {searches} searches each: "
            + ", ".join(f"**{name}**" for name in placed)
            + "; its interval across them is the union of their brackets."
        )
    if rest:
        parts.append(f"Not placed within {share:.0%} by {searches} searches: {'; '.join(rest)}.")
    return " ".join(parts)


def share_of(found: list[Search]) -> float:
    """The bracket width the searches bisected to (the matrix's `bracket`)."""
    return float(found[0].report["config"]["bracket"]) if found else math.nan


def ranking_sentence(found: list[Bracket]) -> str:
    """Markdown: every order the brackets support (a server above those wholly below it),
    and that every other pair overlaps and is not ranked."""
    if not found:
        return "No search was measured: there is no knee to report."
    order = [b for _, b in ranked(found)]
    facts = []
    for b in order:
        below = [o.implementation for o in order if above(b, o)]
        if below:
            facts.append(f"**{b.implementation}** above {', '.join(below)}")
    if not facts:
        names = ", ".join(f"**{b.implementation}**" for b in found)
        return (
            f"The knees of {names} overlap: this run cannot rank them "
            "(a server ranks above another only where their brackets do not overlap)."
        )
    return (
        "Ranked only where brackets do not overlap: " + "; ".join(facts) + ". Every other "
        'pair overlaps (an open bracket, "at least X", overlaps every bracket reaching past '
        "X), so this run does not order it."
    )


def bound_sentence(found: list[Bracket], steps: pd.DataFrame) -> str:
    """Markdown: which searches the generator ended, and where they are measured instead."""
    if not found:
        return ""
    bound = [b.implementation for b in found if b.limit == "generator"]
    marked = int(steps["generator_bound"].sum()) if not steps.empty else 0
    if not bound:
        return (
            f"The generator kept its schedule and had CPU to spare in every search's rates "
            f"({marked} of {len(steps)} steps marked generator-bound): every knee is the server's."
        )
    readings = "; ".join(f"{b.implementation} {b.text()}" for b in found if b.limit == "generator")
    return (
        f"The searches of {', '.join(bound)} ended at a rate the generator could not keep "
        f"({marked} of {len(steps)} steps marked generator-bound: it used its CPUs up, or sent "
        "late in a 100 ms window by enough to explain the step's failure or fell short of its "
        f"schedule), so their knee is a lower bound: {readings} req/s. "
        "A client host of its own (the aws inventory) is where the same code measures them."
    )


def rate_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Per server and offered rate, over its steps: median achieved req/s, p50/p99/p99.9
    (ms; p99.9 where a step measured the calls it needs), p99 timed from the actual send,
    server CPU, how many steps held and how many were generator-bound."""
    if steps.empty:
        return steps
    need = stats.samples_needed(P999)
    steps = steps.assign(p999=steps["latency_p999"].where(steps["scheduled"] >= need))
    table = steps.groupby(["implementation", "offered_rps"]).agg(
        achieved_rps=("achieved_rps", "median"),
        p50_ms=("latency_p50", "median"),
        p99_ms=("latency_p99", "median"),
        p99_9_ms=("p999", "median"),
        p99_from_send_ms=("send_p99", "median"),
        server_cores=("server_cores", "median"),
        server_cpu_us_per_call=("server_cpu_us_per_call", "median"),
        steps=("repeat", "count"),
        held=("held", "sum"),
        generator_bound=("generator_bound", "sum"),
    )
    if table["p99_9_ms"].isna().all():  # p999_sentence says why
        table = table.drop(columns="p99_9_ms")
    return table.round(3)


def rate_table_shown(steps: pd.DataFrame) -> pd.DataFrame:
    """rate_table for the page: a p99.9 that a rate's steps had too few calls for reads "–"
    (p999_sentence says why) rather than a column of NaN."""
    table = rate_table(steps)
    if "p99_9_ms" in table:
        p999 = table["p99_9_ms"]
        table["p99_9_ms"] = p999.astype(object).where(p999.notna(), "–")
    return table


def p999_sentence(steps: pd.DataFrame) -> str:
    need = stats.samples_needed(P999)
    if steps.empty:
        return ""
    short = steps[steps["scheduled"] < need]
    if short.empty:
        return f"p99.9 is shown for every step: each measured at least {need:,} calls."
    return (
        f"p99.9 is not shown for {len(short)} of {len(steps)} steps: they measured fewer than "
        f"the {need:,} calls it needs (the project's percentile rule; the full profile's steps do)."
    )


def at_common_rate(steps: pd.DataFrame, rate: float) -> pd.DataFrame:
    """Per server at the common rate: whether most steps held, p99, server CPU µs per call
    and server cores busy (medians over its steps there)."""
    import pandas as pd

    mine = steps[steps["offered_rps"] == rate]
    if mine.empty:
        return pd.DataFrame()
    table = mine.groupby("implementation").agg(
        steps=("repeat", "count"),
        held=("held", "sum"),
        p99_ms=("latency_p99", "median"),
        server_cpu_us_per_call=("server_cpu_us_per_call", "median"),
        cpu_low=("server_cpu_us_per_call", "min"),
        cpu_high=("server_cpu_us_per_call", "max"),
        server_cores=("server_cores", "median"),
    )
    return table.sort_values("server_cpu_us_per_call").round(3)


def cpu_sentence(common: pd.DataFrame, rate: float) -> str:
    """Markdown: the cheapest and dearest server per call at the common rate, among those
    that held it; those that did not are named apart."""
    if common.empty:
        return "No server was measured at the common rate."
    held = common[2 * common["held"] > common["steps"]]
    missed = sorted(set(common.index) - set(held.index))
    if held.empty:
        return f"No server held the common rate, {rate:,.0f} req/s: CPU per call is not compared."
    best, worst = held.index[0], held.index[-1]
    cost = held["server_cpu_us_per_call"]
    text = (
        f"At the common rate, {rate:,.0f} req/s, **{best}** costs its server the least CPU per "
        f"call, {cost[best]:.1f} µs"
    )
    if len(held) > 1:
        text += f"; **{worst}** the most, {cost[worst]:.1f} µs ({cost[worst] / cost[best]:.1f}x)"
    if missed:
        text += f"; {', '.join(missed)} did not hold that rate, so theirs is not compared"
    return text + "."


def per_core(found: list[Search], steps: pd.DataFrame) -> pd.DataFrame:
    """Per server, at its step with the highest achieved rate: achieved req/s per server
    core busy (gRPC's benchmarks' "qps per server core"), and whether the server was
    saturated there (busy on at least SATURATED of its pinned CPUs)."""
    import pandas as pd

    cpus = {s.implementation: s.server_cpus for s in found}
    limits = {b.implementation: b.limit for b in brackets(found)}
    rows = []
    for impl, mine in steps.groupby("implementation"):
        top = mine.loc[mine["achieved_rps"].idxmax()]
        busy = float(top["server_cores"])
        saturated = busy >= SATURATED * cpus[str(impl)]
        rows.append(
            {
                "server": impl,
                "achieved req/s": round(float(top["achieved_rps"])),
                "server cores busy": round(busy, 2),
                "server CPUs pinned": cpus[str(impl)],
                # Only at saturation is it the server's throughput per core.
                "req/s per server core": round(float(top["achieved_rps"]) / busy)
                if saturated and busy
                else "– (not saturated)",
                "saturated": "yes"
                if saturated
                else unsaturated_why(limits.get(str(impl)), busy / cpus[str(impl)]),
            }
        )
    return pd.DataFrame(rows).set_index("server") if rows else pd.DataFrame()


def unsaturated_why(limit: str | None, share: float) -> str:
    """Why a server's busiest step did not saturate it (`share`: of its pinned CPUs busy): the
    generator ended its search, the search's highest rate did, or the server's latency went
    over the SLO first (a server that queues before it runs out of CPU), which the page must
    not blame on the generator."""
    if limit == "generator":
        return "no: the generator's limit came first"
    if limit == "search_max":
        return "no: the search's highest rate came first"
    return f"no: {share:.0%} busy; its latency ended the search first"


def not_measured(
    brackets_: list[Bracket], steps: pd.DataFrame, floor: float, cores: pd.DataFrame | None = None
) -> list[str]:
    """What this machine could not measure, each a sentence; [] when nothing. `cores`:
    per_core's table, whose unsaturated servers have no throughput per core."""
    out = [
        f"The knee of {b.implementation}, in req/s: {b.text()}."
        for b in brackets_
        if b.limit == "generator"
    ]
    out += [
        f"The knee of {b.implementation} above {b.low:,.0f} req/s: the search's highest rate held."
        for b in brackets_
        if b.limit == "search_max"
    ]
    if cores is not None and not cores.empty:
        idle = sorted(cores.index[cores["saturated"] != "yes"])
        if idle:
            out.append(f"Throughput per server core of {', '.join(idle)}: never saturated.")
    if floor != floor:
        out.append("The generator's floor: the run has no C++ search.")
    need = stats.samples_needed(P999)
    if not steps.empty and (steps["scheduled"] < need).any():
        out.append(f"p99.9 of steps with fewer than {need:,} calls.")
    return out


def series_step(found: list[Search]) -> pd.Series | None:
    """The step shown as a time series: at the highest rate held by a server-limited
    search (the steadiest evidence that a held step was steady), else any held step. Only a
    rate its search held counts (most of its steps held): one lucky step at a rate that
    failed, above the knee the page reports, once stood for "the highest rate held"."""
    steps = all_steps(found)
    if steps.empty:
        return None
    by_rate = steps.groupby(["implementation", "search", "offered_rps"])["held"]
    rate_held = 2 * by_rate.transform("sum") > by_rate.transform("count")
    held = steps[steps["held"].astype(bool) & rate_held]
    if held.empty:
        return None
    knees = {b.implementation for b in brackets(found) if b.limit == "server"}
    pool = held[held["implementation"].isin(knees)] if knees & set(held["implementation"]) else held
    return pool.sort_values(["offered_rps", "repeat"]).iloc[-1]


def series_figure(step: pd.Series) -> Figure:
    """One step's 100 ms windows: calls scheduled, sent and completed a second, and p99."""
    import matplotlib.pyplot as plt
    import pandas as pd

    w = pd.DataFrame(step["window_series"])
    fig, (rate_ax, p99_ax) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    # Scheduled last and dashed, so it shows where sent lies on it.
    for column, style in (("sent", "-"), ("ok", "-"), ("scheduled", "k--")):
        label = "completed" if column == "ok" else column
        rate_ax.plot(w["t"], w[column] * 10, style, label=label)
    # From zero: a 1% wobble drawn across the whole panel would read as an unsteady step.
    rate_ax.set_ylim(0, float((w[["scheduled", "sent", "ok"]] * 10).max().max()) * 1.15)
    rate_ax.set_ylabel("calls/s")
    p99_ax.plot(
        w["t"], w["p99_ms"], "-", color="black", label="p99 of calls completed, from intended send"
    )
    p99_ax.set_ylim(0, float(w["p99_ms"].max()) * 1.15)
    p99_ax.set_ylabel("p99 (ms)")
    for ax in (rate_ax, p99_ax):
        settle = w[w["settle"]]
        if not settle.empty:
            ax.axvspan(
                0,
                float(settle["t"].max()) + 0.1,
                color="grey",
                alpha=0.2,
                label="settle (discarded)",
            )
        ax.legend(fontsize=8, loc="lower right")
    p99_ax.set_xlabel("seconds since the step's start (100 ms windows)")
    rate_ax.set_title(
        f"{step['implementation']} at {step['offered_rps']:,.0f} req/s offered (repeat "
        f"{step['repeat']:.0f}): {'held' if step['held'] else 'not held'}, "
        f"p99 of its measured calls {step['latency_p99']:.2f} ms"
    )
    fig.tight_layout()
    return fig


def latency_figure(steps: pd.DataFrame, slo: float, floor: float) -> Figure:
    """Per server: p50/p99/p99.9 against achieved req/s (log-log), the SLO and the floor as
    lines, generator-bound rates hollow; server cores busy on a second axis beside."""
    import matplotlib.pyplot as plt

    from perflab.analysis import plots

    table = rate_table(steps).reset_index()
    impls = sorted(table["implementation"].unique())
    cols = 2
    rows = max(1, math.ceil(len(impls) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.2 * rows), squeeze=False)
    for ax, impl in zip(axes.flat, impls, strict=False):
        part = table[table["implementation"] == impl]
        bound = part["generator_bound"] > 0
        for column, color in (
            ("p50_ms", "tab:blue"),
            ("p99_ms", "tab:red"),
            ("p99_9_ms", "tab:purple"),
        ):
            if column not in part or part[column].isna().all():
                continue
            ax.plot(part["achieved_rps"], part[column], "-", color=color, label=column[:-3])
            ax.plot(
                part.loc[bound, "achieved_rps"],
                part.loc[bound, column],
                "o",
                mfc="none",
                color=color,
            )
            ax.plot(part.loc[~bound, "achieved_rps"], part.loc[~bound, column], "o", color=color)
        ax.axhline(slo, color="grey", linestyle="--", label="SLO")
        if floor == floor:
            ax.axhline(floor, color="grey", linestyle=":", label="generator floor")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(impl, fontsize=10)
        ax.set_ylabel("latency (ms)")
        ax.set_xlabel("achieved req/s")
        cpu = ax.twinx()
        cpu.plot(part["achieved_rps"], part["server_cores"], "s:", color="tab:green", markersize=3)
        cpu.set_ylabel("server cores busy", color="tab:green")
        cpu.set_ylim(0, max(1.1, float(part["server_cores"].max()) * 1.1))
        ax.legend(fontsize=7, loc="upper left")
        for axis in (ax.xaxis, ax.yaxis):
            plots.log_ticks(axis)
    for ax in list(axes.flat)[len(impls) :]:
        ax.set_visible(False)
    fig.suptitle("latency from intended send against achieved rate (hollow: generator-bound)")
    fig.tight_layout()
    return fig


def error_table(steps: pd.DataFrame) -> pd.DataFrame:
    """Failed calls per server and gRPC code, summed over its measured steps."""
    import pandas as pd

    if steps.empty:
        return pd.DataFrame()
    rows = [
        {"server": impl, "code": code, "calls": count}
        for impl, errors in zip(steps["implementation"], steps["errors"], strict=True)
        for code, count in errors.items()
    ]
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).groupby(["server", "code"]).sum()


def markdown_bold_to_html(text: str) -> str:
    """The sentences mark server names **bold** for the notebook; HTML gets <b>."""
    parts = text.split("**")
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


def index_html(run: Run) -> str:
    """The overview's capacity brackets (after the verdicts), '' when the run has none."""
    found = searches(run)
    if not found:
        return ""
    knees = brackets(found)
    slo = slo_ms(found)
    said = f"A server's knee is the highest rate it holds with p99 ≤ {slo:g} ms (the SLO). "
    return (
        "<h2>Capacity: the knee at the SLO</h2>\n"
        + f"<p>{said if slo == slo else ''}{markdown_bold_to_html(ranking_sentence(knees))}</p>\n"
        + bracket_table(knees).to_html()
    )
