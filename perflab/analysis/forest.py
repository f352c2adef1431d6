"""Forest plots of a pooled claim: a row per run, each configuration's pooled diamond and
its prediction interval for a new machine under them, the claim's threshold as a line."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless rendering: the same PNG on a server as on a laptop
import matplotlib.pyplot as plt  # noqa: E402

from perflab.analysis.pooled import PooledReading  # noqa: E402


def forest_rows(reading: PooledReading) -> list[tuple[str, str, tuple[float, ...]]]:
    """(label, kind, values) top to bottom: kind 'run' (effect, low, high), 'pooled'
    (estimate, low, high), 'prediction' (low, high), on the ratio scale."""
    rows: list[tuple[str, str, tuple[float, ...]]] = []
    for config in reading.configurations:
        where = config.where()
        for site in config.sites:
            for run_id, run in zip(site.run_ids, site.runs, strict=True):
                rows.append(
                    (
                        f"{where} · {run_id} (site {site.site})",
                        "run",
                        (run.effect, run.low, run.high),
                    )
                )
        pooled = config.pooled
        if pooled.k >= 2:
            rows.append(
                (
                    f"{where} · pooled, {pooled.k} sites",
                    "pooled",
                    tuple(math.exp(v) for v in (pooled.estimate, pooled.low, pooled.high)),
                )
            )
            if pooled.prediction is not None:
                rows.append(
                    (
                        f"{where} · new machine (95% prediction)",
                        "prediction",
                        tuple(math.exp(v) for v in pooled.prediction),
                    )
                )
    return rows


def title(reading: PooledReading) -> str:
    """A claim one run measured keeps that run's verdict: it was not pooled, and says so."""
    if reading.runs == 1:
        return f"{reading.claim.id}: one run, its own verdict: {reading.verdict}"
    return f"{reading.claim.id}: pooled {reading.verdict}"


def forest_plot(reading: PooledReading, path: Path) -> Path:
    rows = forest_rows(reading)
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    for y, (_, kind, values) in enumerate(reversed(rows)):
        if kind == "run":
            effect, low, high = values
            ax.plot([low, high], [y, y], color="#57606a")
            ax.plot([effect], [y], "s", color="#0969da")
        elif kind == "pooled":
            effect, low, high = values
            ax.fill([low, effect, high, effect], [y, y + 0.35, y, y - 0.35], color="#cf222e")
        else:
            ax.plot(list(values), [y, y], color="#cf222e", linestyle="--")
    claim = reading.claim
    for edge in claim.bound.edges():
        ax.axvline(edge, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [label for label, _, _ in reversed(rows)], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel(
        f"{claim.metric} ratio (log scale); line: the claim's test ({claim.expectation()})"
    )
    ax.set_title(title(reading), fontsize=10)
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path
