"""A run, read once: its cells, manifest, calibrated ceiling, adaptive ledger and the frames
built from them, and the frame the verdict engine (perflab.analysis.verdicts) judges.

Every analysis of a run starts from one `Run` (`read`): the cell folders are listed and each
cell.json opened once, by `perflab.contract.cell.iter_cells`, and every frame, table and
ceiling below is built from those records. A report builds it once and hands it to every
notebook (perflab.analysis.report).

Nothing here knows a study: a study's derived metrics for its claims reach the judging as
its hooks (`StudyHooks`, study id -> `Hooks`: a function of the run's tidy frame, and one
of its rows of the seeds' tables) that the caller (perflab.cli) passes in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis.frames import cell_metrics, cell_table, read_manifest, tidy_frame
from perflab.analysis.ledger import Ledger
from perflab.contract.bounds import FLOORED_METRICS
from perflab.contract.cell import RunCell, iter_cells

if TYPE_CHECKING:
    import pandas as pd

    from perflab.analysis.claims import Claim
    from perflab.analysis.drift_history import HistoryRun
    from perflab.analysis.published import ReferenceRowsHook
    from perflab.contract.bounds import EffectiveCeiling
    from perflab.contract.parsers import Metric

# A study's derived metrics for the verdict engine, from the run's tidy frame.
ClaimFrameHook = Callable[["pd.DataFrame"], "pd.DataFrame"]


@dataclass(frozen=True)
class Hooks:
    """What a study adds to the judging: metrics derived from the run's frame, and from its
    rows of the seeds' tables (perflab.analysis.published.ReferenceRowsHook)."""

    claim_frame: ClaimFrameHook | None = None
    seed_rows: ReferenceRowsHook | None = None


StudyHooks = Mapping[str, Hooks]


@dataclass
class Run:
    """One run folder, read once. `cells` holds every complete cell, A/A cells included."""

    folder: Path
    cells: tuple[RunCell, ...]
    # manifest.json; None for a run folder without one (a run still measuring).
    manifest: dict[str, Any] | None
    ledger: Ledger | None
    hooks: StudyHooks = field(default_factory=dict)
    # Where the machine's earlier runs' readings are (perflab.analysis.drift_history): their
    # A/A series set this run's margins; None judges the run on its own A/A cells alone.
    history_dir: Path | None = None
    # The topology of a run still measuring (no manifest yet), named by whoever reads it.
    measuring_topology: str | None = None

    @property
    def run_id(self) -> str:
        return self.folder.name

    @property
    def topology(self) -> str:
        return str((self.manifest or {}).get("topology", "localhost"))

    @cached_property
    def drift_history(self) -> list[HistoryRun]:
        """The earlier runs of this run's machine and topology with A/A series; none
        without a history folder or without knowing when and where the run ran."""
        from perflab.analysis.drift_history import read_history

        place = self.history_place()
        if self.history_dir is None or place is None:
            return []
        return read_history(self.history_dir, *place)

    def history_place(self) -> tuple[str, str, str] | None:
        """(machine, topology, start) as drift_history matches runs: from the manifest, or
        while the run still measures (a look plans before any manifest is written) from
        its hosts/*.json, its first cell's start (the manifest's start, when written) and
        the topology its caller names (`measuring_topology`)."""
        import json

        from perflab.analysis.drift_history import machine_of

        if self.manifest is not None:
            manifest = self.manifest
            if not manifest.get("start") or not manifest.get("hosts"):
                return None
            return machine_of(manifest["hosts"]), self.topology, str(manifest["start"])
        hosts = {
            path.stem: json.loads(path.read_text())
            for path in sorted((self.folder / "hosts").glob("*.json"))
        }
        starts = [str(cell.record["start"]) for cell in self.cells if cell.record.get("start")]
        if self.measuring_topology is None or not hosts or not starts:
            return None
        return machine_of(hosts), self.measuring_topology, min(starts)

    @property
    def studies(self) -> frozenset[str]:
        """The studies the run has complete cells of (their folders)."""
        return frozenset(cell.folder.parent.name for cell in self.cells)

    def cells_of(self, study: str | None = None, include_aa: bool = False) -> list[RunCell]:
        """The run's cells (of one study when named); A/A cells only with `include_aa`."""
        return [
            cell
            for cell in self.cells
            if (study is None or cell.record["study"] == study) and (include_aa or not cell.is_aa)
        ]

    @cached_property
    def metrics(self) -> dict[Path, list[Metric]]:
        """Each cell folder's metrics, its raw files parsed once for both frames below
        (parsing is most of reading a run: ghz's JSON above all)."""
        return {cell.folder: cell_metrics(cell.folder, cell.record) for cell in self.cells}

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The tidy rows (perflab.analysis.frames), A/A cells left out."""
        return tidy_frame(self.cells_of(), self.run_id, self.metrics)

    @cached_property
    def frame_with_aa(self) -> pd.DataFrame:
        return tidy_frame(self.cells_of(include_aa=True), self.run_id, self.metrics)

    @cached_property
    def cell_table(self) -> pd.DataFrame:
        """One row per cell (A/A cells left out): status, error, notes, pinning, times."""
        return cell_table(self.cells_of())

    @cached_property
    def aa_cell_table(self) -> pd.DataFrame:
        """`cell_table` of the A/A cells alone."""
        return cell_table([cell for cell in self.cells if cell.is_aa])

    @cached_property
    def ceiling(self) -> EffectiveCeiling | None:
        """The run's effective ghz ceiling; None without a calibration."""
        from perflab.analysis.ceilings import run_ceiling

        return run_ceiling(self.manifest or {}, self.frame, self.cells_of())

    @property
    def seed_rows_hooks(self) -> dict[str, ReferenceRowsHook]:
        """Each study's hook on its rows of the seeds' tables, where it has one."""
        return {
            study: hooks.seed_rows
            for study, hooks in self.hooks.items()
            if hooks.seed_rows is not None
        }

    def claim_frame(self, studies: set[str]) -> pd.DataFrame:
        """The tidy rows plus the derived metrics of the named studies' hooks."""
        import pandas as pd

        found = [self.hooks[study].claim_frame for study in sorted(studies) if study in self.hooks]
        parts = [self.frame] + [hook(self.frame) for hook in found if hook is not None]
        kept = [part for part in parts if not part.empty]
        # A run of A/A cells only (left out of the frame) has no row: its columns, empty.
        return pd.concat(kept, ignore_index=True) if kept else parts[0]

    def judged_frame(self, claims: list[Claim]) -> pd.DataFrame:
        """The rows the claims are judged on: their studies' cells, derived metrics, bounds."""
        return mark_lower_bounds(self.claim_frame({claim.study for claim in claims}), self)


def read(
    folder: str | Path, hooks: StudyHooks | None = None, history_dir: Path | None = None
) -> Run:
    """The run in `folder`, every cell.json opened once; `hooks` as the module says;
    `history_dir` as Run's field."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such run folder")
    manifest = read_manifest(folder) if (folder / "manifest.json").is_file() else None
    cells = tuple(iter_cells(folder, include_aa=True))
    return Run(folder, cells, manifest, Ledger.read(folder), dict(hooks or {}), history_dir)


def mark_lower_bounds(frame: pd.DataFrame, run: Run) -> pd.DataFrame:
    """The frame with `lower_bound` per row: a FLOORED_METRICS value above BOUND_FRACTION of
    the run's effective ghz ceiling (the calibration, or the fastest cell if one beat it);
    a cell run with another ghz version keeps its recorded status. Without a calibration the
    column is left out and the recorded status decides (`lower_bounds`)."""
    from perflab.analysis.ceilings import ghz_rates

    if run.manifest is None or frame.empty:
        return frame
    ceiling = run.ceiling
    if ceiling is None:
        return frame
    rates = ghz_rates(run.frame, run.cells_of())
    versions = {cell: version for cell, (version, _) in rates.items()}
    same = (frame["study"].astype(str) + "/" + frame["cell_id"].astype(str)).map(
        lambda cell: versions.get(cell) == ceiling.ghz_version
    )
    above = frame["value"].astype(float) > ceiling.bound_rps
    recorded = frame["status"] == "bound"
    floored = frame["metric"].isin(FLOORED_METRICS)
    return frame.assign(lower_bound=floored & above.where(same, recorded))
