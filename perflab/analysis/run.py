"""A run read for judging: its claims' rows, each study's derived metrics and the rows that
are only lower bounds. The frame loading the verdict engine (perflab.analysis.verdicts)
judges, kept apart from its decision rules."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from perflab.contract.bounds import FLOORED_METRICS

if TYPE_CHECKING:
    import pandas as pd

    from perflab.analysis.claims import Claim


def mark_lower_bounds(frame: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """The frame with `lower_bound` per row: a FLOORED_METRICS value above BOUND_FRACTION of
    the run's effective ghz ceiling (the calibration, or the fastest cell if one beat it);
    a cell run with another ghz version keeps its recorded status. Without a calibration the
    column is left out and the recorded status decides (`lower_bounds`)."""
    from perflab.analysis.ceilings import ghz_rates, run_ceiling
    from perflab.analysis.frames import read_manifest

    if not (run_dir / "manifest.json").is_file() or frame.empty:
        return frame
    ceiling = run_ceiling(read_manifest(run_dir), frame, run_dir)
    if ceiling is None:
        return frame
    versions = {cell: version for cell, (version, _) in ghz_rates(frame, run_dir).items()}
    same = (frame["study"].astype(str) + "/" + frame["cell_id"].astype(str)).map(
        lambda cell: versions.get(cell) == ceiling.ghz_version
    )
    above = frame["value"].astype(float) > ceiling.bound_rps
    recorded = frame["status"] == "bound"
    floored = frame["metric"].isin(FLOORED_METRICS)
    return frame.assign(lower_bound=floored & above.where(same, recorded))


def claim_frame(run_dir: Path, studies: set[str]) -> pd.DataFrame:
    """perflab.analysis.frames rows plus each study's derived metrics (its analysis.claim_frame)."""
    import pandas as pd

    from perflab.analysis.frames import read_run

    parts = [read_run(run_dir)]
    for study in sorted(studies):
        try:
            analysis = importlib.import_module(f"perflab.studies.{study}.analysis")
        except ModuleNotFoundError as exc:
            if exc.name not in (f"perflab.studies.{study}", f"perflab.studies.{study}.analysis"):
                raise
            continue
        hook = getattr(analysis, "claim_frame", None)
        if hook is not None:
            parts.append(hook(run_dir))
    kept = [part for part in parts if not part.empty]
    # A run of A/A cells only (left out of read_run) has no row: its columns, empty.
    return pd.concat(kept, ignore_index=True) if kept else parts[0]


def run_topology(run_dir: Path) -> str:
    manifest = Path(run_dir) / "manifest.json"
    if not manifest.is_file():
        return "localhost"
    return str(json.loads(manifest.read_text()).get("topology", "localhost"))


def run_frame(run_dir: str | Path, claims: list[Claim]) -> pd.DataFrame:
    """The rows the claims are judged on: their studies' cells, derived metrics and bounds."""
    run_dir = Path(run_dir)
    return mark_lower_bounds(claim_frame(run_dir, {claim.study for claim in claims}), run_dir)
