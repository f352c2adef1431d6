"""The watch study's analysis (seed 004): timelines, the seed's summary shape, the verdict.

The seed watched a Node.js server's CPU and RAM in Grafana while 500 watches read a folder
at once. Here every cell's resources.csv (server and client process trees sampled every
100 ms by the runner) is the timeline; the client's client.json gives the time to serve
every watcher. Works on `perflab.load` rows of study "watch" (params message, folder,
clients, watches_per_client, kv_pairs, pair_bytes; implementation = cache strategy).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from perflab import stats
from perflab.load import cell_dirs
from perflab.parsers import raw_exists, read_raw_text, resources_frame_rows

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

STUDY = "watch"
STRATEGIES = ["js_object", "protobuf_cache", "frame_cache", "protobuf_cache_2writes"]
STRATEGY_NAMES = {
    "js_object": "js-object cache",
    "protobuf_cache": "protobuf cache",
    "frame_cache": "gRPC frame cache",
    "protobuf_cache_2writes": "protobuf cache, 2 writes",
}
MESSAGES = ["mono", "separated"]
FOLDERS = ["small", "medium", "large"]
SUMMARY_KEYS = ["scenario", "message", "folder", "implementation"]
# Per-cell figures computed from the timeline, beside the loaded metrics.
BURST_METRICS = {
    "server_cpu_percent_peak": "percent",
    "server_rss_before": "MiB",
    "server_rss_growth": "MiB",
}
# The seed's summary shape: what its table gives per cell, and ours next to it.
SHAPE = {
    "server_cpu_percent_peak": ("peak CPU (% of a core)", 0),
    "server_cpu_percent_mean": ("mean CPU during the burst (%)", 0),
    "server_cpu_seconds": ("server CPU (s)", 2),
    "server_rss_peak": ("peak RSS (MiB)", 0),
    "serve_all": ("time to serve all watchers (s)", 2),
    "complete_max": ("slowest watch (ms)", 0),
    "first_message_p50": ("median first message (ms)", 0),
}
# Published metric -> ours.
PUBLISHED = {"cpu_percent_peak": "server_cpu_percent_peak", "rss_peak": "server_rss_peak"}
SAME = 1.10  # within this ratio two medians are called about the same
KILLED = re.compile(r"Command terminated by signal (\d+)")
SIGNALS = {9: "SIGKILL (the OOM killer's signal, or a kill -9)", 15: "SIGTERM", 6: "SIGABRT"}


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["study"] == STUDY) & (frame["status"] != "failed")].copy()


# --- timelines -----------------------------------------------------------------------------


def cell_timeline(folder: Path) -> pd.DataFrame:
    """One cell's samples per role and instant (a process tree summed), t in seconds from
    the start of the burst (the first "measure" sample)."""
    import pandas as pd

    rows = resources_frame_rows(read_raw_text(folder / "resources.csv"), folder / "resources.csv")
    samples = pd.DataFrame(rows)
    if samples.empty:
        return pd.DataFrame(columns=["role", "t", "phase", "cpu_percent", "rss_mib"])
    for column in ("t", "cpu_percent", "rss_bytes"):
        samples[column] = samples[column].astype(float)
    # A process caught while exiting reads 0 bytes of RSS: that is no measurement.
    samples = samples[samples["rss_bytes"] > 0]
    measured = samples[samples["phase"] == "measure"]
    t0 = measured["t"].min() if len(measured) else samples["t"].min()
    tree = samples.groupby(["role", "t"], as_index=False).agg(
        phase=("phase", "first"), cpu_percent=("cpu_percent", "sum"), rss_bytes=("rss_bytes", "sum")
    )
    tree["t"] = (tree["t"] - t0).round(3)
    tree["rss_mib"] = tree.pop("rss_bytes") / 2**20
    return tree


def timelines(run_dir: str | Path) -> pd.DataFrame:
    """Every complete watch cell's timeline, with its strategy, message, folder, repeat."""
    import pandas as pd

    parts = []
    for folder in cell_dirs(Path(run_dir)):
        cell = json.loads((folder / "cell.json").read_text())
        if cell["study"] != STUDY or not raw_exists(folder / "resources.csv"):
            continue
        part = cell_timeline(folder)
        part["cell_id"], part["status"] = cell["cell_id"], cell["status"]
        part["strategy"], part["repeat"] = cell["implementation"], cell.get("repeat", 1)
        part["message"], part["folder"] = cell["params"]["message"], cell["params"]["folder"]
        parts.append(part)
    if not parts:
        return pd.DataFrame(
            columns=["cell_id", "strategy", "message", "folder", "repeat", "role", "t", "phase"]
        )
    return pd.concat(parts, ignore_index=True)


def burst_rows(timeline: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the server's peak CPU% in the burst, its RSS before it and how much it grew."""
    import pandas as pd

    rows = []
    server = timeline[timeline["role"] == "server"]
    for cell_id, samples in server.groupby("cell_id"):
        burst = samples[samples["phase"] == "measure"]
        before = samples[samples["t"] < 0]
        if burst.empty:
            continue
        rss_before = float(before["rss_mib"].iloc[-1]) if len(before) else float("nan")
        values = {
            "server_cpu_percent_peak": float(burst["cpu_percent"].max()),
            "server_rss_before": rss_before,
            "server_rss_growth": float(samples["rss_mib"].max()) - rss_before,
        }
        rows += [
            {"cell_id": cell_id, "metric": m, "value": v, "unit": BURST_METRICS[m]}
            for m, v in values.items()
        ]
    return pd.DataFrame(rows, columns=["cell_id", "metric", "value", "unit"])


def with_burst_metrics(frame: pd.DataFrame, timeline: pd.DataFrame) -> pd.DataFrame:
    """The study's loaded rows plus the timeline's per-cell figures, in the same shape."""
    import pandas as pd

    rows = study_rows(frame)
    extra = burst_rows(timeline)
    if rows.empty or extra.empty:
        return rows
    keys = rows.drop(columns=["metric", "value", "unit"]).drop_duplicates("cell_id")
    return pd.concat([rows, keys.merge(extra, on="cell_id")[rows.columns]], ignore_index=True)


def summarize(frame: pd.DataFrame, timeline: pd.DataFrame) -> pd.DataFrame:
    """Median and interval over repeats per scenario, message, folder and strategy."""
    return stats.summarize(with_burst_metrics(frame, timeline), SUMMARY_KEYS)


# --- tables --------------------------------------------------------------------------------


def seed_shape(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's table: one row per message type and strategy, per folder its peak and mean
    CPU, peak RSS and time to serve every watcher (medians over repeats)."""
    import pandas as pd

    part = summary[summary["metric"].isin(SHAPE)] if len(summary) else summary
    if part.empty:
        return pd.DataFrame()
    part = part.assign(
        column=part["metric"].map(lambda m: SHAPE[m][0]),
        shown=[round(v, SHAPE[m][1]) for v, m in zip(part["median"], part["metric"], strict=True)],
        strategy=part["implementation"].map(lambda s: STRATEGY_NAMES.get(s, s)),
    )
    table = part.pivot_table(
        index=["message", "strategy"], columns=["folder", "column"], values="shown", aggfunc="first"
    )
    folders = [f for f in FOLDERS if f in table.columns.get_level_values(0)]
    order = [(f, c) for f in folders for c, _ in SHAPE.values() if (f, c) in table.columns]
    strategies = [STRATEGY_NAMES[s] for s in STRATEGIES]
    index = [(m, s) for m in MESSAGES for s in strategies if (m, s) in table.index]
    return table.loc[index, order]


def sizes(frame: pd.DataFrame) -> pd.DataFrame:
    """What each folder and burst was in this run (profiles shrink them)."""
    rows = study_rows(frame)
    columns = ["folder", "kv_pairs", "pair_bytes", "clients", "watches_per_client"]
    if rows.empty:
        return rows
    table = rows[columns].drop_duplicates().sort_values("folder").reset_index(drop=True)
    table["folder MiB"] = (table["kv_pairs"] * table["pair_bytes"] / 2**20).round(2)
    table["watchers"] = table["clients"] * table["watches_per_client"]
    return table


def published_vs_measured(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The seed's peak CPU and peak RAM per cell next to ours, with the ratio."""
    theirs = published[published["metric"].isin(PUBLISHED)]
    table = stats.compare_published(
        summary, theirs, ["scenario", "implementation"], PUBLISHED, how="left", sort=False
    )
    # Rows name our metric: the notebook picks its figures by it.
    table["metric"] = table["metric"].map(PUBLISHED)
    table = table.rename(columns={"implementation": "strategy"})
    columns = ["scenario", "strategy", "metric", "unit", "published", "measured", "ci_low"]
    return table[[*columns, "ci_high", "ratio"]]


def failure_reasons(run_dir: str | Path) -> pd.DataFrame:
    """Failed watch cells and why; a client killed by a signal (the seed's OOM-killed
    clients) is named as such from GNU time's record of it."""
    import pandas as pd

    rows = []
    for folder in cell_dirs(Path(run_dir)):
        cell = json.loads((folder / "cell.json").read_text())
        if cell["study"] != STUDY or cell["status"] != "failed":
            continue
        reason = cell.get("error", "").strip().split("\n")[0]
        killed = (
            KILLED.search(read_raw_text(folder / "time.txt"))
            if raw_exists(folder / "time.txt")
            else None
        )
        if killed:
            number = int(killed.group(1))
            reason = (
                f"client killed by signal {number} ({SIGNALS.get(number, 'signal')}); " + reason
            )
        rows.append({"cell_id": cell["cell_id"], "reason": reason})
    return pd.DataFrame(rows, columns=["cell_id", "reason"])


# --- the verdict ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    strategy: str
    median: float
    low: float
    high: float

    @property
    def name(self) -> str:
        return STRATEGY_NAMES.get(self.strategy, self.strategy)


def standings(summary: pd.DataFrame, metric: str, scenario: str) -> list[Standing]:
    """Strategies on one scenario, least first (every metric here is a cost)."""
    if summary.empty:
        return []
    part = summary[(summary["metric"] == metric) & (summary["scenario"] == scenario)]
    found = [
        Standing(r.implementation, r.median, r.ci_low, r.ci_high)
        for r in part.dropna(subset=["median"]).itertuples()
    ]
    return sorted(found, key=lambda s: s.median)


def factor(best: Standing, other: Standing) -> str:
    if best.median <= 0:
        return f"{other.name} {other.median:.3g}"
    ratio = other.median / best.median
    if ratio < SAME:
        return f"about the same as {other.name}"
    overlap = "" if best.high < other.low else ", intervals overlap"
    return f"{ratio:.1f}x less than {other.name}{overlap}"


def scenario_sentence(summary: pd.DataFrame, scenario: str) -> str:
    parts = []
    for metric, what, unit in (
        ("server_cpu_seconds", "server CPU", "s"),
        ("server_rss_peak", "peak server RSS", "MiB"),
        ("serve_all", "time to serve all watchers", "s"),
    ):
        found = standings(summary, metric, scenario)
        if len(found) < 2:
            continue
        best, worst = found[0], found[-1]
        parts.append(
            f"least {what}: {best.name} ({best.median:.3g} {unit}, {factor(best, worst)}"
            f" at {worst.median:.3g} {unit})"
        )
    if not parts:
        return ""
    message, _, folder = scenario.partition("_")
    return f"{message.capitalize()} messages, {folder} folder: " + "; ".join(parts) + "."


def mono_vs_separated_sentence(summary: pd.DataFrame) -> str:
    """The seed's two observations: separated costs more CPU, mono more RAM (copy-per-call)."""
    out = []
    for folder in FOLDERS:
        cpu = {m: standings(summary, "server_cpu_seconds", f"{m}_{folder}") for m in MESSAGES}
        rss = {m: standings(summary, "server_rss_peak", f"{m}_{folder}") for m in MESSAGES}
        if not all(cpu.values()) or not all(rss.values()):
            continue
        ratio_cpu = sum(s.median for s in cpu["separated"]) / max(
            sum(s.median for s in cpu["mono"]), 1e-9
        )
        worst_mono = max(s.median for s in rss["mono"])
        worst_sep = max(s.median for s in rss["separated"])
        out.append(
            f"{folder} folder: separated messages take {ratio_cpu:.1f}x the server CPU of mono "
            f"(all strategies together); the worst peak RSS is {worst_mono:.0f} MiB for mono "
            f"and {worst_sep:.0f} MiB for separated"
        )
    return ("Mono against separated, " + "; ".join(out) + ".") if out else ""


def verdict(summary: pd.DataFrame) -> str:
    """The closing paragraph: which strategy wins what, and by how much, from this run."""
    if summary.empty:
        return "No watch cell produced data in this run: there is nothing to conclude."
    scenarios = [f"{m}_{f}" for f in FOLDERS for m in MESSAGES]
    sentences = [scenario_sentence(summary, s) for s in scenarios]
    sentences.append(mono_vs_separated_sentence(summary))
    repeats = int(summary["n"].min())
    if repeats < 3:
        sentences.append(
            f"Some cells have only {repeats} repeat(s): treat these as indications, not findings."
        )
    return " ".join(s for s in sentences if s)


# --- figures -------------------------------------------------------------------------------


def timeline_figure(
    timeline: pd.DataFrame, folder: str, role: str = "server", repeat: int = 1
) -> Figure:
    """CPU% and RSS over time, one line per strategy, mono and separated side by side (the
    seed's Grafana pictures); t = 0 is the start of the burst."""
    import matplotlib.pyplot as plt

    from perflab.plots import palette

    colors = palette(STRATEGIES)
    fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex="col")
    part = timeline[
        (timeline["folder"] == folder) & (timeline["role"] == role) & (timeline["repeat"] == repeat)
    ]
    for col, message in enumerate(MESSAGES):
        for strategy in STRATEGIES:
            line = part[(part["message"] == message) & (part["strategy"] == strategy)]
            if line.empty:
                continue
            line = line.sort_values("t")
            label = STRATEGY_NAMES[strategy]
            axes[0, col].plot(line["t"], line["cpu_percent"], color=colors[strategy], label=label)
            axes[1, col].plot(line["t"], line["rss_mib"], color=colors[strategy], label=label)
        axes[0, col].set_title(f"{message}, {folder} folder ({role})")
        axes[0, col].set_ylabel("CPU (% of one core)")
        axes[1, col].set_ylabel("RSS (MiB)")
        axes[1, col].set_xlabel("seconds from the start of the burst")
        for ax in axes[:, col]:
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig
