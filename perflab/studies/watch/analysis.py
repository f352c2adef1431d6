"""The watch study's analysis (seed 004): timelines and the seed's summary shape.

The seed watched a Node.js server's CPU and RAM in Grafana while 500 watches read a folder
at once. Here every cell's resources.csv (server and client process trees sampled every
100 ms by the runner) is the timeline; the client's client.json gives the time to serve
every watcher. Works on `perflab.analysis.frames` rows of study "watch" (params message, folder,
clients, watches_per_client, kv_pairs, pair_bytes; implementation = cache strategy).

CPU is the difference of cumulative CPU seconds over a window of at least WINDOW_S, not
psutil's per-sample percentage: over 100 ms with 10 ms ticks that one reads up to 10%
off, so a server pinned to one core showed peaks above 100%. The seed's claims are
decided by the verdict engine (`perflab.analysis.verdicts`); this module gives their evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from perflab.analysis import published as seed_tables
from perflab.analysis import stats
from perflab.contract.parsers import (
    raw_exists,
    read_raw_text,
    resources_frame_rows,
    terminating_signal,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from perflab.analysis.run import Run

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
    "server_cpu_percent_peak_read": "percent",
    "server_rss_before": "MiB",
    "server_rss_growth": "MiB",
}
# The seed's summary shape: what its table gives per cell, and ours next to it.
SHAPE = {
    "server_cpu_percent_peak": ("peak CPU over 1 s (% of a core)", 0),
    "server_cpu_percent_mean": ("mean CPU during the burst (%)", 0),
    "server_cpu_seconds": ("server CPU (s)", 2),
    "server_rss_peak": ("peak RSS (MiB)", 0),
    "serve_all": ("time to serve all watchers (s)", 2),
    "complete_max": ("slowest watch (ms)", 0),
    "first_message_p50": ("median first message (ms)", 0),
}
# Published metric -> ours.
PUBLISHED = {"cpu_percent_peak": "server_cpu_percent_peak", "rss_peak": "server_rss_peak"}
# CPU is measured over windows at least this long: 10 ms ticks are then within 2%.
WINDOW_S = 1.0
TICK_S = 0.01  # the kernel's CPU accounting tick (USER_HZ 100)
SIGNALS = {9: "SIGKILL (the OOM killer's signal, or a kill -9)", 15: "SIGTERM", 6: "SIGABRT"}


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["study"] == STUDY) & (frame["status"] != "failed")].copy()


# --- timelines -----------------------------------------------------------------------------


def window_starts(t: list[float], min_s: float = WINDOW_S) -> list[int | None]:
    """For each sample, the latest earlier sample at least `min_s` before it (None if none)."""
    import bisect

    return [
        (bisect.bisect_right(t, end - min_s + 1e-9) - 1) if end - t[0] >= min_s - 1e-9 else None
        for end in t
    ]


def one_sample_per_instant(samples: pd.DataFrame) -> pd.DataFrame:
    """Samples sorted by time with one row per process and instant.

    The sampler writes the sample it takes at a phase change once per phase (t = 0.35
    "start" and "measure"): the same reading twice, which summing a process tree per
    instant would count twice. The row kept is the "measure" one, so the burst starts at
    t = 0 and ends at its last sample."""
    in_burst = samples["phase"] == "measure"
    ordered = samples.assign(_later=~in_burst).sort_values(["t", "_later"], kind="stable")
    return ordered.drop_duplicates(["role", "pid", "t"]).drop(columns="_later")


def cell_timeline(folder: Path) -> pd.DataFrame:
    """One cell's samples per role and instant (a process tree summed), t in seconds from
    the start of the burst (the first "measure" sample).

    `cpu_seconds`: the tree's CPU since its first sample (each process's increments of
    its cumulative CPU, so a process appearing later adds only what it used since);
    `cpu_percent`: CPU over the window of at least WINDOW_S ending at the sample, in % of
    one core (NaN in the first WINDOW_S)."""
    import pandas as pd

    rows = resources_frame_rows(read_raw_text(folder / "resources.csv"), folder / "resources.csv")
    samples = pd.DataFrame(rows)
    columns = ["role", "t", "phase", "cpu_seconds", "cpu_percent", "rss_mib"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    for column in ("t", "rss_bytes", "cpu_seconds"):
        samples[column] = samples[column].astype(float)
    # A process caught while exiting reads 0 bytes of RSS: that is no measurement.
    samples = one_sample_per_instant(samples[samples["rss_bytes"] > 0])
    increments = samples.groupby(["role", "pid"])["cpu_seconds"].diff().fillna(0.0)
    samples = samples.assign(cpu_used=increments.clip(lower=0.0))
    measured = samples[samples["phase"] == "measure"]
    t0 = measured["t"].min() if len(measured) else samples["t"].min()
    tree = samples.groupby(["role", "t"], as_index=False).agg(
        phase=("phase", "first"), cpu_used=("cpu_used", "sum"), rss_bytes=("rss_bytes", "sum")
    )
    tree["cpu_seconds"] = tree.groupby("role")["cpu_used"].cumsum()
    parts = []
    for _, part in tree.groupby("role", sort=True):
        t, cpu = part["t"].tolist(), part["cpu_seconds"].tolist()
        part = part.assign(
            cpu_percent=[
                float("nan") if i is None else 100 * (cpu[j] - cpu[i]) / (t[j] - t[i])
                for j, i in enumerate(window_starts(t))
            ]
        )
        parts.append(part)
    tree = pd.concat(parts, ignore_index=True)
    tree["t"] = (tree["t"] - t0).round(3)
    tree["rss_mib"] = tree.pop("rss_bytes") / 2**20
    return tree[columns]


def peak_cpu(samples: pd.DataFrame) -> float:
    """Highest CPU (% of one core) over a window of at least WINDOW_S that overlaps the
    burst (t = 0 to its last "measure" sample); a cell shorter than a window: its mean."""
    samples = samples.sort_values("t")
    t, cpu = samples["t"].tolist(), samples["cpu_seconds"].tolist()
    burst_end = samples.loc[samples["phase"] == "measure", "t"].max()
    peaks = [
        100 * (cpu[j] - cpu[i]) / (t[j] - t[i])
        for j, i in enumerate(window_starts(t))
        if i is not None and t[j] >= 0 and t[i] <= burst_end
    ]
    if peaks:
        return max(peaks)
    return 100 * (cpu[-1] - cpu[0]) / (t[-1] - t[0]) if t[-1] > t[0] else float("nan")


def timelines(run: Run) -> pd.DataFrame:
    """Every complete watch cell's timeline, with its strategy, message, folder, repeat."""
    import pandas as pd

    parts = []
    for folder, cell in run.cells_of(STUDY):
        if not raw_exists(folder / "resources.csv"):
            continue
        part = cell_timeline(folder)
        part["cell_id"], part["status"] = cell["cell_id"], cell["status"]
        part["strategy"], part["repeat"] = cell["implementation"], cell.get("repeat", 1)
        part["message"], part["folder"] = cell["params"]["message"], cell["params"]["folder"]
        # The server's pinned CPUs bound its CPU: a window reading more is timing error.
        cores = len(cell.get("pinning", {}).get("server_cpus", [])) or None
        part["server_cores"] = cores
        if cores:  # the figure's CPU line, capped as the peak is (burst_rows)
            server = part["role"] == "server"
            part.loc[server, "cpu_percent"] = part.loc[server, "cpu_percent"].clip(
                upper=100 * cores
            )
        parts.append(part)
    if not parts:
        return pd.DataFrame(
            columns=["cell_id", "strategy", "message", "folder", "repeat", "role", "t", "phase"]
        )
    return pd.concat(parts, ignore_index=True)


def burst_rows(timeline: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the server's peak CPU (`peak_cpu`) in the burst, its RSS before it and how
    much it grew. The peak is capped at 100% per CPU the server was pinned to (the raw
    reading stays as `server_cpu_percent_peak_read`; `peak_note` says where it mattered):
    a sample's time is taken before its CPU is read, and on a busy host the read lags by
    tens of milliseconds, a few percent of a 1 s window."""
    import pandas as pd

    rows = []
    server = timeline[timeline["role"] == "server"]
    for cell_id, samples in server.groupby("cell_id"):
        burst = samples[samples["phase"] == "measure"]
        before = samples[samples["t"] < 0]
        if burst.empty:
            continue
        rss_before = float(before["rss_mib"].iloc[-1]) if len(before) else float("nan")
        read = peak_cpu(samples)
        cores = samples["server_cores"].iloc[0] if "server_cores" in samples else None
        values = {
            "server_cpu_percent_peak": read
            if cores != cores or not cores
            else min(read, 100 * cores),
            "server_cpu_percent_peak_read": read,
            "server_rss_before": rss_before,
            "server_rss_growth": float(samples["rss_mib"].max()) - rss_before,
        }
        rows += [
            {"cell_id": cell_id, "metric": m, "value": v, "unit": BURST_METRICS[m]}
            for m, v in values.items()
        ]
    return pd.DataFrame(rows, columns=["cell_id", "metric", "value", "unit"])


def peak_note(rows: pd.DataFrame) -> str:
    """A sentence on the cells whose highest window read more than their pinned cores
    (`burst_rows`), or that none did."""
    if rows.empty:
        return ""
    wide = rows.pivot_table(index="cell_id", columns="metric", values="value")
    if "server_cpu_percent_peak_read" not in wide:
        return ""
    # Within two 10 ms ticks of the window, a reading above the cap is /proc's resolution.
    tolerance = 100 * 2 * TICK_S / WINDOW_S
    over = wide[wide["server_cpu_percent_peak_read"] > wide["server_cpu_percent_peak"] + tolerance]
    window = f"{WINDOW_S:g} s"
    if over.empty:
        return f"No cell's CPU over a {window} window read more than the cores it was pinned to."
    return (
        f"In {len(over)} of {len(wide)} cells a {window} window read more CPU than the server's "
        f"pinned cores allow (up to {over['server_cpu_percent_peak_read'].max():.0f}%): a "
        "sample's time is taken before its CPU is read, and on a busy host the read lags by "
        "tens of milliseconds. Their peak is shown at the cores' 100%."
    )


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
    """The seed's table: one row per message type, folder and strategy, its peak and mean
    CPU, CPU seconds, peak RSS, time to serve every watcher, slowest watch and median first
    message (medians over repeats).

    The seed's folders are its columns; here they are a row level, so the table is the
    SHAPE's seven columns wide whatever the folders (three folders side by side, 21
    columns, do not fit a page)."""
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
        index=["message", "folder", "strategy"], columns="column", values="shown", aggfunc="first"
    )
    columns = [c for c, _ in SHAPE.values() if c in table.columns]
    strategies = [STRATEGY_NAMES[s] for s in STRATEGIES]
    index = [
        (m, f, s) for m in MESSAGES for f in FOLDERS for s in strategies if (m, f, s) in table.index
    ]
    table = table.loc[index, columns]
    table.columns.name = None  # the headers name themselves
    return table


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


def published_vs_measured(
    summary: pd.DataFrame,
    published: pd.DataFrame,
    folders: dict[str, int] | None = None,
    cores: int = 1,
) -> pd.DataFrame:
    """The seed's peak CPU and peak RAM per cell next to ours, with the ratio, and a note
    where the two are not alike: our folder a fraction of the seed's (`folders`: folder ->
    bytes, folder_bytes), or our peak CPU at the cap of the `cores` the server was pinned
    to, which the seed's figure may lie above."""
    import json

    theirs = published[published["metric"].isin(PUBLISHED)]
    table = stats.compare_published(
        summary, theirs, ["scenario", "implementation"], PUBLISHED, how="left", sort=False
    )
    # Rows name our metric: the notebook picks its figures by it.
    table["metric"] = table["metric"].map(PUBLISHED)
    table = table.rename(columns={"implementation": "strategy"})
    seed_params = {row["scenario"]: json.loads(row["params"]) for _, row in theirs.iterrows()}
    seed_bytes = {name: p["kv_pairs"] * p["pair_bytes"] for name, p in seed_params.items()}
    table["note"] = [
        comparison_note(row, (folders or {}).get(row["scenario"].split("_")[-1]), seed_bytes, cores)
        for _, row in table.iterrows()
    ]
    # Each row's own coverage: rows of 3 and of 8 rounds sit in one table.
    table["interval"] = stats.interval_labels(table) if len(table) else []
    columns = ["scenario", "strategy", "metric", "unit", "published", "measured", "ci_low"]
    return table[[*columns, "ci_high", "interval", "ratio", "note"]]


def comparison_note(row: pd.Series, ours: int | None, seed_bytes: dict, cores: int) -> str:
    notes = []
    seed = seed_bytes.get(row["scenario"])
    if ours and seed and abs(ours / seed - 1) > 0.01:
        notes.append(
            f"folder {ours / seed:.2g}x the seed's ({ours / 1e6:.3g} of {seed / 1e6:.3g} MB)"
        )
    at_cap = row["metric"] == PUBLISHED["cpu_percent_peak"] and row["ci_high"] >= 100 * cores - 0.5
    if at_cap:
        notes.append(f"at the cap of its {cores} pinned core(s): {100 * cores}%")
    return "; ".join(notes)


def pinned_cores(timeline: pd.DataFrame) -> int:
    """The cores the servers were pinned to (1 where the timeline does not say)."""
    if not len(timeline) or "server_cores" not in timeline:
        return 1
    return int(timeline["server_cores"].max())


def folder_bytes(frame: pd.DataFrame) -> dict[str, int]:
    """Folder name -> the bytes our cells of it served (pairs x pair size, from `sizes`)."""
    table = sizes(frame)
    return {
        str(row.folder): int(row.kv_pairs * row.pair_bytes)
        for row in table.dropna(subset=["folder", "kv_pairs", "pair_bytes"]).itertuples()
    }


def failure_reasons(run: Run) -> pd.DataFrame:
    """Failed watch cells and why; a client killed by a signal (the seed's OOM-killed
    clients) is named as such from GNU time's record of it."""
    import pandas as pd

    rows = []
    for folder, cell in run.cells_of(STUDY):
        if cell["status"] != "failed":
            continue
        reason = cell.get("error", "").strip().split("\n")[0]
        number = (
            terminating_signal(read_raw_text(folder / "time.txt"))
            if raw_exists(folder / "time.txt")
            else None
        )
        if number is not None:
            reason = (
                f"client killed by signal {number} ({SIGNALS.get(number, 'signal')}); " + reason
            )
        rows.append({"cell_id": cell["cell_id"], "reason": reason})
    return pd.DataFrame(rows, columns=["cell_id", "reason"])


# --- figures -------------------------------------------------------------------------------


def timeline_figure(
    timeline: pd.DataFrame, folder: str, role: str = "server", repeat: int = 1
) -> Figure:
    """CPU% and RSS over time, one line per strategy, mono and separated side by side (the
    seed's Grafana pictures); t = 0 is the start of the burst."""
    import matplotlib.pyplot as plt

    from perflab.analysis.plots import palette

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
        axes[0, col].set_ylabel(f"CPU (% of one core, last {WINDOW_S:g} s)")
        axes[1, col].set_ylabel("RSS (MiB)")
        axes[1, col].set_xlabel("seconds from the start of the burst")
        for ax in axes[:, col]:
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
        rss = part[part["message"] == message]["rss_mib"]
        if rss_spans_decades(rss):
            # A 3.7 GiB cache on a linear axis flattens the 90 MiB strategies onto zero.
            axes[1, col].set_yscale("log")
            axes[1, col].set_ylim(bottom=rss[rss > 0].min() * 0.8)
            axes[1, col].set_ylabel("RSS (MiB, log scale)")
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def rss_spans_decades(rss: pd.Series) -> bool:
    """Whether the RSS lines of one panel span more than a decade (log axis then)."""
    positive = rss[rss > 0]
    return len(positive) > 0 and positive.max() / positive.min() > 10


# Each CPU phase the seed read off Grafana, as (percent metric, minutes metric).
CPU_PHASES = (
    ("cpu_percent_peak", "cpu_phase_minutes"),
    ("cpu_percent_phase2", "cpu_phase2_minutes"),
)


def seed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The seed's rows (perflab.analysis.published) with the scenario split into message and
    folder, plus its CPU as core-seconds (`core_seconds`), the metric the run measures."""
    import pandas as pd

    cpu = seed_tables.long_rows({"core_seconds": core_seconds(seed_tables.cell_metrics(rows))})
    rows = pd.concat([rows, *cpu], ignore_index=True) if cpu else rows
    parts = rows["scenario"].str.split("_", n=1, expand=True)
    if not parts.empty:
        rows = rows.assign(message=parts[0], folder=parts[1])
    return rows


def core_seconds(wide: pd.DataFrame) -> pd.Series:
    """CPU as core-seconds, each phase's percent (per core) x its minutes x 60, the seed's
    phases summed; NaN where the seed writes '...' for a phase's duration."""
    total = (
        seed_tables.column(wide, "cpu_percent_peak")
        / 100
        * seed_tables.column(wide, "cpu_phase_minutes")
        * 60
    )
    second_percent = seed_tables.column(wide, "cpu_percent_phase2")
    second = second_percent / 100 * seed_tables.column(wide, "cpu_phase2_minutes") * 60
    # A second phase is added only where the seed lists one; its missing duration is NaN.
    return total + second.where(second_percent.notna(), 0)
