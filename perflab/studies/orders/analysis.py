"""The orders study's analysis (seed 003): the evidence tables and figures.

Works on `perflab.analysis.frames` rows of study "orders" (params mode, clients, orders, security,
workers, topology, latency_profile) and on the latency CDFs each cell's client.json keeps
(`load_cdfs`). The seed's claims are decided by the verdict engine (`perflab.analysis.verdicts`,
data/reference/claims.yml); the note on server CPU per order is generated from the numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt

from perflab.analysis import published as seed_tables
from perflab.analysis import stats, tables
from perflab.contract import params
from perflab.contract.parsers import client_cdfs, read_raw_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from perflab.analysis.run import Run

STUDY = "orders"
SUMMARY_KEYS = ["topology", "latency_profile", "mode", "security", "clients", "orders", "workers"]
# How the clients ran: together (the seed's prose) or one after another (its log).
PARALLEL, SEQUENTIAL = "parallel", "sequential"
READING_WORDS = {
    PARALLEL: "concurrent clients (the prose's reading)",
    SEQUENTIAL: "clients one after another (the log's reading)",
}
# The seed's per-1 000 figures set beside the readings: its scenario, the run's latency
# profile standing for it, and its words; at the seed's 1 000 clients x 1 000 orders.
SEED_PLACES = {
    "localhost_unary": ("none", "localhost"),
    "server_to_server_unary": ("lan", "server to server"),
}
SEED_RUN = {"clients": 1000, "orders": 1000}
SEED_WORKERS = 10
MODE_NAMES = {
    "unary": "unary",
    "bidi": "bidi stream, lock-step",
    "bidi_pipelined": "bidi stream, pipelined",
}
# The seed's scenarios (data/reference/orders.csv) and the mode each one ran.
SEED_MODES = {
    "localhost_unary": "unary",
    "server_to_server_unary": "unary",
    "localhost_bidi": "bidi",
}
LATENCY_METRICS = ["rtt", "oneway_request", "oneway_reply"]


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's measured rows, plus server CPU per order (failed cells have only 'failed')."""
    import pandas as pd

    rows = frame[(frame["study"] == STUDY) & (frame["status"] != "failed")]
    # Only this study's parameters as keys: another study's (empty here) would drop every row.
    rows = params.with_defaults(params.own_columns(rows), ("client_order",)).copy()
    keys = [c for c in rows.columns if c not in ("metric", "value", "unit")]
    wide = rows.pivot_table(index=keys, columns="metric", values="value", aggfunc="first")
    if {"server_cpu_seconds", "orders_ok"} <= set(wide.columns):
        per_order = (wide["server_cpu_seconds"] * 1e6 / wide["orders_ok"]).rename("value")
        extra = per_order.reset_index().assign(metric="server_cpu_us_per_order", unit="us")
        rows = pd.concat([rows, extra[rows.columns]], ignore_index=True)
    return rows


def summarize(frame: pd.DataFrame, client_order: str = PARALLEL) -> pd.DataFrame:
    """Median and interval over repeats for every cell configuration and metric, of the
    cells whose clients ran in `client_order` (the page's tables are on parallel cells; the
    sequential ones have their own section)."""
    rows = study_rows(frame)
    summary = stats.summarize(rows[rows["client_order"] == client_order], SUMMARY_KEYS)
    if not summary.empty:
        summary["mode_name"] = summary["mode"].map(MODE_NAMES).fillna(summary["mode"])
    return summary


def metric_table(summary: pd.DataFrame, metric: str, digits: int = 0) -> pd.DataFrame:
    """One row per configuration, a column per security mode: the metric's median and
    interval, unit in the header."""
    if summary.empty:  # no cells of that kind (e.g. no sequential ones): no columns either
        return summary
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        return rows
    keys = [k for k in SUMMARY_KEYS if k != "security"]
    return tables.ci_table(rows, keys, "security", digits)


# Each percentile the client reports and the fraction of orders at or below it.
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


def latency_table(summary: pd.DataFrame, name: str = "rtt") -> pd.DataFrame:
    """p50 / p90 / p99 / p99.9 / max of one latency (medians over repeats) and orders/s.

    A percentile is shown only where the cell timed enough orders for it
    (`stats.percentile_supported`: p99.9 of 1 000 orders is the maximum); a column no
    configuration supports is left out."""
    wanted = [f"{name}_{q}" for q in (*PERCENTILES, "max")] + ["orders_per_s"]
    rows = summary[summary["metric"].isin([*wanted, "orders_ok"])]
    if rows.empty:
        return rows
    table = rows.pivot_table(index=SUMMARY_KEYS, columns="metric", values="median")
    counts = table.pop("orders_ok") if "orders_ok" in table else None
    for q, fraction in PERCENTILES.items():
        column = f"{name}_{q}"
        if column in table and counts is not None:
            supported = counts.map(lambda n, f=fraction: stats.percentile_supported(f, n))
            table[column] = table[column].where(supported)
            if table[column].isna().all():
                table = table.drop(columns=column)
    table = table[[m for m in wanted if m in table.columns]]
    table.columns = [f"{c} ({'1/s' if c == 'orders_per_s' else 'us'})" for c in table.columns]
    return table.round(1)


def published_runs(reference: pd.DataFrame) -> pd.DataFrame:
    """The seed's runs (total elapsed, or each bidi batch) as seconds per 1000 orders."""
    ref = reference[reference["metric"] == "elapsed"].copy()
    params = ref["params"].map(json.loads)
    ref["clients"] = params.map(lambda p: p.get("clients"))
    ref["orders"] = params.map(lambda p: p.get("orders"))
    ref["per_1000_orders_s"] = ref["value"] * 1000 / ref["orders"]
    # The 100000-client progress log is cumulative: its last line (the furthest the seed
    # showed) counts as a run of that many orders; the earlier lines are not runs.
    progress = params.map(lambda p: p.get("progress_transactions"))
    shown = progress.notna()
    if shown.any():
        last = progress[shown].max()
        ref.loc[shown, "orders"] = progress[shown]
        ref["per_1000_orders_s"] = ref["value"] * 1000 / ref["orders"]
        ref = ref[~shown | (progress == last)]
    grouped = ref.groupby(["scenario", "clients", "orders"], as_index=False).agg(
        elapsed_s=("value", "median"),
        per_1000_orders_s=("per_1000_orders_s", "median"),
        runs=("value", "size"),
    )
    grouped["mode"] = grouped["scenario"].map(SEED_MODES)
    return grouped


def published_claims(reference: pd.DataFrame) -> dict[str, float]:
    """The seed's prose: seconds per 1000 orders for unary and bidi, and the ratio claimed."""
    claims = reference[reference["metric"].str.startswith("claim_")]
    out = {}
    for row in claims.itertuples(index=False):
        key = row.metric if row.metric == "claim_slowdown_vs_unary" else SEED_MODES[row.scenario]
        out[key] = float(row.value)
    return out


def published_vs_measured(summary: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Seconds per 1000 orders: the seed's claim per mode next to each measured plaintext
    configuration of that mode on the topology without added latency."""
    import pandas as pd

    metric = "elapsed_per_1000_orders"
    claims = published_claims(reference)
    theirs = pd.DataFrame(
        [
            {"mode": mode, "metric": metric, "value": claims[mode], "source": "seed prose"}
            for mode in ("unary", "bidi")
            if mode in claims
        ],
        columns=["mode", "metric", "value", "source"],
    )
    mine = summary[
        (summary["metric"] == metric)
        & (summary["security"] == "plaintext")
        & (summary["latency_profile"] == "none")
        & summary["mode"].isin(["unary", "bidi"])
    ]
    table = stats.compare_published(mine, theirs, ["mode"], metric, how="right")
    columns = ["mode", "clients", "orders", "measured", "ci_low", "ci_high", "coverage"]
    table = table[[*columns, "published"]]
    table["ratio"] = table["measured"] / table["published"]
    table["label"] = [
        f"{MODE_NAMES[m]}, {c} clients"
        for m, c in zip(table["mode"], table["clients"], strict=True)
    ]
    return table.sort_values(["mode", "clients"]).reset_index(drop=True)


def slowdowns(summary: pd.DataFrame) -> pd.DataFrame:
    """bidi / unary time per 1000 orders, per configuration both modes ran in with the same
    server workers (a pair with more workers on one side would not compare the modes)."""
    rows = summary[summary["metric"] == "elapsed_per_1000_orders"]
    keys = [k for k in SUMMARY_KEYS if k != "mode"]
    table = rows.pivot_table(index=keys, columns="mode", values="median")
    if "unary" not in table.columns:
        return table.iloc[0:0]
    for mode in ("bidi", "bidi_pipelined"):
        if mode in table.columns:
            table[f"{mode} / unary"] = table[mode] / table["unary"]
    table = table.rename(columns={m: f"{m} (s per 1000 orders)" for m in modes_in(table)})
    if "bidi / unary" in table:  # a configuration only one mode ran in compares nothing
        table = table.dropna(subset=["bidi / unary"])
    return table.round(3)


def modes_in(table: pd.DataFrame) -> list[str]:
    return [m for m in MODE_NAMES if m in table.columns]


def profile_words(profile: str) -> str:
    """'latency profile none (direct, no proxy)', 'latency profile lan (through Toxiproxy,
    0.5 ms each way)': a latency profile as a reader needs it named."""
    from perflab.contract.latency import LATENCY_PROFILES

    if profile not in LATENCY_PROFILES:
        return f"latency profile {profile}"
    one_way_ms = LATENCY_PROFILES[profile]
    if one_way_ms is None:
        how = "direct, no proxy"
    elif one_way_ms == 0:
        how = "through Toxiproxy, no delay"
    else:
        how = f"through Toxiproxy, {one_way_ms:g} ms each way"
    return f"latency profile {profile} ({how})"


def cpu_per_order_note(summary: pd.DataFrame, latency_profile: str = "none") -> str:
    """What the server's CPU per order says about the modes in the cells of one latency
    profile (direct by default; the sentence names it, and the other profiles the CPU table
    shows): a stream message cheaper, dearer or about the same as a unary call. Empty
    without both modes."""
    cpu = summary[summary["metric"] == "server_cpu_us_per_order"]
    others = sorted(set(cpu["latency_profile"]) - {latency_profile})
    cpu = cpu[cpu["latency_profile"] == latency_profile]
    by_mode = cpu.groupby("mode")["median"].median()
    if not {"unary", "bidi"} <= set(by_mode.index):
        return ""
    listed = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
    also = f", not those of {listed} in the table above" if others else ""
    note = (
        f"In the cells of {profile_words(latency_profile)}{also}, the server spent a median "
        f"{by_mode['bidi']:.0f} us of CPU per order in a lock-step stream and "
        f"{by_mode['unary']:.0f} us per unary call"
    )
    if "bidi_pipelined" in by_mode.index:
        note += f" ({by_mode['bidi_pipelined']:.0f} us when the stream is pipelined)"
    # The window's ends are sampled (100 ms apart in older runs): within 5%, the same.
    if by_mode["bidi"] < by_mode["unary"] / 1.05:
        return note + (
            ": a stream message skips the per-call work (headers, a new HTTP/2 stream) "
            "that each unary call pays."
        )
    if by_mode["bidi"] > by_mode["unary"] * 1.05:
        return note + (
            ": a stream message costs the server more than a unary call here (in grpcio's "
            "synchronous API each stream message crosses threads via the request iterator)."
        )
    return note + ": about the same, so server CPU does not explain a difference in time."


def load_cdfs(run: Run) -> pd.DataFrame:
    """The latency CDFs of every complete, non-failed orders cell: one row per point."""
    import pandas as pd

    rows = []
    for folder, cell in run.cells_of(STUDY):
        if cell["status"] == "failed":
            continue
        path = folder / "client.json"
        for name, points in client_cdfs(read_raw_text(path), path).items():
            for q, value in points:
                rows.append(
                    {
                        **cell["params"],
                        "repeat": cell.get("repeat", 1),
                        "latency": name,
                        "quantile": q,
                        "us": value,
                    }
                )
    return pd.DataFrame(rows)


def cdf_figure(
    cdfs: pd.DataFrame,
    latency: str = "rtt",
    security: str = "plaintext",
    latency_profile: str = "none",
) -> Figure:
    """Latency CDFs, one line per mode and number of clients (repeat 1, one latency
    profile: direct by default), the profile named in the title."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    shown = cdfs[
        (cdfs["latency"] == latency)
        & (cdfs["security"] == security)
        & (cdfs["repeat"] == 1)
        & (cdfs["latency_profile"] == latency_profile)
    ]
    for (mode, clients), group in shown.groupby(["mode", "clients"], sort=True):
        group = group.sort_values("quantile")
        ax.plot(
            group["us"], group["quantile"], label=f"{MODE_NAMES.get(mode, mode)}, {clients} clients"
        )
    ax.set_xscale("log")
    ax.set_xlabel(f"{latency} latency per order (us, log scale)")
    ax.set_ylabel("fraction of orders")
    ax.set_title(
        f"Latency CDF per order ({latency}, {security}, repeat 1)\n{profile_words(latency_profile)}"
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# The metrics the TLS table compares, named with their units for its rows.
TLS_COST_METRICS = {
    "rtt_p50": "rtt p50 (us)",
    "rtt_p99": "rtt p99 (us)",
    "orders_per_s": "orders per second (1/s)",
}


def tls_cost(summary: pd.DataFrame) -> pd.DataFrame:
    """TLS / plaintext for the median round trip and the order rate, per configuration.

    The configuration (and the metric, with its unit) is the row index: a 0..n index under
    a `security` column header would shift every heading by one."""
    rows = summary[summary["metric"].isin(list(TLS_COST_METRICS))]
    rows = rows.assign(metric=rows["metric"].map(TLS_COST_METRICS))
    keys = ["topology", "latency_profile", "mode", "clients", "orders", "metric"]
    table = rows.pivot_table(index=keys, columns="security", values="median")
    if not {"plaintext", "tls"} <= set(table.columns):
        return table.iloc[0:0]
    table.columns.name = None
    table["tls / plaintext"] = table["tls"] / table["plaintext"]
    return table.round(3)


def latency_vs_clients(
    summary: pd.DataFrame, metric: str = "rtt_p50", latency_profile: str = "none"
) -> pd.DataFrame:
    """The summary rows of one metric in one latency profile (direct by default), with a
    mode + security series."""
    rows = summary[
        (summary["metric"] == metric) & (summary["latency_profile"] == latency_profile)
    ].copy()
    rows["series"] = rows["mode_name"] + ", " + rows["security"]
    return rows


def vs_clients_title(metric: str, latency_profile: str = "none") -> str:
    """The title of a `latency_vs_clients` figure: the metric and the profile it shows."""
    return f"orders: {metric} vs clients\n{profile_words(latency_profile)}"


def profile_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Median round trip per latency profile and mode (plaintext): localhost vs each network."""
    rows = summary[(summary["metric"] == "rtt_p50") & (summary["security"] == "plaintext")]
    table = rows.pivot_table(
        index=["topology", "mode", "clients"], columns="latency_profile", values="median"
    )
    table.columns = [f"{c} rtt p50 (us)" for c in table.columns]
    return table.round(1)


def proxy_overhead(summary: pd.DataFrame) -> pd.DataFrame:
    """What Toxiproxy itself adds at 0 ms: median round trip through it minus direct (us)."""
    rows = summary[
        summary["metric"].isin(["rtt_p50", "rtt_p99"])
        & summary["latency_profile"].isin(["none", "proxy_0ms"])
    ]
    keys = ["topology", "mode", "security", "clients", "orders", "metric"]
    table = rows.pivot_table(index=keys, columns="latency_profile", values="median")
    if not {"none", "proxy_0ms"} <= set(table.columns):
        return table.iloc[0:0]
    table[PROXY_ADDED] = table["proxy_0ms"] - table["none"]
    table = table.rename(columns={"none": "direct (us)", "proxy_0ms": "through the proxy (us)"})
    return table.round(1).reset_index()


PROXY_ADDED = "added by the proxy (us)"


def proxy_overhead_note(table: pd.DataFrame) -> str:
    """Under `proxy_overhead`'s table: how many of its differences are negative, per
    percentile, and the largest; the proxy only adds work to a call, so a negative one is
    run-to-run noise larger than the proxy's cost there. '' when none is negative."""
    if table.empty or PROXY_ADDED not in table:
        return ""
    negative = table[table[PROXY_ADDED] < 0]
    if negative.empty:
        return ""
    per_metric = "; ".join(
        f"{metric}: {int((negative['metric'] == metric).sum())} of "
        f"{int((table['metric'] == metric).sum())}"
        for metric in sorted(set(table["metric"]))
    )
    worst = negative.loc[negative[PROXY_ADDED].idxmin()]
    where = f"{worst['mode']} {worst['security']} {worst['clients']} clients {worst['metric']}"
    return (
        f"{len(negative)} of {len(table)} differences are negative ({per_metric}), down to "
        f"{worst[PROXY_ADDED]:,.0f} us ({where}: {worst['direct (us)']:,.0f} direct, "
        f"{worst['through the proxy (us)']:,.0f} through the proxy). The proxy only adds work "
        "to a call, so these are run-to-run noise: at that percentile, in those "
        "configurations, the noise between runs exceeds the proxy's cost, so those "
        "differences are not the proxy's, and a positive one of like size there is no surer "
        "a measure of it."
    )


def percentile_sentence(summary: pd.DataFrame) -> str:
    """Which latency percentiles the fewest-orders cell can show (`stats.percentile_note`)."""
    counts = summary.loc[summary["metric"] == "orders_ok", "median"]
    return stats.percentile_note(float(counts.min())) if len(counts) else ""


def seed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The seed's rows (perflab.analysis.published) plus its elapsed seconds per 1000 orders
    (`elapsed_per_1000_orders`), the metric the run measures."""
    import pandas as pd

    per_1000 = per_1000_orders(seed_tables.cell_metrics(rows))
    derived = seed_tables.long_rows({"elapsed_per_1000_orders": per_1000})
    return pd.concat([rows, *derived], ignore_index=True) if derived else rows


def per_1000_orders(wide: pd.DataFrame) -> pd.Series:
    """Elapsed seconds per 1000 orders of each run (or bidi batch) the seed logged; the
    cumulative progress log counts as far as the line it stopped at."""
    logged = wide.index.get_level_values("params").map(json.loads)
    orders = [p.get("progress_transactions") or p.get("orders") for p in logged]
    elapsed = seed_tables.column(wide, "elapsed")
    return elapsed * 1000 / [float(n) if n else math.nan for n in orders]


@dataclass(frozen=True)
class ReadingFit:
    """The seed's seconds per 1 000 orders (place -> figure) beside each reading's measured
    median (client order -> place -> figure), where the run has it."""

    seed: dict[str, float]
    measured: dict[str, dict[str, float]]

    def distance(self, order: str) -> float | None:
        """How far a reading's figures lie from the seed's: the sum over the places of
        |ln(measured / seed)| (a factor of 2 either way counts alike), None when the reading
        lacks a place."""
        figures = self.measured.get(order, {})
        if not self.seed or set(self.seed) - set(figures):
            return None
        return sum(abs(math.log(figures[place] / self.seed[place])) for place in self.seed)

    def closer(self) -> str | None:
        distances = {order: self.distance(order) for order in READING_WORDS}
        if any(d is None for d in distances.values()):
            return None
        return min(distances, key=lambda order: distances[order])


def reading_fit(summaries: dict[str, pd.DataFrame], reference: pd.DataFrame) -> ReadingFit:
    """Both readings' measured seconds per 1 000 orders (unary, plaintext, on the seed's
    10-worker server, at the most clients each ran) beside the seed's at 1 000 clients x
    1 000 orders, from data/reference/orders.csv."""
    runs = published_runs(reference)
    seed = {}
    for scenario, (place, _) in SEED_PLACES.items():
        row = runs[
            (runs["scenario"] == scenario)
            & (runs["clients"] == SEED_RUN["clients"])
            & (runs["orders"] == SEED_RUN["orders"])
        ]
        if len(row):
            seed[place] = float(row["per_1000_orders_s"].iloc[0])
    measured: dict[str, dict[str, float]] = {}
    for order, summary in summaries.items():
        if summary.empty:
            continue
        rows = summary[
            (summary["metric"] == "elapsed_per_1000_orders")
            & (summary["mode"] == "unary")
            & (summary["security"] == "plaintext")
            & (summary["workers"] == SEED_WORKERS)
        ]
        for place in seed:
            at = rows[rows["latency_profile"] == place]
            if len(at):
                most = at[at["clients"] == at["clients"].max()]
                measured.setdefault(order, {})[place] = float(most["median"].median())
    return ReadingFit(seed, measured)


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def reading_sentence(fit: ReadingFit) -> str:
    """Which reading of the seed's clients its own per-1 000 figures sit closer to."""
    if not fit.seed:
        return "The seed's per-1 000-order figures are not in the reference tables."
    places = [SEED_PLACES[s][1] for s in SEED_PLACES if SEED_PLACES[s][0] in fit.seed]
    theirs = " and ".join(
        f"{seconds(fit.seed[p])} {w}" for p, w in SEED_PLACES.values() if p in fit.seed
    )
    closer = fit.closer()
    if closer is None:
        missing = [o for o in READING_WORDS if fit.distance(o) is None]
        return (
            f"The seed's own figures per 1 000 orders ({theirs}) cannot be set beside both "
            f"readings: this run has no {' or '.join(missing)} unary cells on the seed's "
            f"server at {' and '.join(places)}."
        )
    other = next(o for o in READING_WORDS if o != closer)

    def figures(order: str) -> str:
        return " and ".join(seconds(fit.measured[order][p]) for p in fit.seed)

    return (
        f"The seed's own figures per 1 000 orders, {theirs}, sit closer to "
        f"{READING_WORDS[closer]}: measured {figures(closer)}, against {figures(other)} with "
        f"{READING_WORDS[other]} (summed |ln(measured / seed)| "
        f"{fit.distance(closer):.2f} against {fit.distance(other):.2f})."
    )
