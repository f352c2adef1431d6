"""The pyclients study's analysis (seed 001): the evidence tables and other findings.

Everything here works on `perflab.analysis.frames` rows of study "pyclients" (params `method`,
`loop`, `stack`) and on their `stats.summarize` by SUMMARY_KEYS; the tables show the current
library stack, and `stack_attribution` says for each claim judged on both stacks whether its
result follows the library versions or the machine. The seed's claims are decided
by the verdict engine (`perflab.analysis.verdicts`); `findings` adds what the claims do not say,
generated from the numbers, so a new run re-states it, never a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from perflab.analysis import stats, tables
from perflab.analysis import verdicts as v
from perflab.contract import params
from perflab.contract.params import CURRENT_STACK

if TYPE_CHECKING:
    import pandas as pd

STUDY = "pyclients"
SUMMARY_KEYS = ["scenario", "method", "client", "loop"]
SCENARIOS = ["request_reply", "stream_10", "stream_100000"]
SCENARIO_NAMES = {
    "request_reply": "request-reply",
    "stream_10": "a stream of 10 numbers",
    "stream_100000": "a stream of 100 000 numbers",
}
CLIENT_NAMES = {
    "grpc_aio": "grpc.aio",
    "betterproto_grpclib": "betterproto/grpclib",
    "betterproto2_grpclib": "betterproto2/grpclib",
    "grpcio_sync": "grpcio sync",
}
# The loops a client is compared on by default: its own (asyncio), or none for blocking code.
DEFAULT_LOOPS = ("asyncio", "none")
METHOD_NAMES = {
    "seed": "the seed's method (a new event loop and channel per call, best of the repeats)",
    "steady": "steady state (one channel, warm-up, every call timed)",
}
# GNU time -v fields the seed published, as perflab.contract.parsers names the client's.
PROCESS_METRICS = {
    "max_rss": "client_max_rss",
    "page_faults_minor": "client_page_faults_minor",
    "page_faults_major": "client_page_faults_major",
    "ctx_switches_voluntary": "client_ctx_switches_voluntary",
    "ctx_switches_involuntary": "client_ctx_switches_involuntary",
}
SEED_STACK = "seed001"
# Within this ratio two medians are called "about the same".
SAME = 1.05


def label(client: str, loop: str) -> str:
    name = CLIENT_NAMES.get(client, client)
    return f"{name} + uvloop" if loop == "uvloop" else name


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's measured rows (failed cells have no metrics but 'failed')."""
    rows = frame[(frame["study"] == STUDY) & (frame["status"] != "failed")]
    # The tables are the current stack's; the seed's stack is judged by the claims (runs
    # from before the stacks ran the current one only).
    rows = params.with_defaults(rows, ("stack",))
    rows = rows[rows["stack"] == CURRENT_STACK].copy()
    # CPU seconds of the whole client process from GNU time (the sampler's
    # client_cpu_seconds shares that name; user + system is unambiguous).
    cpu = rows[rows["metric"].isin(["client_cpu_user", "client_cpu_system"])]
    if not cpu.empty:
        keys = [c for c in rows.columns if c not in ("metric", "value", "unit")]
        total = cpu.groupby(keys, dropna=False, as_index=False)["value"].sum()
        total["metric"], total["unit"] = "client_process_cpu_seconds", "s"
        rows = _concat(rows, total)
    return rows


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    return pd.concat([a, b[a.columns]], ignore_index=True)


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Median and interval over repeats per scenario, method, client and loop; + label."""
    summary = stats.summarize(study_rows(frame), SUMMARY_KEYS)
    if summary.empty:
        return summary
    summary["label"] = [
        label(c, lp) for c, lp in zip(summary["client"], summary["loop"], strict=True)
    ]
    return summary


def pick(summary: pd.DataFrame, metric: str, **where: str) -> pd.DataFrame:
    part = summary[summary["metric"] == metric]
    for key, value in where.items():
        part = part[part[key] == value]
    return part


def ci_by_label(summary: pd.DataFrame, metric: str, method: str, digits: int) -> pd.DataFrame:
    """Rows client (+ loop), one column per scenario: 'median [interval]'."""
    part = pick(summary, metric, method=method)
    if part.empty:
        return part
    table = tables.ci_table(part, "label", "scenario", digits=digits)
    order = [f"scenario {s} ({part['unit'].iloc[0]})" for s in SCENARIOS]
    return table[[c for c in order if c in table.columns]]


def process_table(summary: pd.DataFrame, method: str) -> pd.DataFrame:
    """GNU time -v of the whole client process: memory, faults, switches, CPU (medians);
    the counts (faults, switches, calls) as whole numbers."""
    import pandas as pd

    columns = {
        "client_max_rss": ("max RSS (MiB)", 1 / 1024, 1),
        "client_page_faults_minor": ("minor page faults", 1, 0),
        "client_page_faults_major": ("major page faults", 1, 0),
        "client_ctx_switches_voluntary": ("voluntary ctx switches", 1, 0),
        "client_ctx_switches_involuntary": ("involuntary ctx switches", 1, 0),
        "client_process_cpu_seconds": ("CPU (s)", 1, 2),
        "calls": ("calls made", 1, 0),
    }
    part = summary[(summary["method"] == method) & summary["metric"].isin(columns)]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(
        column=part["metric"].map(lambda m: columns[m][0]),
        shown=[
            round(v * columns[m][1], columns[m][2])
            for v, m in zip(part["median"], part["metric"], strict=True)
        ],
    )
    table = part.pivot_table(
        index=["scenario", "label"], columns="column", values="shown", aggfunc="first"
    )
    counts = set(part.loc[part["unit"].isin(tables.COUNT_UNITS), "column"])
    table = table[[c for c, _, _ in columns.values() if c in table.columns]]
    return tables.counts_as_integers(table, [c for c in table.columns if c in counts])


def our_method(scenario: str) -> str:
    """The method whose numbers answer the seed's: its timeit figures are our seed method,
    its 100 000-number throughput our steady state."""
    return "steady" if scenario == "stream_100000" else "seed"


def published_vs_measured(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Each number the seed published next to ours (seed method on asyncio, or steady state
    for the 100 000-number stream), in the seed's order, with the ratio measured/published."""
    numeric = published[~published["metric"].str.startswith("claim_")].copy()
    numeric["our method"] = numeric["scenario"].map(our_method)
    mine = summary
    if len(mine):
        answers = (mine["loop"] == "asyncio") & (mine["method"] == mine["scenario"].map(our_method))
        mine = mine[answers]
        mine = mine.assign(**{"our method": mine["method"]})
    names = {m: PROCESS_METRICS.get(m, m) for m in numeric["metric"].unique()}
    table = stats.compare_published(
        mine, numeric, ["scenario", "client", "our method"], names, how="left", sort=False
    )
    columns = ["scenario", "client", "metric", "unit", "our method", "published", "measured"]
    return table[[*columns, "ci_low", "ci_high", "n", "coverage", "interval", "ratio"]]


def ratio_text(ratio: float) -> str | float:
    """A ratio as text: two decimals, or two significant digits below 0.1 (63 voluntary
    switches against the seed's 16 684 read 0.0038, not 0.00, which would say none); NaN
    as it is, for the table's "–"."""
    import math

    if ratio != ratio:
        return ratio
    rounded = float(f"{ratio:.2g}")  # 0.0996 is 0.10, a ratio for two decimals
    if rounded == 0 or abs(rounded) >= 0.1:
        return f"{ratio:,.2f}"
    return f"{rounded:.{1 - math.floor(math.log10(abs(rounded)))}f}"


def published_table(compared: pd.DataFrame) -> pd.DataFrame:
    """`published_vs_measured` for display: the rows with both numbers, a ratio that is no
    number (a published zero) as NaN, 3 decimals, the ratio as `ratio_text`, and the counts
    (unit calls or count: page faults, context switches) as whole numbers."""
    shown = compared.dropna(subset=["published", "measured"])
    ratio = shown["ratio"].where(shown["ratio"].abs() != float("inf"))
    shown = shown.round(3).assign(ratio=[ratio_text(r) for r in ratio])
    # Each row's interval says its coverage and method ('75%, order statistics of 3
    # repeats'), as every interval a page shows does.
    labels = stats.interval_labels(shown) if len(shown) else []
    shown = shown.drop(columns=["n", "coverage", "interval"]).rename(
        columns={"ci_low": "interval low", "ci_high": "interval high"}
    )
    shown.insert(shown.columns.get_loc("interval high") + 1, "interval", labels)
    counted = ["published", "measured", "interval low", "interval high"]
    return tables.counts_as_integers(shown, counted, rows=shown["unit"].isin(tables.COUNT_UNITS))


# --- findings beyond the claims ------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    client: str
    loop: str
    median: float
    low: float
    high: float
    n: int

    @property
    def name(self) -> str:
        return label(self.client, self.loop)


def standings(
    summary: pd.DataFrame,
    metric: str,
    scenario: str,
    method: str,
    higher_is_better: bool,
    loops: tuple[str, ...] = DEFAULT_LOOPS,
) -> list[Standing]:
    """Clients on the given loops, best first."""
    part = pick(summary, metric, scenario=scenario, method=method)
    part = part[part["loop"].isin(loops)].dropna(subset=["median"])
    found = [
        Standing(r.client, r.loop, r.median, r.ci_low, r.ci_high, int(r.n))
        for r in part.itertuples()
    ]
    return sorted(found, key=lambda s: -s.median if higher_is_better else s.median)


def separated(a: Standing, b: Standing) -> bool:
    """The intervals do not overlap; with one repeat (no interval) the values differ."""
    if a.low != a.low or b.low != b.low:  # NaN: a single repeat
        return a.median != b.median
    return a.high < b.low or b.high < a.low


def how_much(better: Standing, worse: Standing, higher_is_better: bool) -> str:
    """'1.8x faster than X', 'about as fast as X', noting overlapping intervals."""
    ratio = better.median / worse.median if higher_is_better else worse.median / better.median
    if ratio < SAME:
        return f"about as fast as {worse.name}"
    text = f"{ratio:.1f}x faster than {worse.name}"
    if not separated(better, worse):
        text += " (intervals overlap)"
    return text


def find(found: list[Standing], client: str, loop: str = "asyncio") -> Standing | None:
    return next((s for s in found if s.client == client and s.loop == loop), None)


def fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.2f} ms" if value < 100 else f"{value:,.0f} ms"
    if unit == "numbers/s":
        return f"{value:,.0f} numbers/s"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    return f"{value:,.3g} {unit}"


def speed_sentence(summary: pd.DataFrame, scenario: str, method: str) -> str:
    """Every client of a scenario fastest first, and how far ahead the fastest is of the
    next (grpc.aio against betterproto/grpclib is a claim: the verdicts above say it)."""
    found = standings(summary, "time_per_call", scenario, method, higher_is_better=False)
    if len(found) < 2:
        return ""
    best, runner_up = found[0], found[1]
    order = " < ".join(f"{s.name} {fmt(s.median, 'ms')}" for s in found)
    return (
        f"For {SCENARIO_NAMES[scenario]} by {METHOD_NAMES[method]}, {best.name} is fastest "
        f"({order} per call): {how_much(best, runner_up, False)}."
    )


def method_flip_sentence(summary: pd.DataFrame) -> str:
    """Where the seed's method and steady state name different winners."""
    flips = []
    for scenario in ("request_reply", "stream_10"):
        seed = standings(summary, "time_per_call", scenario, "seed", higher_is_better=False)
        steady = standings(summary, "time_per_call", scenario, "steady", higher_is_better=False)
        if seed and steady and seed[0].client != steady[0].client:
            flips.append(
                f"for {SCENARIO_NAMES[scenario]} the seed's method crowns {seed[0].name} but "
                f"steady state {steady[0].name}"
            )
    if not flips:
        return ""
    return (
        "The method decides the winner: " + "; ".join(flips) + ". The seed's method mostly "
        "times event-loop and channel set-up, not calls."
    )


def uvloop_sentence(summary: pd.DataFrame) -> str:
    """How uvloop changes each async client's steady request-reply time per call."""
    found = standings(
        summary, "time_per_call", "request_reply", "steady", False, loops=("asyncio", "uvloop")
    )
    changes = []
    for client in CLIENT_NAMES:
        base, uv = find(found, client, "asyncio"), find(found, client, "uvloop")
        if base is not None and uv is not None:
            change = (uv.median / base.median - 1) * 100
            changes.append(f"{CLIENT_NAMES[client]} {change:+.0f}%")
    if not changes:
        return ""
    return "uvloop changes steady request-reply time per call: " + ", ".join(changes) + "."


def findings(summary: pd.DataFrame) -> str:
    """What this run shows beyond the seed's claims (those the verdict engine decides):
    each scenario's clients fastest first, where the method changes the winner, what
    uvloop changes. Generated from the numbers, one finding per bullet."""
    if summary.empty:
        return "No pyclients cell produced data in this run: there is nothing to show."
    sentences = [
        speed_sentence(summary, "request_reply", "seed"),
        speed_sentence(summary, "request_reply", "steady"),
        speed_sentence(summary, "stream_10", "seed"),
        speed_sentence(summary, "stream_10", "steady"),
        method_flip_sentence(summary),
        uvloop_sentence(summary),
    ]
    # One finding per bullet: a reader scans for the scenario they care about.
    return "\n".join(f"- {s}" for s in sentences if s)


def stack_sentence(current: v.Verdict, seed: v.Verdict) -> str:
    """What one claim's verdicts on the two library stacks attribute its result to; '' when
    a stack did not measure it."""
    if v.NOT_MEASURED in (current.verdict, seed.verdict):
        return ""
    name = f"`{current.claim.id}`"
    if current.verdict != seed.verdict:
        return (
            f"{name} {v.STATES[current.verdict]} on the current library stack and "
            f"{v.STATES[seed.verdict]} on the seed's ({SEED_STACK}): the result follows "
            "the library versions."
        )
    if current.verdict == v.HOLDS:
        return f"{name} holds on both library stacks: it replicates whatever the versions."
    if current.verdict == v.FAILS:
        return (
            f"{name} holds on neither library stack, the seed's ({SEED_STACK}) included: "
            "the non-replication follows the machine, not the library versions."
        )
    # Undecided or at its threshold on both: neither is a non-replication to attribute.
    return (
        f"{name} {v.STATES[current.verdict]} on both library stacks: this run attributes nothing."
    )


def stack_attribution(verdicts: list[v.Verdict]) -> str:
    """One sentence per claim judged on both stacks (`<id>` and `<id>-seed-stack`)."""
    by_id = {verdict.claim.id: verdict for verdict in verdicts}
    sentences = [
        stack_sentence(by_id[verdict.claim.stack_of], verdict)
        for verdict in verdicts
        if verdict.claim.stack_of in by_id
    ]
    sentences = [s for s in sentences if s]
    if not sentences:
        return f"No claim was measured on both library stacks (current and {SEED_STACK})."
    return "\n".join(f"- {s}" for s in sentences)
