"""Figures the notebooks show and save (PNG beside the HTML report)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # headless rendering: the same PNG on a server as on a laptop
import matplotlib.pyplot as plt  # noqa: E402

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def save(fig: Figure, out_dir: str | Path, name: str) -> Path:
    folder = Path(out_dir) / "figures"
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


def lines_with_intervals(
    summary: pd.DataFrame,
    x: str,
    series: str,
    title: str,
    ylabel: str,
    logx: bool = False,
    colors: dict[str, str] | None = None,
) -> Figure:
    """One line per `series` value over `x`, with the 95% interval as error bars.

    `colors` (from `palette`) keeps a series the same colour across figures of a report.
    """
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, group in summary.groupby(series, sort=True):
        group = group.sort_values(x)
        err = [group["median"] - group["ci_low"], group["ci_high"] - group["median"]]
        color = (colors or {}).get(str(name))
        ax.errorbar(
            group[x], group["median"], yerr=err, marker="o", capsize=3, label=str(name), color=color
        )
    if logx:
        ax.set_xscale("log")
    ax.set_ylim(bottom=0)  # rates compared by eye need their zero
    ax.set_xticks(sorted(summary[x].unique()))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def published_vs_measured(table: pd.DataFrame, label: str, title: str, ylabel: str) -> Figure:
    """Paired bars: published (hatched) and measured (with interval) per label."""
    import numpy as np

    table = table.dropna(subset=["published", "measured"], how="all").reset_index(drop=True)
    xs = np.arange(len(table))
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(table) + 2), 4.5))
    ax.bar(xs - 0.2, table["published"], width=0.4, label="published", hatch="//", alpha=0.6)
    err = [table["measured"] - table["ci_low"], table["ci_high"] - table["measured"]]
    ax.bar(xs + 0.2, table["measured"], width=0.4, yerr=err, capsize=2, label="measured here")
    ax.set_xticks(xs)
    ax.set_xticklabels(table[label], rotation=45, ha="right", fontsize=8)
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
