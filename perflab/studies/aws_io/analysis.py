"""aws_io study (seed 000, S3 listing and MongoDB saving): the analysis its notebook shows.

Everything here works on `perflab.analysis.frames` frames and on the raw files of a run folder
(ghz.json error texts, the servers' STATS line in server.log), so the notebook only
calls and displays.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis.stats import compare_published, lower_bounds, summarize
from perflab.analysis.tables import COUNT_UNITS, counts_as_integers, floor_marked
from perflab.contract import params
from perflab.contract.params import CURRENT_STACK
from perflab.contract.parsers import (
    ghz_error_messages,
    parse_server_stats,
    raw_exists,
    read_raw_text,
)
from perflab.studies.aws_io.matrix import LATENCY_PROFILES

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from perflab.analysis.run import Run

STUDY = "aws_io"
SCENARIOS = {
    "list_unary": "aws api unary (ListObjects)",
    "list_stream": "aws api stream (ListObjectsStream)",
    "list_save": "list + save to MongoDB (ListAndSave)",
}
IMPLEMENTATIONS = ["grpcio_sync_w1", "grpcio_sync_w10", "grpclib_asyncio", "grpclib_uvloop"]
# The rows of the seed's tables, in its order, with their units.
SEED_ROWS = [
    ("count", "calls"),
    ("ok", "calls"),
    ("errors_Unavailable", "calls"),
    ("errors_DeadlineExceeded", "calls"),
    ("total", "s"),
    ("latency_slowest", "ms"),
    ("latency_fastest", "ms"),
    ("latency_mean", "ms"),
    ("rps", "req/s"),
]
SEED_DIGITS = 2
# The seed's ghz ran its default, one HTTP/2 connection: its tables answer those cells.
SEED_CONNECTIONS = 1


def study_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """This study's rows; error counts a cell did not report are zeros, not gaps.

    Cells recorded before `connections` was a matrix key ran one connection and read as 1.
    `server` is the implementation's own name; when the run varies the connections, the
    `implementation` label also says how many, so no table mixes two connection counts.
    """
    import pandas as pd

    part = frame[frame["study"] == STUDY].copy()
    if part.empty:
        return part
    # Cells on seed 000's grpcio (`stack` seed000) are judged by the claims' -seed-stack
    # readings and summed up by stack_note; the tables stay the current stack's.
    part = params.with_defaults(part, ("connections", "stack"))
    part = part[part["stack"] == CURRENT_STACK].drop(columns="stack")
    if part.empty:
        return part
    part["server"] = part["implementation"]
    if part["connections"].nunique() > 1:
        part["implementation"] = [
            f"{impl} ({k} conn)"
            for impl, k in zip(part["server"], part["connections"], strict=True)
        ]
    keys = [c for c in part.columns if c not in ("metric", "value", "unit")]
    counted = part[part["metric"] == "count"][keys].drop_duplicates()
    zeros = []
    for metric, unit in SEED_ROWS:
        if metric.startswith("errors_"):
            have = part[part["metric"] == metric]["cell_id"]
            missing = counted[~counted["cell_id"].isin(have)]
            zeros.append(missing.assign(metric=metric, value=0.0, unit=unit))
    return pd.concat([part, *zeros], ignore_index=True)


def as_the_seed_ran(part: pd.DataFrame) -> pd.DataFrame:
    """The rows on one connection, as the seed ran, under the servers' own names."""
    if part.empty:
        return part
    part = part[part["connections"] == SEED_CONNECTIONS]
    return part.assign(implementation=part["server"])


def shape_for_seed(frame: pd.DataFrame) -> str:
    """The seed's tables come from seed_n200 cells; a run without them (smoke) uses steady."""
    shapes = set(frame.get("shape", []))
    return "seed_n200" if "seed_n200" in shapes else "steady"


def latency_profiles(frame: pd.DataFrame) -> list[str]:
    """The latency profiles this run measured, "none" first."""
    part = study_frame(frame)
    found = set(part["latency_profile"]) if len(part) else set()
    return sorted(found, key=lambda p: (p != "none", p)) or ["none"]


def seed_table(
    frame: pd.DataFrame,
    published: pd.DataFrame,
    scenario: str,
    concurrency: int,
    latency: str = "none",
) -> pd.DataFrame:
    """One of the seed's tables: its rows, per server the published and the measured median,
    as shown (SEED_DIGITS decimals; the rows counting calls as integers, NaN where a side
    has no number; a measured rate resting on a `bound` repeat led by "≥")."""
    import pandas as pd

    part = as_the_seed_ran(study_frame(frame))
    shape = shape_for_seed(part)
    if not part.empty:
        part = part[
            (part["scenario"] == scenario)
            & (part["shape"] == shape)
            & (part["concurrency"] == concurrency)
            & (part["latency_profile"] == latency)
        ]
    metrics = [m for m, _ in SEED_ROWS]
    summary = summarize(part, ["implementation"], metrics) if len(part) else pd.DataFrame()
    theirs = published[
        (published["scenario"] == scenario) & (published["concurrency"] == concurrency)
    ]
    compared = compare_published(summary, theirs, ["implementation"], {m: m for m in metrics})
    rows = []
    for metric, unit in SEED_ROWS:
        row: dict[str, Any] = {"row": f"{metric} ({unit})"}
        for impl in IMPLEMENTATIONS:
            hit = compared[(compared["implementation"] == impl) & (compared["metric"] == metric)]
            for side in ("published", "measured"):
                row[(impl, side)] = float(hit[side].iloc[0]) if len(hit) else float("nan")
        rows.append(row)
    table = pd.DataFrame(rows).set_index("row")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    # As shown: two decimals, and the calls counted as whole numbers (200, not 200.0).
    counts = [unit in COUNT_UNITS for _, unit in SEED_ROWS]
    table = mark_floors(counts_as_integers(table.round(SEED_DIGITS), rows=counts), compared)
    table.attrs["shape"] = shape
    return table


def mark_floors(table: pd.DataFrame, compared: pd.DataFrame) -> pd.DataFrame:
    """`seed_table`'s shown table with each measured figure that is only a lower bound
    (`stats.lower_bounds` of the `compare_published` rows it came from) led by "≥"."""
    units = dict(SEED_ROWS)
    floors = compared[lower_bounds(compared)]
    for impl, metric in zip(floors["implementation"], floors["metric"], strict=True):
        row, column = f"{metric} ({units[metric]})", (impl, "measured")
        if column in table.columns:
            table.loc[row, column] = floor_marked(str(table.loc[row, column]), True)
    return table


def measured_seed_tables(
    frame: pd.DataFrame, published: pd.DataFrame, latency: str = "none"
) -> tuple[list[tuple[str, int, pd.DataFrame]], str]:
    """The seed's tables this run measured, as (scenario, concurrency, table) with only the
    rows either side has, and one sentence naming those it did not measure ('' if none)."""
    shown, missing = [], []
    for scenario in ("list_unary", "list_stream"):
        for concurrency in sorted(int(c) for c in published["concurrency"].dropna().unique()):
            table = seed_table(frame, published, scenario, concurrency, latency)
            measured = table.xs("measured", axis=1, level=1)
            if measured.isna().all().all():
                missing.append(f"{SCENARIOS[scenario]} at concurrency {concurrency}")
                continue
            kept = table.dropna(how="all")
            kept.attrs = table.attrs
            shown.append((scenario, concurrency, kept))
    note = ""
    if missing:
        note = (
            f"The seed also published {len(missing)} tables this run did not measure (its "
            f"profile lacks those cells, latency profile {latency}): " + "; ".join(missing) + "."
        )
    return shown, note


def rate_summary(frame: pd.DataFrame, metric: str = "rps") -> pd.DataFrame:
    """Median and interval of a metric per scenario, shape, profile, server, concurrency."""
    part = study_frame(frame)
    if part.empty:
        return part
    by = ["scenario", "shape", "latency_profile", "implementation", "concurrency"]
    return summarize(part, [*by, "connections", "server"], [metric])


def per_call_cpu(frame: pd.DataFrame) -> pd.DataFrame:
    """CPU milliseconds per successful call of the gRPC server and of S3 and MongoDB."""
    import pandas as pd

    part = study_frame(frame)
    if part.empty:
        return part
    keys = [
        "scenario",
        "shape",
        "latency_profile",
        "implementation",
        "concurrency",
        "connections",
        "cell_id",
    ]
    wide = part.pivot_table(index=keys, columns="metric", values="value", aggfunc="first")
    rows = []
    for role, column in (
        ("gRPC server", "server_cpu_seconds"),
        ("S3 (versitygw)", "dependency_s3_cpu_seconds"),
        ("MongoDB (FerretDB)", "dependency_mongo_cpu_seconds"),
    ):
        if column not in wide or "ok" not in wide:
            continue
        ok = wide["ok"].where(wide["ok"] > 0)
        values = (wide[column] * 1e3 / ok).dropna()
        for key, value in values.items():
            rows.append({**dict(zip(keys, key, strict=True)), "metric": role, "value": value})
    if not rows:
        return pd.DataFrame()
    cpu = pd.DataFrame(rows).assign(unit="ms/call")
    return summarize(cpu, keys[:-1])


def server_stats(folder: Path) -> dict[str, Any]:
    """The counts a server printed on exit (`parsers.parse_server_stats`); {} without a log."""
    log = folder / "server.log"
    if not log.is_file():
        return {}
    return parse_server_stats(log.read_text(errors="replace"), log)


def error_messages(run: Run) -> pd.DataFrame:
    """Every distinct error text ghz saw, per cell, with its count (status and message)."""
    import pandas as pd

    rows = []
    for folder, cell in run.cells_of(STUDY):
        if not raw_exists(folder / "ghz.json"):
            continue
        errors = ghz_error_messages(read_raw_text(folder / "ghz.json"))
        for message, count in errors.items():
            rows.append(
                {
                    "scenario": cell["scenario"],
                    "implementation": on_stack(cell),
                    "shape": cell["params"].get("shape"),
                    "concurrency": cell["params"].get("concurrency"),
                    "latency_profile": cell["params"].get("latency_profile", "none"),
                    "cell_id": cell["cell_id"],
                    "message": message,
                    "calls": count,
                }
            )
    columns = [
        "scenario",
        "implementation",
        "shape",
        "concurrency",
        "latency_profile",
        "cell_id",
        "message",
        "calls",
    ]
    return pd.DataFrame(rows, columns=columns)


def stream_messages(run: Run, frame: pd.DataFrame) -> pd.DataFrame:
    """Streaming cells: messages the server sent (its own count) per successful ghz call,
    per latency profile ("none" first) and cell, so that no two rows read alike."""
    import pandas as pd

    ok = frame[(frame["study"] == STUDY) & (frame["metric"] == "ok")].set_index("cell_id")["value"]
    rows = []
    for folder, cell in run.cells_of(STUDY):
        if cell["scenario"] != "list_stream":
            continue
        stats = server_stats(folder)
        sent = (stats.get("messages_sent") or {}).get("ListObjectsStream")
        calls = (stats.get("calls") or {}).get("ListObjectsStream")
        ghz_ok = float(ok.get(cell["cell_id"], float("nan")))
        rows.append(
            {
                "latency_profile": cell["params"].get("latency_profile", "none"),
                "implementation": on_stack(cell),
                "shape": cell["params"].get("shape"),
                "concurrency": cell["params"].get("concurrency"),
                "repeat": cell.get("repeat", 1),
                "server calls (incl. warm-up)": calls,
                "messages sent (incl. warm-up)": sent,
                "messages per call": (sent / calls) if sent and calls else float("nan"),
                "ghz OK calls (measured)": ghz_ok,
                "status": cell["status"],
            }
        )
    counted = ["server calls (incl. warm-up)", "messages sent (incl. warm-up)"]
    table = pd.DataFrame(rows)
    if len(table):
        order = ["latency_profile", "implementation", "shape", "concurrency", "repeat"]
        table = table.sort_values(order, key=none_first).reset_index(drop=True)
    return counts_as_integers(table, [*counted, "ghz OK calls (measured)"])


def on_stack(cell: dict[str, Any]) -> str:
    """A cell's implementation, naming its library stack where it is not the current one
    ('grpcio_sync_w10 (seed000)'), so the same server on two stacks never reads alike."""
    stack = cell["params"].get("stack", CURRENT_STACK)
    name = str(cell["implementation"])
    return name if stack == CURRENT_STACK else f"{name} ({stack})"


def stack_note(frame: pd.DataFrame, stack: str, record: dict[str, Any] | None) -> str:
    """One sentence: which servers ran on library stack `stack` (seed 000's grpcio), which
    did not and why, from the run's cells and what the stack's role recorded on the host
    (the manifest's `stacks` record; None: the run predates the role)."""
    part = frame[frame["study"] == STUDY]
    if part.empty:
        return ""
    part = params.with_defaults(part, ("stack",))
    servers = sorted(set(part["implementation"]))
    ran = sorted(set(part[part["stack"] == stack]["implementation"]))
    if record is not None and not record.get("installed"):
        looked = ", ".join(map(str, record.get("looked_for") or [])) or "nothing"
        wheels = ", ".join(map(str, record.get("wheels_for") or []))
        return (
            f"No server ran on {stack}: its grpcio has wheels for Python {wheels} only, and "
            f"this host has none of them (looked for {looked}); its -seed-stack readings are "
            "not measured."
        )
    if not ran:
        return (
            f"No server ran on {stack} in this run (its cells are not in the matrix); "
            "its -seed-stack readings are not measured."
        )
    where = sorted(set(part[part["stack"] == stack].get("latency_profile", [])))
    python = f" on Python {record['python']}" if record and record.get("python") else ""
    said = f"On {stack}{python}: {', '.join(ran)} ran again ({', '.join(map(str, where))})"
    others = [name for name in servers if name not in ran]
    if others:
        said += (
            f"; {', '.join(others)} did not (the matrix names no {stack} build of them: the "
            "seed pinned grpcio only, which they do not use), so their side of every "
            "-seed-stack reading is the current stack's"
        )
    return said + "."


def none_first(column: pd.Series) -> pd.Series:
    """A sort key: latency profile "none" (direct) before the others; other columns as is."""
    if column.name != "latency_profile":
        return column
    return column.map(lambda p: f"{int(p != 'none')}{p}")


def measured_regimes(frame: pd.DataFrame) -> str:
    """Markdown: per latency profile, what this run measured (RPCs, shapes, concurrencies,
    repeats), so the reader knows which regime each table below comes from."""
    part = study_frame(frame)
    if part.empty:
        return "This run has no aws_io cell."
    lines = []
    for latency in latency_profiles(part):
        cells = part[part["latency_profile"] == latency].drop_duplicates("cell_id")
        rpcs = ", ".join(f"`{s}`" for s in SCENARIOS if s in set(cells["scenario"]))
        shapes = ", ".join(f"`{s}`" for s in sorted(set(cells["shape"])))
        levels = "/".join(str(int(c)) for c in sorted(set(cells["concurrency"])))
        repeats = int(cells["repeat"].max())
        lines.append(
            f"- **{latency}** ({where_s3_was(latency)}): {rpcs}; {shapes} cells at "
            f"concurrency {levels}; {repeats} repeat{'s' if repeats > 1 else ''} "
            f"({len(cells)} cells)."
        )
    return "\n".join(lines)


def where_s3_was(latency: str) -> str:
    """'S3 and MongoDB on this host' or '... 250 ms away each way (Toxiproxy)'."""
    one_way_ms = LATENCY_PROFILES.get(latency)
    if not one_way_ms:
        return "S3 and MongoDB on this host" + (", through a proxy" if latency != "none" else "")
    return f"S3 and MongoDB {one_way_ms:g} ms away each way (Toxiproxy)"


def unavailable_answer(errors: pd.DataFrame, frame: pd.DataFrame) -> str:
    """Markdown: did the seed's grpclib stream `Unavailable` failures reproduce, per latency
    profile (the seed's S3 was a remote bucket, 0.5-1 s a call), and with what errors."""
    part = study_frame(frame)
    if len(part):
        part = part[
            (part["scenario"] == "list_stream")
            & part["implementation"].astype(str).str.startswith("grpclib")
        ]
    if part.empty:
        return "This run has no grpclib stream cell: the question cannot be answered from it."
    answers = []
    for latency in latency_profiles(part):
        stream = part[part["latency_profile"] == latency]
        cells = stream["cell_id"].nunique()
        calls = int(stream.loc[stream["metric"] == "count", "value"].sum())
        unavailable = int(stream.loc[stream["metric"] == "errors_Unavailable", "value"].sum())
        mine = errors[
            (errors["scenario"] == "list_stream")
            & errors["implementation"].str.startswith("grpclib")
            & (errors["latency_profile"] == latency)
        ]
        lead = f"**{where_s3_was(latency)} (latency profile {latency}):"
        if not unavailable:
            counts = mine.groupby("message")["calls"].sum()
            extra = (
                f" It saw {int(mine['calls'].sum())} other errors: "
                + "; ".join(f"{m!r} x {int(c)}" for m, c in counts.items())
                if len(mine)
                else " It saw no error of any kind."
            )
            answers.append(
                f"{lead} did not reproduce.** {cells} grpclib stream cells made {calls} calls, "
                f"none ended `Unavailable`.{extra}"
            )
            continue
        texts = mine[mine["message"].str.contains("Unavailable", case=False)]
        listed = "; ".join(
            f"{m!r} x {int(c)}" for m, c in texts.groupby("message")["calls"].sum().items()
        )
        answers.append(
            f"{lead} reproduced.** {unavailable} of {calls} calls in {cells} grpclib stream "
            f"cells ended `Unavailable`. What ghz recorded: {listed or 'no message text'}."
        )
    if all(not LATENCY_PROFILES.get(latency) for latency in latency_profiles(part)):
        answers.append(
            "The seed's failures came with a far-away S3 (0.5-1 s per call); this run put no "
            "delay on the S3 path (the `seed_far_s3` latency profile would)."
        )
    return "\n\n".join(answers)


def rps_published_vs_measured(
    frame: pd.DataFrame, published: pd.DataFrame, scenario: str, latency: str = "none"
) -> pd.DataFrame:
    """req/s per server and concurrency: the seed's number and this run's median (interval)."""
    summary = as_the_seed_ran(rate_summary(frame))
    shape = shape_for_seed(study_frame(frame))
    if len(summary):
        summary = summary[
            (summary["scenario"] == scenario)
            & (summary["shape"] == shape)
            & (summary["latency_profile"] == latency)
        ]
    theirs = published[published["scenario"] == scenario]
    table = compare_published(summary, theirs, ["implementation", "concurrency"], "rps")
    table["label"] = table["implementation"] + " c" + table["concurrency"].astype(int).astype(str)
    return table.sort_values(["concurrency", "implementation"]).reset_index(drop=True)


def rates_figure(part: pd.DataFrame, title: str, colors: dict[str, str]) -> Figure:
    """req/s vs concurrency, one panel per scenario side by side (one shape and latency
    profile), a line per server with its interval; a log axis where rates span decades."""
    import matplotlib.pyplot as plt

    from perflab.analysis.plots import spans_decades

    scenarios = [s for s in SCENARIOS if s in set(part["scenario"])]
    fig, axes = plt.subplots(1, len(scenarios), figsize=(4.2 * len(scenarios), 3.6), sharey=True)
    axes = [axes] if len(scenarios) == 1 else list(axes)
    logy = spans_decades(part["median"])
    for ax, scenario in zip(axes, scenarios, strict=True):
        for name, rows in part[part["scenario"] == scenario].groupby("implementation"):
            rows = rows.sort_values("concurrency")
            err = [
                (rows["median"] - rows["ci_low"]).fillna(0),
                (rows["ci_high"] - rows["median"]).fillna(0),
            ]
            ax.errorbar(
                rows["concurrency"],
                rows["median"],
                yerr=err,
                marker="o",
                capsize=3,
                label=str(name),
                color=colors.get(str(name)),
            )
        ax.set_xscale("log")
        ax.set_xticks(sorted(part["concurrency"].unique()))
        ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
        ax.get_xaxis().set_minor_formatter(plt.matplotlib.ticker.NullFormatter())
        ax.set_title(SCENARIOS[scenario], fontsize=9)
        ax.set_xlabel("concurrency")
        ax.grid(True, alpha=0.3)
        if logy:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
    axes[0].set_ylabel("successful calls per second" + (" (log scale)" if logy else ""))
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# A median over this many calls is an estimate; over fewer, one or two calls decide it.
MEDIAN_CALLS = 10
# The configuration of a latency row, as the latency tables show it.
LATENCY_KEYS = ["scenario", "shape", "latency_profile", "implementation", "concurrency"]


def calls_needed(fraction: float) -> int:
    """Successful calls a cell needs for its `fraction` latency percentile to be shown:
    MEDIAN_CALLS for the median (or a lower one); for a tail percentile what
    `stats.samples_needed` asks on every page (p99: 1,000)."""
    from perflab.analysis.stats import samples_needed

    if fraction <= 0.5:
        return MEDIAN_CALLS
    return max(MEDIAN_CALLS, samples_needed(fraction))


def why_left_out(name: str, fraction: float) -> str:
    """Why a cell with fewer than `calls_needed` calls shows no `name` percentile."""
    from perflab.analysis.stats import TAIL_SAMPLES

    need = calls_needed(fraction)
    if fraction <= 0.5:
        return f"a {name} is shown from {need:,} calls; over fewer, one or two calls decide it."
    # Below 1 / (1 - fraction) calls the percentile is the maximum (p99: 100 calls).
    extreme = round(1 / (1 - fraction))
    return (
        f"below {extreme:,} calls a {name} is the slowest call, and this page shows one only "
        f"from {need:,} calls ({TAIL_SAMPLES} of them beyond it)."
    )


def latency_summary(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, str]:
    """`rate_summary` of latency_<name> (p50, p99) over the cells whose successful calls
    support that percentile (`calls_needed`), and a note ('' when every cell is kept)
    saying how many cells are left out and why, which configurations lose the percentile
    altogether, and which keep fewer repeats than they measured (with what their
    intervals then are: `stats.interval_sentence`)."""
    fraction = float(name.removeprefix("p")) / 100
    part = study_frame(frame)
    if part.empty:
        return part, ""
    metric = f"latency_{name}"
    measured = part[part["metric"] == metric]
    ok = part[part["metric"] == "ok"].set_index("cell_id")["value"]
    need = calls_needed(fraction)
    supported = {cell for cell, calls in ok.items() if calls == calls and calls >= need}
    # From the loaded rows, not `part`: rate_summary labels the servers itself (once).
    mine = frame[(frame["study"] == STUDY) & (frame["metric"] == metric)]
    summary = rate_summary(mine[mine["cell_id"].isin(supported)], metric)
    kept = measured[measured["cell_id"].isin(supported)]
    return summary, left_out_note(name, fraction, measured, kept, ok, summary)


def configuration_label(key: tuple[Any, ...]) -> str:
    """'grpcio_sync_w10 list_unary c2 (steady, seed_far_s3)' for a LATENCY_KEYS key."""
    scenario, shape, latency, implementation, concurrency = key
    return f"{implementation} {scenario} c{int(concurrency)} ({shape}, {latency})"


def left_out_note(
    name: str,
    fraction: float,
    measured: pd.DataFrame,
    kept: pd.DataFrame,
    ok: pd.Series,
    summary: pd.DataFrame,
) -> str:
    """`latency_summary`'s note on the cells `measured` has and `kept` does not."""
    from perflab.analysis.stats import interval_sentence

    dropped = set(measured["cell_id"]) - set(kept["cell_id"])
    if not dropped:
        return ""
    calls = ok.reindex(sorted(dropped)).dropna()
    most = f", which made at most {int(calls.max()):,} successful calls" if len(calls) else ""
    sentences = [
        f"{name} is left out of {len(dropped)} of {measured['cell_id'].nunique()} cells"
        f"{most}: {why_left_out(name, fraction)}"
    ]
    had = measured.groupby(LATENCY_KEYS)["cell_id"].nunique()
    has = kept.groupby(LATENCY_KEYS)["cell_id"].nunique().reindex(had.index, fill_value=0)
    gone = [configuration_label(k) for k in had[has == 0].index]
    if len(gone) == len(had):
        sentences.append(f"No configuration has a {name} (all {len(had)} are left out).")
    elif gone:
        sentences.append(
            f"{len(gone)} of {len(had)} configurations have no {name}: " + "; ".join(gone) + "."
        )
    fewer = [
        f"{configuration_label(k)}: {has[k]} of {had[k]}" for k in had.index if 0 < has[k] < had[k]
    ]
    if fewer:
        sentences.append(
            f"{len(fewer)} configurations keep fewer repeats than they measured, so their "
            "intervals are over fewer repeats than the others' ("
            + "; ".join(fewer)
            + "). "
            + interval_sentence(summary)
        )
    return " ".join(sentences)
