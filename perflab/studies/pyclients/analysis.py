"""The pyclients study's analysis (seed 001): tables and the verdict the notebook shows.

Everything here works on `perflab.load` rows of study "pyclients" (params `method`,
`loop`) and on their `stats.summarize` by SUMMARY_KEYS. The verdict paragraph is
generated from the numbers, so a new run re-states it, never a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from perflab import stats, tables

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
# GNU time -v fields the seed published, as perflab.parsers names the client's.
PROCESS_METRICS = {
    "max_rss": "client_max_rss",
    "page_faults_minor": "client_page_faults_minor",
    "page_faults_major": "client_page_faults_major",
    "ctx_switches_voluntary": "client_ctx_switches_voluntary",
    "ctx_switches_involuntary": "client_ctx_switches_involuntary",
}
# Within this ratio two medians are called "about the same".
SAME = 1.05


def label(client: str, loop: str) -> str:
    name = CLIENT_NAMES.get(client, client)
    return f"{name} + uvloop" if loop == "uvloop" else name


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's measured rows (failed cells have no metrics but 'failed')."""
    rows = frame[(frame["study"] == STUDY) & (frame["status"] != "failed")].copy()
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
    """Median and 95% interval over repeats per scenario, method, client and loop; + label."""
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
    """Rows client (+ loop), one column per scenario: 'median [95% interval]'."""
    part = pick(summary, metric, method=method)
    if part.empty:
        return part
    table = tables.ci_table(part, "label", "scenario", digits=digits)
    order = [f"scenario {s} ({part['unit'].iloc[0]})" for s in SCENARIOS]
    return table[[c for c in order if c in table.columns]]


def process_table(summary: pd.DataFrame, method: str) -> pd.DataFrame:
    """GNU time -v of the whole client process: memory, faults, switches, CPU (medians)."""
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
    return table[[c for c, _, _ in columns.values() if c in table.columns]]


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
    return table[[*columns, "ci_low", "ci_high", "ratio"]]


# --- the verdict ------------------------------------------------------------------------


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
    """The 95% intervals do not overlap (with one repeat: the values differ)."""
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
    found = standings(summary, "time_per_call", scenario, method, higher_is_better=False)
    if len(found) < 2:
        return ""
    best, rest = found[0], found[1:]
    order = " < ".join(f"{s.name} {fmt(s.median, 'ms')}" for s in found)
    text = (
        f"For {SCENARIO_NAMES[scenario]} by {METHOD_NAMES[method]}, {best.name} is fastest "
        f"({order} per call)"
    )
    reference = find(found, "grpc_aio")
    if reference is not None and reference is not best:
        text += f": {how_much(best, reference, False)}"
    elif reference is best:
        text += f": {how_much(best, rest[0], False)}"
    return text + "."


def seed_claim_sentence(summary: pd.DataFrame, published: pd.DataFrame | None) -> str:
    """Does betterproto/grpclib beat grpc.aio by the seed's factor on the seed's method?"""
    if published is None or published.empty:
        return ""
    parts = []
    for scenario in ("request_reply", "stream_10"):
        found = standings(summary, "time_per_call", scenario, "seed", higher_is_better=False)
        aio, bp = find(found, "grpc_aio"), find(found, "betterproto_grpclib")
        theirs = published[
            (published["scenario"] == scenario) & (published["metric"] == "time_per_call")
        ].set_index("client")["value"]
        if (
            aio is None
            or bp is None
            or not {"grpc_aio", "betterproto_grpclib"} <= set(theirs.index)
        ):
            continue
        ours = aio.median / bp.median
        seed = theirs["grpc_aio"] / theirs["betterproto_grpclib"]
        parts.append(
            f"{SCENARIO_NAMES[scenario]} {ours:.2f}x here against {seed:.2f}x in the seed's table"
        )
    if not parts:
        return ""
    return (
        "The seed's headline (betterproto/grpclib faster than grpcio per call, its method) as "
        "grpc.aio time / betterproto time: " + "; ".join(parts) + "."
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


def stream_sentence(summary: pd.DataFrame) -> str:
    """Settles the seed README's contradiction on 100 000-number streaming."""
    found = standings(summary, "numbers_per_s", "stream_100000", "steady", higher_is_better=True)
    if not found:
        return ""
    best = found[0]
    text = (
        f"Streaming 100 000 numbers (steady state), {best.name} is fastest at "
        f"{fmt(best.median, 'numbers/s')}"
    )
    aio, bp = find(found, "grpc_aio"), find(found, "betterproto_grpclib")
    if aio is None or bp is None:
        return text + "."
    gain = (aio.median / bp.median - 1) * 100
    text += (
        f"; grpc.aio reaches {fmt(aio.median, 'numbers/s')} and betterproto/grpclib "
        f"{fmt(bp.median, 'numbers/s')}. "
    )
    if not separated(aio, bp):
        return text + (
            "Their intervals overlap, so neither of the seed README's two statements (grpcio "
            "about 30% higher; betterproto/grpclib about 30% higher) is supported here."
        )
    if gain > 0:
        return text + (
            f"grpcio's throughput is {gain:.0f}% higher: the README's Results summary "
            "('the throughput of grpcio is about 30% higher') holds, and its later sentence "
            "giving betterproto/grpclib the better throughput does not."
        )
    return text + (
        f"betterproto/grpclib's throughput is {(bp.median / aio.median - 1) * 100:.0f}% higher: "
        "the README's later sentence holds, and its Results summary ('the throughput of grpcio "
        "is about 30% higher') does not."
    )


def memory_sentence(summary: pd.DataFrame, published: pd.DataFrame | None) -> str:
    found = standings(summary, "client_max_rss", "request_reply", "seed", higher_is_better=False)
    if len(found) < 2:
        found = standings(
            summary, "client_max_rss", "request_reply", "steady", higher_is_better=False
        )
    if len(found) < 2:
        return ""
    least, most = found[0], found[-1]
    mib = [f"{s.name} {fmt(s.median / 1024, 'MiB')}" for s in found]
    text = (
        f"Memory (max RSS of the client process, request-reply): {least.name} needs least and "
        f"{most.name} most ({', '.join(mib)})"
    )
    aio, bp = find(found, "grpc_aio"), find(found, "betterproto_grpclib")
    if aio is not None and bp is not None:
        less = (1 - bp.median / aio.median) * 100
        text += f"; betterproto/grpclib uses {less:.0f}% less than grpc.aio"
        if published is not None and not published.empty:
            rr = published[published["scenario"] == "request_reply"]
            claim = rr[rr["metric"] == "claim_max_rss_reduction"]["value"]
            table = rr[rr["metric"] == "max_rss"].set_index("client")["value"]
            if len(claim) and {"grpc_aio", "betterproto_grpclib"} <= set(table.index):
                shown = (1 - table["betterproto_grpclib"] / table["grpc_aio"]) * 100
                text += (
                    f" (the seed's prose claimed {claim.iloc[0]:.0f}%, its own table shows "
                    f"{shown:.0f}%)"
                )
    return text + "."


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
    return "uvloop changes steady request-reply time per call by " + ", ".join(changes) + "."


def verdict(summary: pd.DataFrame, published: pd.DataFrame | None = None) -> str:
    """The closing paragraph: which client wins what, and by how much, from this run."""
    if summary.empty:
        return "No pyclients cell produced data in this run: there is nothing to conclude."
    sentences = [
        speed_sentence(summary, "request_reply", "seed"),
        speed_sentence(summary, "request_reply", "steady"),
        speed_sentence(summary, "stream_10", "seed"),
        speed_sentence(summary, "stream_10", "steady"),
        seed_claim_sentence(summary, published),
        method_flip_sentence(summary),
        stream_sentence(summary),
        memory_sentence(summary, published),
        uvloop_sentence(summary),
    ]
    repeats = int(summary["n"].min())
    if repeats < 3:
        sentences.append(
            f"Some cells have only {repeats} repeat(s): treat these as indications, not findings."
        )
    # One finding per bullet: a reader scans for the scenario they care about.
    return "\n".join(f"- {s}" for s in sentences if s)
