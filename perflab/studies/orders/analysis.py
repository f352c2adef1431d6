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
    interval, unit in the header. Where the rows' intervals differ (another repeat count or
    method), an `interval` column names each row's: one label would be wrong for some."""
    if summary.empty:  # no cells of that kind (e.g. no sequential ones): no columns either
        return summary
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        return rows
    keys = [k for k in SUMMARY_KEYS if k != "security"]
    table = tables.ci_table(rows, keys, "security", digits)
    if stats.mixes_intervals(rows):
        table["interval"] = row_intervals(rows, keys)
    return table


def row_intervals(rows: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Per configuration (`keys`), its interval's label (`stats.interval_label`); one per
    security mode, named, where they differ within the row."""
    labelled = rows.assign(label=stats.interval_labels(rows))
    labels = {}
    for key, group in labelled.groupby(keys, sort=True):
        by_security = dict(zip(group["security"], group["label"], strict=True))
        if len(set(by_security.values())) == 1:
            labels[key] = next(iter(by_security.values()))
        else:
            labels[key] = "; ".join(f"{s}: {label}" for s, label in sorted(by_security.items()))
    return keyed_series(labels, keys)


def keyed_series(values: dict, keys: list[str]) -> pd.Series:
    """A Series indexed like a pivot table on `keys` (a MultiIndex, or a plain index for
    one key), so it lines up with one when assigned as a column."""
    import pandas as pd

    if len(keys) == 1:
        return pd.Series(values, dtype=object).rename_axis(keys[0])
    index = pd.MultiIndex.from_tuples(list(values), names=keys)
    return pd.Series(list(values.values()), index=index, dtype=object)


def metric_note(summary: pd.DataFrame, metric: str) -> str:
    """What the intervals of `metric_table(summary, metric)` are, from its own rows' repeat
    counts; when they differ between rows, that the `interval` column says which is which."""
    rows = summary[summary["metric"] == metric] if len(summary) else summary
    sentence = stats.interval_sentence(rows, "Intervals in this table")
    if stats.mixes_intervals(rows):
        sentence += " They differ between rows: the `interval` column names each row's."
    return sentence


def run_interval_sentence(parallel: pd.DataFrame, sequential: pd.DataFrame) -> str:
    """What the page's intervals are, for the parallel cells (every table and figure but
    the sequential cells' own) and, apart, for the sequential cells, each from its own
    repeat counts: the two kinds of cell ran different numbers of repeats."""
    sentence = stats.interval_sentence(parallel, "Intervals of the parallel cells")
    if len(sequential):
        sentence += " " + stats.interval_sentence(sequential, "Of the sequential cells")
        if stats.mixes_intervals(sequential):
            sentence += " Their table names each row's."
    return sentence


# Each percentile the client reports and the fraction of orders at or below it.
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}
# The latency tables' columns (us) and the rate beside them; p99.9 has a table of its own
# (`tail_table`): only cells of 10 000 orders support it, and a column of mostly empty
# cells told the reader nothing.
LATENCY_COLUMNS = ("p50", "p90", "p99", "max")
RATE_COLUMN = "orders/s"
DIRECT = "none"


def order_counts(summary: pd.DataFrame) -> pd.Series:
    """Orders timed per configuration (median over repeats), indexed by SUMMARY_KEYS."""
    counts = summary[summary["metric"] == "orders_ok"]
    return counts.set_index(SUMMARY_KEYS)["median"]


def latency_table(summary: pd.DataFrame, name: str = "rtt") -> pd.DataFrame:
    """p50 / p90 / p99 / max of one latency (us, medians over repeats) and orders/s, one
    row per configuration, numbers as they are (`shown` formats them).

    p99 only where the cell timed enough orders for it (`stats.percentile_supported`: p99
    of 200 orders is the maximum), NaN elsewhere and no column where no row supports it;
    p99.9 is `tail_table`'s."""
    wanted = {f"{name}_{q}": q for q in LATENCY_COLUMNS} | {"orders_per_s": RATE_COLUMN}
    rows = summary[summary["metric"].isin(list(wanted))]
    if rows.empty:
        return rows
    table = rows.pivot_table(index=SUMMARY_KEYS, columns="metric", values="median")
    table = supported(table, f"{name}_p99", PERCENTILES["p99"], order_counts(summary))
    table = table[[m for m in wanted if m in table.columns]].rename(columns=wanted)
    table.columns.name = None
    return table


def supported(table: pd.DataFrame, column: str, fraction: float, counts: pd.Series) -> pd.DataFrame:
    """`table` with `column` (a percentile) blanked where its row's order count does not
    support it, and dropped where none does; as it is without counts."""
    if column not in table or counts.empty:
        return table
    ok = counts.reindex(table.index).map(lambda n: stats.percentile_supported(fraction, n))
    table[column] = table[column].where(ok.fillna(False).astype(bool))
    return table.drop(columns=column) if table[column].isna().all() else table


def latency_rows(summary: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows a latency's table shows: every cell for the round trip, direct cells only
    for the one-way times (through the proxy they include its hop)."""
    if name == "rtt" or summary.empty:
        return summary
    return summary[summary["latency_profile"] == DIRECT]


def compact(table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """`table` without the index levels that hold one value in every row, and those
    values: a level that never changes widens the table and says nothing row by row. A
    table of one row keeps its index."""
    import pandas as pd

    if len(table) < 2 or not isinstance(table.index, pd.MultiIndex):
        return table, {}
    fixed = {
        level: table.index.get_level_values(level)[0]
        for level in table.index.names
        if table.index.get_level_values(level).nunique() == 1
    }
    if len(fixed) == table.index.nlevels:
        return table, {}
    return table.droplevel(list(fixed)), fixed


def fixed_words(fixed: dict[str, object]) -> str:
    """'every row: topology localhost, latency_profile none' ('' for none)."""
    if not fixed:
        return ""
    return "every row: " + ", ".join(f"{level} {value}" for level, value in fixed.items())


def latency_section(summary: pd.DataFrame, name: str) -> tuple[str, pd.DataFrame]:
    """A latency's heading and its table for display (`latency_table`, compacted, numbers
    to three significant figures); the heading names the unit and what every row shares."""
    table, fixed = compact(latency_table(latency_rows(summary, name), name))
    parts = [f"**{name}** (us; {RATE_COLUMN} over the whole cell)"]
    if name != "rtt":
        parts.append("direct cells only: through the proxy the one-way times include its hop")
    if fixed:
        parts.append(fixed_words(fixed))
    return "; ".join(parts) + ".", shown(table)


def tail_table(summary: pd.DataFrame) -> pd.DataFrame:
    """p99.9 (us) of each latency, only for the configurations whose cells timed enough
    orders to support it (`stats.percentile_supported`); the one-way times of direct cells
    only (NaN through the proxy, as in `latency_rows`)."""
    counts = order_counts(summary)
    ok = counts[counts.map(lambda n: stats.percentile_supported(PERCENTILES["p999"], n))]
    names = {f"{n}_p999": n for n in LATENCY_METRICS}
    rows = summary[summary["metric"].isin(list(names))]
    rows = rows[(rows["metric"] == "rtt_p999") | (rows["latency_profile"] == DIRECT)]
    if rows.empty or ok.empty:
        return rows.iloc[0:0]
    table = rows.pivot_table(index=SUMMARY_KEYS, columns="metric", values="median")
    table = table.reindex(ok.index).dropna(how="all")
    table = table[[m for m in names if m in table.columns]].rename(columns=names)
    table.columns.name = None
    return table


def tail_section(summary: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The p99.9 table's heading and the table for display (compacted, three figures)."""
    table, fixed = compact(tail_table(summary))
    parts = ["**p99.9** (us), where a cell timed enough orders for it"]
    if {"oneway_request", "oneway_reply"} & set(table.columns):
        parts.append("one-way times of direct cells only (– through the proxy)")
    if fixed:
        parts.append(fixed_words(fixed))
    return "; ".join(parts) + ".", shown(table)


def shown(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """`table` for display: every float column to `digits` significant figures with
    thousands separators (`stats.significant`; NaN as '–'), other columns as they are."""
    out = table.copy()
    for column in table.columns:
        if table[column].dtype.kind == "f":
            out[column] = [stats.significant(v, digits) for v in table[column]]
            out[column] = out[column].astype(object)
    return out


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
    configuration of that mode on the topology without added latency. Rows differ by
    clients, orders and server workers: each is a column, and the label names all three."""
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
        & (summary["latency_profile"] == DIRECT)
        & summary["mode"].isin(["unary", "bidi"])
    ]
    table = stats.compare_published(mine, theirs, ["mode"], metric, how="right")
    columns = [*PUBLISHED_KEYS, "measured", "ci_low", "ci_high", "n", "coverage", "interval"]
    table = table[[*columns, "published"]]
    table["ratio"] = table["measured"] / table["published"]
    table["label"] = [
        configuration_label(m, c, o, w)
        for m, c, o, w in zip(
            table["mode"], table["clients"], table["orders"], table["workers"], strict=True
        )
    ]
    return table.sort_values(PUBLISHED_KEYS).reset_index(drop=True)


PUBLISHED_KEYS = ["mode", "clients", "orders", "workers"]


def configuration_label(mode: str, clients: object, orders: object, workers: object) -> str:
    """'unary, 100 clients x 1000 orders, 10 workers': what tells two cells of one mode
    apart, for a figure's axis or legend."""
    if clients != clients:  # not measured: the seed's row alone
        return MODE_NAMES.get(mode, mode)
    return (
        f"{MODE_NAMES.get(mode, mode)}, {clients:.0f} client{'' if clients == 1 else 's'} x "
        f"{orders:.0f} orders, {workers:.0f} workers"
    )


def published_shown(compared: pd.DataFrame) -> pd.DataFrame:
    """`compared` (`published_vs_measured`) as the page shows it (`tables.published_table`),
    with an `interval` column naming each row's where the rows' intervals differ."""
    shown_table = tables.published_table(compared, PUBLISHED_KEYS, "s per 1000 orders", 3)
    both = compared.dropna(subset=["published", "measured"])
    if stats.mixes_intervals(both):
        shown_table["interval"] = stats.interval_labels(both).to_numpy()
    return shown_table


def slowdowns(summary: pd.DataFrame) -> pd.DataFrame:
    """bidi / unary time per 1000 orders, per configuration both modes ran in with the same
    server workers (a pair with more workers on one side would not compare the modes).
    A mode a configuration did not run is NaN (`slowdowns_shown` says 'not run')."""
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
    table.columns.name = None
    return table


def slowdowns_shown(summary: pd.DataFrame) -> pd.DataFrame:
    """`slowdowns` for display: three significant figures, and 'not run' where the
    configuration did not run that mode (so neither its time nor its ratio exists)."""
    return shown(slowdowns(summary)).replace("–", "not run")


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


# Line style per mode, so a series keeps its mode at a glance whatever its colour.
MODE_STYLES = {"unary": "-", "bidi": "--", "bidi_pipelined": ":"}
STYLE_WORDS = {"-": "solid", "--": "dashed", ":": "dotted"}
CDF_KEYS = ["topology", "mode", "clients", "orders", "workers"]


def cdf_rows(cdfs: pd.DataFrame, latency: str, security: str, latency_profile: str) -> pd.DataFrame:
    """The CDF points a figure draws: repeat 1 of the parallel cells of one latency,
    security and latency profile (the sequential cells have their own section)."""
    shown = cdfs[
        (cdfs["latency"] == latency)
        & (cdfs["security"] == security)
        & (cdfs["repeat"] == 1)
        & (cdfs["latency_profile"] == latency_profile)
    ]
    if "client_order" in shown:
        shown = shown[shown["client_order"].fillna(PARALLEL) == PARALLEL]
    return shown


def cdf_lines(shown: pd.DataFrame) -> list[tuple]:
    """One (label, mode, sorted latencies, sorted fractions) per configuration: every key
    that tells two cells apart is in the group, so no line mixes two cells' points (which
    zig-zags between them into a filled band), and both axes are sorted, so a CDF rises."""
    import numpy as np

    topologies = shown["topology"].nunique() if len(shown) else 0
    lines = []
    for (topology, mode, clients, orders, workers), group in shown.groupby(CDF_KEYS, sort=True):
        label = configuration_label(mode, clients, orders, workers)
        if topologies > 1:
            label += f", {topology}"
        lines.append(
            (label, mode, np.sort(group["us"].to_numpy()), np.sort(group["quantile"].to_numpy()))
        )
    return lines


def distinct_colors(count: int) -> list[tuple[float, float, float]]:
    """`count` colours, all different up to 40 (tab10's ten repeat after ten series)."""
    colours = [*plt.get_cmap("tab20").colors, *plt.get_cmap("tab20b").colors]
    # tab20 pairs a dark and a light shade of one hue: dark ones first keeps close shades
    # apart while there are few series.
    ordered = colours[0:20:2] + colours[1:20:2] + colours[20:]
    return [ordered[i % len(ordered)] for i in range(count)]


def cdf_figure(
    cdfs: pd.DataFrame,
    latency: str = "rtt",
    security: str = "plaintext",
    latency_profile: str = "none",
) -> Figure:
    """Latency CDFs, one line per configuration (repeat 1 of the parallel cells, one latency
    profile: direct by default), its own colour, its mode's line style, the legend beside
    the axes; the profile named in the title."""
    # Wide: the legend beside the axes takes a third of it.
    fig, ax = plt.subplots(figsize=(12, 5))
    lines = cdf_lines(cdf_rows(cdfs, latency, security, latency_profile))
    for (label, mode, us, fractions), colour in zip(
        lines, distinct_colors(len(lines)), strict=True
    ):
        style = MODE_STYLES.get(mode, "-.")
        ax.plot(us, fractions, label=label, color=colour, linestyle=style, linewidth=1.5)
    ax.set_xscale("log")
    ax.set_xlabel(f"{latency} latency per order (us, log scale)")
    ax.set_ylabel("fraction of orders")
    ax.set_title(
        f"Latency CDF per order ({latency}, {security}, repeat 1)\n{profile_words(latency_profile)}"
    )
    ax.grid(True, alpha=0.3)
    if lines:  # outside the axes: inside, thirteen entries hid the curves
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def cdf_caption(cdfs: pd.DataFrame, latency: str = "rtt", latency_profile: str = "none") -> str:
    """What the CDF figures draw, counted from the points: lines per security mode and
    what a line style means."""
    if cdfs.empty:
        return "No cell kept its latency CDF."
    counts = {
        security: len(cdf_lines(cdf_rows(cdfs, latency, security, latency_profile)))
        for security in sorted(cdfs["security"].unique())
    }
    per = ", ".join(f"{n} in {s}" for s, n in counts.items())
    modes = [m for m in MODE_STYLES if m in set(cdfs["mode"])]
    styles = ", ".join(f"{STYLE_WORDS[MODE_STYLES[m]]} {MODE_NAMES[m]}" for m in modes)
    return (
        f"Every order of repeat 1 of each parallel configuration, {profile_words(latency_profile)}"
        f": one line per configuration ({per}); line style marks the mode ({styles})."
    )


# The metrics the TLS table compares, named with their units for its rows.
TLS_COST_METRICS = {
    "rtt_p50": "rtt p50 (us)",
    "rtt_p99": "rtt p99 (us)",
    "orders_per_s": "orders per second (1/s)",
}


TLS_KEYS = ["topology", "latency_profile", "mode", "clients", "orders", "workers"]


def tls_cost(summary: pd.DataFrame) -> pd.DataFrame:
    """TLS / plaintext for the median round trip and the order rate, per configuration that
    ran both ways (`tls_unpaired_sentence` counts the others, left out).

    The configuration (and the metric, with its unit) is the row index: a 0..n index under
    a `security` column header would shift every heading by one. The workers are part of
    the configuration: averaging a 10-worker and a 100-worker cell would compare neither."""
    rows = summary[summary["metric"].isin(list(TLS_COST_METRICS))]
    rows = rows.assign(metric=rows["metric"].map(TLS_COST_METRICS))
    table = rows.pivot_table(index=[*TLS_KEYS, "metric"], columns="security", values="median")
    if not {"plaintext", "tls"} <= set(table.columns):
        return table.iloc[0:0]
    table = table[["plaintext", "tls"]].dropna()
    table.columns.name = None
    table["tls / plaintext"] = table["tls"] / table["plaintext"]
    return table


def tls_pipelined_sentence(table: pd.DataFrame) -> str:
    """What the pipelined rows' round-trip ratios measure ('' without such rows). A
    pipelined client sends every order without waiting for its reply, so each round trip
    includes the wait behind the orders sent before it: the faster sender queues more, and a
    ratio of 0.03 would otherwise read as TLS making a round trip 36 times faster."""
    if table.empty or "bidi_pipelined" not in table.index.get_level_values("mode"):
        return ""
    pipelined = table.xs("bidi_pipelined", level="mode")
    metrics = pipelined.index.get_level_values("metric")
    ratios = pipelined[metrics.str.startswith("rtt")]["tls / plaintext"]
    if ratios.empty:
        return ""
    return (
        "In the pipelined rows every order is sent without waiting for its reply, so a round "
        "trip includes its wait behind the orders sent before it, and the faster sender "
        f"queues more: their round-trip ratios ({ratios.min():.3g} to {ratios.max():.3g} "
        "here) measure that queue, not what TLS costs an order; their order rates compare "
        "like with like."
    )


def tls_unpaired_sentence(summary: pd.DataFrame) -> str:
    """How many configurations of the TLS table's metrics ran one way only and so have no
    row in it ('' when every configuration ran both ways)."""
    rows = summary[summary["metric"].isin(list(TLS_COST_METRICS))]
    if rows.empty:
        return ""
    ways = rows.groupby(TLS_KEYS)["security"].agg(lambda s: frozenset(s))
    only = {
        security: int((ways == frozenset({security})).sum()) for security in ("plaintext", "tls")
    }
    parts = [
        f"{count} ran in {'plaintext' if security == 'plaintext' else 'TLS'} only"
        for security, count in only.items()
        if count
    ]
    if not parts:
        return ""
    unpaired = sum(only.values())
    counterpart = (
        "TLS or plaintext" if all(only.values()) else ("TLS" if only["plaintext"] else "plaintext")
    )
    return (
        f"Of the {len(ways)} configurations, {' and '.join(parts)}: "
        f"{'it has' if unpaired == 1 else 'these have'} no {counterpart} counterpart and "
        f"{'is' if unpaired == 1 else 'are'} left out of the table."
    )


def latency_vs_clients(
    summary: pd.DataFrame, metric: str = "rtt_p50", latency_profile: str = "none"
) -> pd.DataFrame:
    """The summary rows of one metric in one latency profile (direct by default), with a
    series per mode, security, orders per cell and server workers: a line through cells
    of other orders or workers at one number of clients would zig-zag between them."""
    rows = summary[
        (summary["metric"] == metric) & (summary["latency_profile"] == latency_profile)
    ].copy()
    base = (
        rows["mode_name"]
        + ", "
        + rows["security"]
        + ", "
        + rows["orders"].map("{:.0f} orders".format)
    )
    rows["series"] = (
        base
        + ", "
        + [
            "≥ 1 worker per client" if w >= c else f"{w:.0f} workers"
            for w, c in zip(rows["workers"], rows["clients"], strict=True)
        ]
    )
    if rows.duplicated(["series", "clients"]).any():  # two worker counts under one words
        rows["series"] = base + ", " + rows["workers"].map("{:.0f} workers".format)
    return rows


def vs_clients_title(metric: str, latency_profile: str = "none") -> str:
    """The title of a `latency_vs_clients` figure: the metric and the profile it shows."""
    return f"orders: {metric} vs clients\n{profile_words(latency_profile)}"


def vs_clients_figure(rows: pd.DataFrame, metric: str, unit: str) -> Figure:
    """`plots.lines_with_intervals` of `latency_vs_clients` rows, each series its own
    colour and its mode's line style, the legend beside the axes, not over the lines."""
    from perflab.analysis import plots

    names = sorted(rows["series"].unique())
    colours = dict(zip(names, distinct_colors(len(names)), strict=True))
    fig = plots.lines_with_intervals(
        rows,
        "clients",
        "series",
        vs_clients_title(metric),
        f"{metric} ({unit})",
        logx=True,
        colors=colours,
    )
    ax = fig.axes[0]
    modes = dict(zip(rows["series"], rows["mode"], strict=False))
    for container in ax.containers:
        line = container.lines[0]
        line.set_linestyle(MODE_STYLES.get(modes.get(container.get_label(), ""), "-."))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.set_size_inches(11, 4.5)
    fig.tight_layout()
    return fig


def vs_clients_note(summary: pd.DataFrame, latency_profile: str = "none") -> str:
    """What the error bars of the figures against clients are, from their own rows."""
    rows = summary[summary["latency_profile"] == latency_profile] if len(summary) else summary
    return (
        "Median over repeats, one line per mode, security, orders per cell and server "
        "workers; " + stats.interval_sentence(rows, "error bars")
    )


def profile_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Median round trip per latency profile and mode (plaintext): localhost vs each network."""
    rows = summary[(summary["metric"] == "rtt_p50") & (summary["security"] == "plaintext")]
    # Orders and workers in the key: a mean over configurations would be none of them.
    table = rows.pivot_table(
        index=["topology", "mode", "clients", "orders", "workers"],
        columns="latency_profile",
        values="median",
    )
    table.columns = [f"{c} rtt p50 (us)" for c in table.columns]
    return table


def proxy_overhead(summary: pd.DataFrame) -> pd.DataFrame:
    """What Toxiproxy itself adds at 0 ms: median round trip through it minus direct (us)."""
    rows = summary[
        summary["metric"].isin(["rtt_p50", "rtt_p99"])
        & summary["latency_profile"].isin(["none", "proxy_0ms"])
    ]
    keys = ["topology", "mode", "security", "clients", "orders", "workers", "metric"]
    table = rows.pivot_table(index=keys, columns="latency_profile", values="median")
    if not {"none", "proxy_0ms"} <= set(table.columns):
        return table.iloc[0:0]
    # A configuration run one way only has no difference to show.
    table = table[["none", "proxy_0ms"]].dropna()
    table.columns.name = None
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
    where = (
        f"{worst['mode']} {worst['security']} {worst['clients']} clients "
        f"{worst['workers']} workers {worst['metric']}"
    )
    return (
        f"{len(negative)} of {len(table)} differences are negative ({per_metric}), down to "
        f"{stats.significant(worst[PROXY_ADDED])} us ({where}: "
        f"{stats.significant(worst['direct (us)'])} direct, "
        f"{stats.significant(worst['through the proxy (us)'])} through the proxy). The proxy "
        "only adds work "
        "to a call, so these are run-to-run noise: at that percentile, in those "
        "configurations, the noise between runs exceeds the proxy's cost, so those "
        "differences are not the proxy's, and a positive one of like size there is no surer "
        "a measure of it."
    )


def percentile_sentence(summary: pd.DataFrame) -> str:
    """Which latency percentiles the tables can show, from the orders each configuration
    timed: p99.9 in its own table for the configurations that support it, p99 blank where a
    cell timed too few (`stats.percentile_supported`)."""
    counts = order_counts(summary)
    if counts.empty:
        return ""
    need = {q: stats.samples_needed(PERCENTILES[q]) for q in ("p99", "p999")}
    tail = int(counts.map(lambda n: stats.percentile_supported(PERCENTILES["p999"], n)).sum())
    sentence = (
        f"A percentile needs at least {stats.TAIL_SAMPLES} orders beyond it, so p99.9 needs "
        f"{need['p999']:,} orders in a cell: "
    )
    if tail:
        sentence += (
            f"the latency tables leave it out, and the p99.9 table after them shows it for "
            f"the {tail} of {len(counts)} configurations that timed that many."
        )
    else:
        sentence += (
            f"no configuration here timed that many (at most {counts.max():,.0f}), so p99.9 "
            "is not shown; the maximum is."
        )
    few = int((counts < need["p99"]).sum())
    if few:
        sentence += (
            f" p99 needs {need['p99']:,}: it shows as – for the "
            f"{plural(few, 'configuration')} that timed fewer."
        )
    return sentence


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


STREAM_MODES = ("bidi", "bidi_pipelined")


def plural(n: int, noun: str) -> str:
    """'1 configuration', '12 configurations'."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def configurations(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration of a summary (its SUMMARY_KEYS)."""
    if summary.empty:
        return summary
    return summary.drop_duplicates(SUMMARY_KEYS)[SUMMARY_KEYS]


def fewer_workers_words(few: pd.DataFrame) -> str:
    """'1,000 clients on 10 workers, 100 clients on 10 workers': the distinct pairs."""
    pairs = sorted({(int(c), int(w)) for c, w in zip(few["clients"], few["workers"], strict=True)})
    return ", ".join(f"{c:,} clients on {w:,} workers" for c, w in reversed(pairs))


def workers_sentence(summary: pd.DataFrame) -> str:
    """How the cells' server workers stand to their clients, per kind of call, counted from
    the configurations: a bidi stream holds a server thread for its life, a unary call only
    while it is served, so a unary cell may run fewer workers than clients."""
    configs = configurations(summary)
    if configs.empty:
        return ""
    parts = []
    streams = configs[configs["mode"].isin(STREAM_MODES)]
    if len(streams):
        parts.append(
            "A bidi stream holds a server thread for its life, and "
            + worker_words(streams, "bidi", "so their streams wait for a thread")
        )
    unary = configs[configs["mode"] == "unary"]
    if len(unary):
        few = unary[unary["workers"] < unary["clients"]]
        seed = len(few) and (few["workers"] == SEED_WORKERS).all()
        parts.append(
            "a unary call holds a server thread only while it is served, and "
            + worker_words(unary, "unary", "the seed's own server" if seed else "")
        )
    sentence = "; ".join(parts)
    return (
        sentence[0].upper() + sentence[1:] + ". The `workers` column says what each cell "
        "ran, and the modes are compared only at equal workers."
    )


def worker_words(configs: pd.DataFrame, kind: str, why: str) -> str:
    """'every one of the 34 bidi configurations runs at least one worker per client', or
    how many run fewer workers than clients, which, and `why` that matters ('' for none)."""
    few = configs[configs["workers"] < configs["clients"]]
    if few.empty:
        return (
            f"{'every one of the' if len(configs) > 1 else 'the'} "
            f"{plural(len(configs), kind + ' configuration')} runs at least one worker per client"
        )
    return (
        f"{len(few)} of the {len(configs)} {kind} configurations run fewer workers than "
        f"clients ({fewer_workers_words(few)}{': ' + why if why else ''}), the rest at least "
        "one per client"
    )


def sequential_sentence(sequential: pd.DataFrame) -> str:
    """What the sequential cells ran, from their configurations: modes, security, workers,
    clients one after another and their orders."""
    configs = configurations(sequential)
    if configs.empty:
        return "This run has no sequential cells."

    def listed(column: str, words: dict | None = None) -> str:
        values = [str((words or {}).get(v, v)) for v in sorted(configs[column].unique())]
        return " and ".join([", ".join(values[:-1]), values[-1]] if len(values) > 1 else values)

    return (
        f"The sequential cells ({plural(len(configs), 'configuration')}) ran "
        f"{listed('mode', MODE_NAMES)}, "
        f"{listed('security')}, on a server of {listed('workers')} workers, with "
        f"{listed('clients')} clients one after another, at latency profiles "
        f"{listed('latency_profile')}."
    )
