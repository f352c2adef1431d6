"""Figures the notebooks show and save (PNG beside the HTML report)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # headless rendering: the same PNG on a server as on a laptop
import matplotlib.pyplot as plt  # noqa: E402

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def save(fig: Figure, out_dir: str | Path, name: str) -> Path:
    from perflab.analysis.report import FIGURES

    folder = Path(out_dir) / FIGURES
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    # No timestamp in the PNG metadata, so re-rendering the same data gives the same file.
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    return path


def palette(names: pd.Series | list[str]) -> dict[str, str]:
    """A fixed colour per name, in sorted order, for figures that show subsets of them."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ordered = sorted({str(n) for n in names})
    return {name: cycle[i % len(cycle)] for i, name in enumerate(ordered)}


# Values whose largest is this many times their smallest get a log axis: on a linear one
# the small values (sub-millisecond latencies beside 60 ms ones) are a flat line at zero.
DECADES = 30.0


def spans_decades(values) -> bool:  # values: any iterable of numbers
    """Whether positive values span enough that a linear axis hides the small ones."""
    positive = [float(v) for v in values if v == v and float(v) > 0]
    return len(positive) >= 2 and max(positive) / min(positive) >= DECADES


def lines_with_intervals(
    summary: pd.DataFrame,
    x: str,
    series: str,
    title: str,
    ylabel: str,
    logx: bool = False,
    colors: dict[str, str] | None = None,
    logy: bool | None = None,
) -> Figure:
    """One line per `series` value over `x`, each point's interval (`ci_low`..`ci_high`,
    what it is: `stats.interval_sentence`) as error bars; none for one repeat.

    `colors` (from `palette`) keeps a series the same colour across figures of a report.
    `logy`: a log y axis; by default when the medians span decades (`spans_decades`).
    """
    logy = spans_decades(summary["median"]) if logy is None else logy
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, group in summary.groupby(series, sort=True):
        group = group.sort_values(x)
        err = [
            (group["median"] - group["ci_low"]).fillna(0),
            (group["ci_high"] - group["median"]).fillna(0),
        ]
        color = (colors or {}).get(str(name))
        ax.errorbar(
            group[x], group["median"], yerr=err, marker="o", capsize=3, label=str(name), color=color
        )
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
        ylabel += " (log scale)"
    else:
        ax.set_ylim(bottom=0)  # rates compared by eye need their zero
    ax.set_xticks(sorted(summary[x].unique()))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def published_vs_measured(table: pd.DataFrame, label: str, title: str, ylabel: str) -> Figure:
    """Paired bars: published (hatched) and measured (with its interval) per label; a log
    axis when the bars span decades (a seed's 20 GB beside tens of MiB)."""
    import numpy as np

    table = table.dropna(subset=["published", "measured"], how="all").reset_index(drop=True)
    logy = spans_decades([*table["published"], *table["measured"]])
    xs = np.arange(len(table))
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(table) + 2), 4.5))
    ax.bar(xs - 0.2, table["published"], width=0.4, label="published", hatch="//", alpha=0.6)
    err = [
        (table["measured"] - table["ci_low"]).fillna(0),
        (table["ci_high"] - table["measured"]).fillna(0),
    ]
    ax.bar(xs + 0.2, table["measured"], width=0.4, yerr=err, capsize=2, label="measured here")
    ax.set_xticks(xs)
    ax.set_xticklabels(table[label], rotation=45, ha="right", fontsize=8)
    if logy:
        ax.set_yscale("log")
        ylabel += " (log scale)"
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def show(fig: Figure, out_dir: str | Path, name: str):  # -> IPython.display.Image
    """Saves the figure beside the report and returns it as an image the notebook displays
    (the Agg backend draws nothing inline by itself)."""
    from IPython.display import Image

    path = save(fig, out_dir, name)
    plt.close(fig)
    return Image(filename=str(path))


def forest(rows: list[dict], title: str) -> Figure:
    """A forest plot of claims: per row its effect (dot) and interval (bar) in its verdict's
    colour, its threshold (black tick; both band edges for a 'within' claim) and the
    published figure (hollow diamond), one line per claim.

    One panel per seed, each on its own log axis (0.5x and 2x lie equally far from 1): one
    seed's ratios of context switches reach 10^-4 while the others' sit within 0.2-10x, and
    on a shared axis those squeeze into a third of its width. Error rates, which may be 0%,
    get a linear panel of their own at the end. `rows`: replication.forest_rows.
    """
    panels = forest_panels(rows)
    if not panels:
        fig, ax = plt.subplots(figsize=(8, 1.5))
        ax.set_axis_off()
        ax.set_title(f"{title}: no claim was measured")
        return fig
    # A panel's rows plus room for its heading, its two rows of tick labels and its label.
    heights = [len(part) + 4 for _, _, part in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(10, 0.28 * sum(heights) + 1.5),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, (name, kind, part) in zip(axes[:, 0], panels, strict=True):
        forest_panel(ax, part, log=kind == "ratio")
        ax.set_title(name, fontsize=9, loc="left")
    # Placed in inches from the top: a fraction of a 60-inch figure lands inside a panel.
    fig.suptitle(title, y=1 - 0.12 / fig.get_figheight(), va="top")
    from matplotlib.lines import Line2D

    shown = {str(row["verdict"]): str(row["colour"]) for row in rows}
    handles = [Line2D([], [], color=colour, marker="o", lw=2) for colour in shown.values()]
    fig.legend(handles, list(shown), fontsize=7, loc="lower center", ncol=len(shown))
    # The title and the legend keep their inches however tall the figure grows.
    height = fig.get_figheight()
    fig.tight_layout(rect=(0, 0.35 / height, 1, 1 - 0.5 / height))
    return fig


def forest_panels(rows: list[dict]) -> list[tuple[str, str, list[dict]]]:
    """The forest's panels in order: (heading, "ratio" or "rate", rows), a ratio panel per
    seed and one panel for every error rate."""
    seeds = sorted({str(row["seed"]) for row in rows if not row["rate"]})
    panels = [
        (f"seed {seed}", "ratio", [row for row in rows if not row["rate"] and row["seed"] == seed])
        for seed in seeds
    ]
    rates = [row for row in rows if row["rate"]]
    if rates:
        panels.append(("error rates", "rate", rates))
    return panels


def forest_panel(ax, rows: list[dict], log: bool) -> None:  # ax: matplotlib Axes
    """One panel of `forest`: rows top to bottom, a rule between seeds (a panel of one seed
    names it in its heading, not on every row)."""
    ordered = sorted(rows, key=lambda row: str(row["seed"]))
    one_seed = len({row["seed"] for row in ordered}) == 1
    ys = list(range(len(ordered), 0, -1))
    scale = 1.0 if log else 100.0  # rates read as percent
    for y, row in zip(ys, ordered, strict=True):
        if row["low"] is not None:
            ax.plot([row["low"] * scale, row["high"] * scale], [y, y], color=row["colour"], lw=2)
        if row["effect"] == row["effect"]:
            ax.plot(row["effect"] * scale, y, "o", color=row["colour"], ms=5)
        for threshold in row["thresholds"]:
            ax.plot(threshold * scale, y, "|", color="black", ms=12, mew=1.5)
        if row["published"] is not None and (not log or row["published"] > 0):
            ax.plot(row["published"] * scale, y, "D", mfc="none", mec="#57606a", ms=6)
    for y, (above, below) in zip(ys[1:], zip(ordered, ordered[1:], strict=False), strict=False):
        if above["seed"] != below["seed"]:
            ax.axhline(y + 0.5, color="#d0d7de", lw=1)
    ax.set_yticks(ys)
    ax.set_yticklabels(
        [row["label"] if one_seed else f"{row['seed']}  {row['label']}" for row in ordered],
        fontsize=7,
    )
    ax.set_ylim(0.3, len(ordered) + 0.7)
    if log:
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        ax.set_xlabel("measured factor with its interval (log scale); | threshold, ◇ published")
    else:
        ax.set_xlabel("error rate, % (per cell, with its interval); | threshold, ◇ published")
    ax.grid(True, axis="x", alpha=0.3)
    # A panel of a hundred claims is taller than a screen: its scale is read at the top too.
    ax.tick_params(axis="x", top=True, labeltop=True)


def log_ticks(axis) -> None:  # axis: a matplotlib Axis
    """Labels on a log axis that do not run into each other. Matplotlib's default labels
    minor ticks as "3x10^3", "4x10^3" when an axis spans under two decades, and those wide
    labels collide on a small panel. Here the labelled ticks are 1-2-5 (or 1-9 on an axis
    under a decade, only the decades on one over two), written short ("500", "2k", "0.5"),
    and the other ticks are left unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    decades = math.log10(high / low) if low > 0 else math.inf
    subs = (1.0,) if decades > 2 else (1.0, 2.0, 5.0) if decades > 0.7 else tuple(range(1, 10))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: short_number(v)))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
    axis.set_minor_formatter(NullFormatter())


def short_number(value: float) -> str:
    """A tick label: thousands as "k" ("20k", "2.5k"), the rest as they are ("500", "0.2")."""
    if abs(value) >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"
