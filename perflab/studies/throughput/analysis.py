"""The throughput study's analysis (seed 002): tables, floor fractions and the closing note.

Everything works on `perflab.analysis.frames` rows of study "throughput" (params `payload_bytes`,
`chunk_bytes`, `pair`) and on their `stats.summarize` by KEYS. gRPC cells have a security
mode as scenario (none, tls, mtls); the floor cells have scenario "floor_tcp" (iperf3, one
TCP stream over the same loopback) or "floor_cipher" (openssl speed of AES-128-GCM on one
core). The closing note is generated from the numbers, so a new run re-states it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from perflab.analysis import published as seed_tables
from perflab.analysis import stats, tables
from perflab.analysis.frames import DIVIDED_BY_CELL

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

STUDY = "throughput"
KEYS = ["scenario", "implementation", "client", "pair", "payload_bytes"]
SECURITIES = ["none", "tls", "mtls"]
MODE_WORDS = {"none": "without TLS", "tls": "with TLS", "mtls": "with mutual TLS"}
FLOOR_TCP, FLOOR_CIPHER = "floor_tcp", "floor_cipher"
NAMES = {"go": "Go", "cpp": "C++", "python": "Python", "python_aio": "Python grpc.aio"}
GIB = 2**30


def size_label(size: float) -> str:
    """512 MiB, 1 GiB, 10 GiB: sizes as the seed names them."""
    size = int(size)
    if size % GIB == 0:
        return f"{size // GIB} GiB"
    if size % 2**20 == 0:
        return f"{size // 2**20} MiB"
    return f"{size:,} B"


def pair_label(server: str, client: str) -> str:
    """'Go' for an own-language pair, 'Python client -> C++ server' otherwise."""
    if server == client:
        return NAMES.get(server, server)
    return f"{NAMES.get(client, client)} client -> {NAMES.get(server, server)} server"


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    return pd.concat([a, b.reindex(columns=a.columns)], ignore_index=True)


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's measured rows plus per-cell costs: CPU seconds per GiB and peak RSS in MiB.

    Client CPU is GNU time's user + system of the whole client process; server CPU is the
    difference of the server tree's cumulative CPU between the first and last samples of
    the measured phase (`parsers.parse_resources`: nothing the server did before the client
    started, such as building its payload). Both include the warm-up stream, so per GiB
    they are divided by the bytes of both calls; the client's also includes its start (a
    Python interpreter's imports weigh on tiny payloads only). In runs whose sampler did
    not sample at the phase change, the server's window misses up to 100 ms at each end
    (mostly the client starting and exiting, when the server waits).
    """
    rows = frame[(frame["study"] == STUDY) & (frame["status"] != "failed")].copy()
    if rows.empty:
        return rows
    cell_keys = [c for c in rows.columns if c not in ("metric", "value", "unit")]
    wide = rows.pivot_table(index="cell_id", columns="metric", values="value", aggfunc="first")
    first = rows.drop_duplicates("cell_id").set_index("cell_id")
    first = first[[c for c in cell_keys if c != "cell_id"]]
    derived = []
    for cell_id, cell in wide.iterrows():
        extra = {}
        if {"client_cpu_user", "client_cpu_system"} <= set(cell.dropna().index):
            client_cpu = cell["client_cpu_user"] + cell["client_cpu_system"]
            extra["client_process_cpu_seconds"] = (client_cpu, "s")
        else:
            client_cpu = float("nan")
        if "client_max_rss" in cell.index and cell["client_max_rss"] == cell["client_max_rss"]:
            extra["client_rss_peak"] = (cell["client_max_rss"] / 1024, "MiB")
        streamed = cell.get("bytes", float("nan"))
        if streamed == streamed and streamed > 0 and "warmup_bytes" in cell.index:
            streamed += cell["warmup_bytes"]
        if streamed == streamed and streamed > 0 and first.loc[cell_id, "pair"] != "floor":
            gib = streamed / GIB
            extra["client_cpu_s_per_gib"] = (client_cpu / gib, "s/GiB")
            extra["server_cpu_s_per_gib"] = (
                cell.get("server_cpu_seconds", float("nan")) / gib,
                "s/GiB",
            )
        for metric, (value, unit) in extra.items():
            derived.append(
                {
                    **first.loc[cell_id].to_dict(),
                    "cell_id": cell_id,
                    "metric": metric,
                    "value": float(value),
                    "unit": unit,
                }
            )
    if derived:
        import pandas as pd

        rows = _concat(rows, pd.DataFrame(derived))
    return rows


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Median and interval over repeats per security, server, client and size; + labels."""
    rows = study_rows(frame)
    if rows.empty:
        return rows
    summary = stats.summarize(rows, KEYS)
    summary["label"] = [
        pair_label(s, c) for s, c in zip(summary["implementation"], summary["client"], strict=True)
    ]
    return summary


def pick(summary: pd.DataFrame, metric: str, grpc_only: bool = True) -> pd.DataFrame:
    part = summary[summary["metric"] == metric]
    if grpc_only:
        part = part[part["scenario"].isin(SECURITIES)]
    return part


def floors(summary: pd.DataFrame) -> dict[str, float]:
    """The floor medians in GiB/s: raw TCP (iperf3) and one core's AES-128-GCM (openssl)."""
    part = summary[summary["metric"] == "throughput"]
    found = {}
    for scenario in (FLOOR_TCP, FLOOR_CIPHER):
        rows = part[part["scenario"] == scenario]
        found[scenario] = float(rows["median"].iloc[0]) if len(rows) else float("nan")
    return found


def floor_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The floor cells: median and interval in GiB/s, indexed by what each bounds (a
    0..n index would show as row numbers that say nothing)."""
    import pandas as pd

    part = summary[
        (summary["metric"] == "throughput") & summary["scenario"].isin([FLOOR_TCP, FLOOR_CIPHER])
    ]
    if part.empty:
        return pd.DataFrame()
    what = {
        FLOOR_TCP: "raw TCP, one stream (iperf3)",
        FLOOR_CIPHER: "AES-128-GCM, one core (openssl)",
    }
    return pd.DataFrame(
        {
            "floor": part["scenario"].map(what).to_numpy(),
            "throughput (GiB/s)": tables.with_interval(part, 2).to_numpy(),
            "repeats": part["n"].to_numpy(),
        }
    ).set_index("floor")


def seed_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed's table re-measured: own-language pairs, rows implementation x size,
    one column per security mode, 'median [interval]' in GiB/s."""
    import pandas as pd

    part = pick(summary, "throughput")
    part = part[part["pair"] == "own"]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(
        row=[
            f"{NAMES.get(i, i)}, {size_label(s)}"
            for i, s in zip(part["implementation"], part["payload_bytes"], strict=True)
        ],
        order=[
            (list(NAMES).index(i) if i in NAMES else 99, s)
            for i, s in zip(part["implementation"], part["payload_bytes"], strict=True)
        ],
    )
    table = tables.ci_table(part, "row", "scenario", digits=2)
    rows = part.drop_duplicates("row").sort_values("order")["row"]
    columns = [f"scenario {s} (GiB/s)" for s in SECURITIES if f"scenario {s} (GiB/s)" in table]
    return table.loc[rows, columns]


def reference_rows(reference: pd.DataFrame) -> pd.DataFrame:
    """Published rows with payload_bytes taken out of their params JSON."""
    ref = reference[reference["study"] == STUDY].copy()
    ref["payload_bytes"] = [int(json.loads(p)["payload_bytes"]) for p in ref["params"]]
    return ref


def published_vs_measured(summary: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Every published figure next to the own-language pair measured at the same size and
    mode (empty where this run lacks the size), with the ratio measured/published. Sizes
    the seed did not publish (smoke's few MiB) are left out: they answer nothing."""
    on = ["scenario", "implementation", "payload_bytes"]
    mine = pick(summary, "throughput")
    mine = mine[mine["pair"] == "own"].copy()
    mine["payload_bytes"] = mine["payload_bytes"].astype("int64")
    table = stats.compare_published(mine, reference_rows(reference), on, "throughput")
    table = table[table["published"].notna()].reset_index(drop=True)
    table["payload"] = [size_label(b) for b in table["payload_bytes"]]
    table["label"] = [
        f"{NAMES.get(i, i)} {s} {size_label(b)}"
        for i, s, b in zip(
            table["implementation"], table["scenario"], table["payload_bytes"], strict=True
        )
    ]
    return table


def ranking(compared: pd.DataFrame) -> pd.DataFrame:
    """Per security mode and size, whether the seed and this run order the implementations
    alike (fastest first); only where both have a number."""
    both = compared.dropna(subset=["published", "measured"])
    if both.empty:
        return both
    both = both.assign(
        case=[f"{s}, {p}" for s, p in zip(both["scenario"], both["payload"], strict=True)],
        name=both["implementation"].map(lambda i: NAMES.get(i, i)),
    )
    return stats.ranking_by_group(both, "case", "name")


def fraction_of_floor(summary: pd.DataFrame) -> pd.DataFrame:
    """Each gRPC median as a share of raw TCP (all modes) and of the cipher (TLS and mTLS)."""
    import pandas as pd

    part = pick(summary, "throughput")
    if part.empty:
        return pd.DataFrame()
    floor = floors(summary)
    table = pd.DataFrame(
        {
            "pair": part["label"].to_numpy(),
            "security": part["scenario"].to_numpy(),
            "payload": [size_label(s) for s in part["payload_bytes"]],
            "throughput (GiB/s)": part["median"].round(2).to_numpy(),
            "of raw TCP": (part["median"] / floor[FLOOR_TCP]).round(2).to_numpy(),
            "of the cipher": [
                round(m / floor[FLOOR_CIPHER], 2) if s != "none" else float("nan")
                for m, s in zip(part["median"], part["scenario"], strict=True)
            ],
        }
    )
    return table.sort_values(["pair", "payload", "security"]).reset_index(drop=True)


COST_METRICS = {
    "server_cpu_s_per_gib": ("server CPU (s/GiB)", 2),
    "server_cpu_percent_mean": ("server CPU (% of a core)", 0),
    "client_cpu_s_per_gib": ("client CPU (s/GiB)", 2),
    "server_rss_peak": ("server peak RSS (MiB)", 0),
    "client_rss_peak": ("client peak RSS (MiB)", 0),
}


def cost_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per pair, mode and size: CPU seconds per GiB moved and peak RSS of each side (medians)."""
    import pandas as pd

    part = summary[summary["metric"].isin(COST_METRICS) & summary["scenario"].isin(SECURITIES)]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(
        column=part["metric"].map(lambda m: COST_METRICS[m][0]),
        payload=[size_label(s) for s in part["payload_bytes"]],
        shown=[
            round(v, COST_METRICS[m][1])
            for v, m in zip(part["median"], part["metric"], strict=True)
        ],
    )
    table = part.pivot_table(
        index=["label", "scenario", "payload"], columns="column", values="shown", aggfunc="first"
    )
    table.index.names = ["pair", "security", "payload"]
    return table[[c for c, _ in COST_METRICS.values() if c in table.columns]]


def bars(summary: pd.DataFrame, payload_bytes: int) -> Figure:
    """Throughput per pair, one bar per security mode with its interval, floor as lines.

    Only the modes measured at this size get a bar and a legend entry (the quick profile
    streams 10 GiB in plaintext only): an entry with no bar names nothing on the chart."""
    import matplotlib.pyplot as plt
    import numpy as np

    part = pick(summary, "throughput")
    part = part[part["payload_bytes"] == payload_bytes]
    labels = sorted(part["label"].unique(), key=lambda name: (" -> " in name, name))
    xs = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(labels) + 2), 4.5))
    measured = part.dropna(subset=["median"])
    securities = [s for s in SECURITIES if s in set(measured["scenario"])]
    width = 0.8 / max(1, len(securities))
    for i, security in enumerate(securities):
        rows = part[part["scenario"] == security].set_index("label").reindex(labels)
        # One repeat has no interval: no error bar.
        err = [
            (rows["median"] - rows["ci_low"]).fillna(0),
            (rows["ci_high"] - rows["median"]).fillna(0),
        ]
        ax.bar(
            xs + (i - (len(securities) - 1) / 2) * width,
            rows["median"],
            width=width,
            yerr=err,
            capsize=2,
            label=security,
            color=f"C{SECURITIES.index(security)}",  # a mode's colour on every size's chart
        )
    floor = floors(summary)
    for scenario, style, name in (
        (FLOOR_TCP, "--", "raw TCP (iperf3)"),
        (FLOOR_CIPHER, ":", "AES-128-GCM, one core"),
    ):
        if floor[scenario] == floor[scenario]:
            ax.axhline(floor[scenario], linestyle=style, color="grey", label=name)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("throughput (GiB/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"One stream of {size_label(payload_bytes)}: median and interval")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def chunk_note(frame: pd.DataFrame) -> str:
    """The chunk sizes (bytes per message) the run's gRPC cells used, as a sentence."""
    rows = frame[frame["study"] == STUDY]
    chunks = sorted(int(c) for c in rows.get("chunk_bytes", rows.iloc[0:0]).dropna().unique())
    listed = ", ".join(f"{c:,}" for c in chunks) or "none recorded"
    return f"Chunk size (bytes per message): {listed}."


def memory_note(summary: pd.DataFrame) -> str:
    """Does a client need memory in proportion to the stream? Peak RSS at the smallest and
    largest size, per client, against the server's (which holds the whole payload)."""
    part = summary[(summary["metric"] == "client_rss_peak") & summary["scenario"].isin(SECURITIES)]
    if part.empty:
        return "No client peak RSS was recorded in this run."
    lines = []
    for client in [c for c in NAMES if c in set(part["client"])]:
        mine = part[part["client"] == client]
        small, large = mine["payload_bytes"].min(), mine["payload_bytes"].max()
        low = mine[mine["payload_bytes"] == small]["median"].max()
        high = mine[mine["payload_bytes"] == large]["median"].max()
        span = (
            f"{high:.0f} MiB for {size_label(large)}"
            if small == large
            else f"{low:.0f} MiB at {size_label(small)} and {high:.0f} MiB at {size_label(large)}"
        )
        lines.append(f"the {NAMES[client]} client peaked at {span}")
    return "Largest peak RSS over modes and pairs: " + "; ".join(lines) + "."


def sizes(summary: pd.DataFrame) -> list[int]:
    part = pick(summary, "throughput")
    return sorted(int(s) for s in part["payload_bytes"].dropna().unique())


def closing_note(summary: pd.DataFrame) -> str:
    """The floor, and each own-language pair's best and worst share of raw TCP, in words."""
    floor = floors(summary)
    part = pick(summary, "throughput")
    part = part[part["pair"] == "own"]
    if part.empty:
        return "This run has no gRPC throughput cell to compare with the floor."
    tcp, cipher = floor[FLOOR_TCP], floor[FLOOR_CIPHER]
    has_tcp, has_cipher = tcp == tcp, cipher == cipher  # NaN: no floor cell in this run
    lines = [
        f"Raw TCP over this loopback carried {tcp:.2f} GiB/s in one stream (iperf3)."
        if has_tcp
        else "This run has no raw-TCP floor cell.",
        f"One core encrypts AES-128-GCM at {cipher:.2f} GiB/s."
        if has_cipher
        else "This run has no cipher floor cell.",
    ]
    for impl in [i for i in NAMES if i in set(part["implementation"])]:
        mine = part[part["implementation"] == impl]
        for security in [s for s in SECURITIES if s in set(mine["scenario"])]:
            rows = mine[mine["scenario"] == security]
            best = rows.loc[rows["median"].idxmax()]
            shares = []
            if has_tcp:
                shares.append(f"{best['median'] / tcp:.0%} of raw TCP")
            if has_cipher and security != "none":
                shares.append(f"{best['median'] / cipher:.0%} of the cipher")
            lines.append(
                f"{NAMES[impl]} ({security}): {best['median']:.2f} GiB/s at "
                f"{size_label(best['payload_bytes'])}"
                + (", " + ", ".join(shares) if shares else "")
                + "."
            )
    return " ".join(lines)


def unmeasured_note(compared: pd.DataFrame) -> str:
    """One sentence naming the published rows this run did not measure (by size), or ''."""
    missing = compared[compared["published"].notna() & compared["measured"].isna()]
    if missing.empty:
        return ""
    # Per size, each security mode with the implementations it lacks: a size this run
    # measured without TLS only reads "512 MiB with TLS (C++, Go), ...", not as if unmeasured.
    parts = []
    for size, at_size in missing.groupby("payload_bytes", sort=True):
        modes = [
            f"{MODE_WORDS.get(mode, mode)} ("
            + ", ".join(sorted({NAMES.get(i, i) for i in rows["implementation"]}))
            + ")"
            for mode, rows in sorted(
                at_size.groupby("scenario"),
                key=lambda kv: SECURITIES.index(kv[0]) if kv[0] in SECURITIES else len(SECURITIES),
            )
        ]
        parts.append(f"{size_label(size)} " + ", ".join(modes))
    return (
        f"Not measured in this run (its profile lacks them), {len(missing)} of the seed's "
        f"{len(compared)} published figures: " + "; ".join(parts) + "."
    )


# The columns that name one gRPC cell but its security mode: a TLS cell and the no-TLS
# cell of the same pair, size and round share them.
SAME_STREAM = [
    "run_id",
    "study",
    "implementation",
    "client",
    "pair",
    "payload_bytes",
    "chunk_bytes",
]


def tls_over_none(frame: pd.DataFrame) -> pd.DataFrame:
    """Each round's TLS throughput over the same round's no-TLS throughput, per pair and
    size: what TLS leaves of a stream's rate (claim metric `tls_over_none`, scenario tls).
    Paired within the round (repeat), so drift between rounds cancels; a side that was
    `bound` makes the ratio bound, a failed cell drops its pair. A row carries the TLS
    cell's id and names the no-TLS cell it divides by (frames.DIVIDED_BY_CELL): a look that
    repeated the TLS cells alone would add no row (on data/20261129T041406Z-quick C++'s
    TLS cells ran 10 rounds, its no-TLS ones 5, and the claims were judged on 5)."""
    rows = frame[
        (frame["study"] == STUDY)
        & (frame["metric"] == "throughput")
        & (frame["status"] != "failed")
    ]
    keys = [*SAME_STREAM, "repeat"]
    if rows.empty or not set(keys) <= set(rows.columns):
        return rows.iloc[0:0]  # a run without throughput cells (e.g. netns)
    tls = rows[rows["scenario"] == "tls"]
    none = rows.loc[rows["scenario"] == "none", [*keys, "value", "status", "cell_id"]]
    paired = tls.merge(none, on=keys, suffixes=("", "_none"))
    bound = (paired["status"] == "bound") | (paired["status_none"] == "bound")
    paired = paired.assign(
        value=paired["value"] / paired["value_none"],
        metric="tls_over_none",
        unit="ratio",
        status=bound.map({True: "bound", False: "ok"}),
        **{DIVIDED_BY_CELL: paired["cell_id_none"]},
    )
    return paired[[*tls.columns, DIVIDED_BY_CELL]]


def claim_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Derived metrics data/reference/claims.yml judges, from the run's tidy frame: the
    study's claim-frame hook (perflab.analysis.run)."""
    return tls_over_none(frame)


def seed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The seed's rows (perflab.analysis.published) plus each implementation's TLS
    throughput over its no-TLS one per size (`tls_over_none`), the metric the run measures."""
    import pandas as pd

    mine = rows[rows["metric"] == "throughput"]
    keys = ["study", "implementation", "client", "concurrency", "params", "repeat"]
    wide = seed_tables.widen(mine, keys, "scenario", "mean")
    if not {"tls", "none"} <= set(wide.columns):
        return rows
    ratio = (wide["tls"] / wide["none"]).dropna().rename("value").reset_index()
    ratio = ratio.assign(scenario="tls", metric="tls_over_none", source=mine["source"].iloc[0])
    return pd.concat([rows, ratio], ignore_index=True)
