"""How long a run will measure, said before it starts: each planned cell as long as the
same configuration took in the committed reference run of the topology (a configuration
the reference lacks: its study's median cell there), plus Ansible's task around each cell,
plus the most the adaptive rounds may take."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from perflab.analysis.adaptive import CELL_OVERHEAD_S, latest_rounds, round_records
from perflab.analysis.run import read
from perflab.contract.adaptive import configuration_of

# A study the reference never ran: a guess of a few seconds a cell, said as such.
UNKNOWN_CELL_S = 5.0


@dataclass(frozen=True)
class Estimate:
    minutes_by_study: dict[str, float]
    adaptive_minutes: float
    reference: str
    guessed_studies: list[str]

    @property
    def minutes(self) -> float:
        return sum(self.minutes_by_study.values()) + self.adaptive_minutes

    def sentence(self) -> str:
        parts = ", ".join(f"{study} {m:.1f}" for study, m in self.minutes_by_study.items())
        guessed = (
            f"; {', '.join(self.guessed_studies)} guessed at {UNKNOWN_CELL_S:.0f} s a cell"
            if self.guessed_studies
            else ""
        )
        return (
            f"expected measuring time about {self.minutes:.0f} min: {parts} min, plus at "
            f"most {self.adaptive_minutes:.0f} min of adaptive rounds (cells as long as in "
            f"reference run {self.reference}{guessed})"
        )


def estimate(
    cells: dict[str, list[dict]], reference_run: Path, adaptive_minutes: float
) -> Estimate:
    """The run's measuring minutes per study, from `cells` (study -> cell specs as dicts)."""
    took = {
        key: latest.seconds
        for key, latest in latest_rounds(round_records(read(reference_run))).items()
    }
    by_study: dict[str, list[float]] = defaultdict(list)
    for (study, _), seconds in took.items():
        by_study[study].append(seconds)
    minutes: dict[str, float] = {}
    guessed = []
    for study, specs in cells.items():
        typical = statistics.median(by_study[study]) if by_study[study] else UNKNOWN_CELL_S
        if not by_study[study]:
            guessed.append(study)
        seconds = sum(
            took.get((study, configuration_of(spec["cell_id"])), typical) + CELL_OVERHEAD_S
            for spec in specs
        )
        minutes[study] = seconds / 60
    return Estimate(minutes, adaptive_minutes, reference_run.name, guessed)


def reference_for(topology: str, reference_dir: Path) -> Path | None:
    """The committed reference run of a topology (reference_runs.yml), if its folder is here."""
    import yaml

    from perflab.analysis.replication import REFERENCE_RUNS_FILE

    path = reference_dir / REFERENCE_RUNS_FILE
    named = (yaml.safe_load(path.read_text()) or {}).get(topology) if path.is_file() else None
    folder = reference_dir.parent / named if named else None
    return folder if folder is not None and folder.is_dir() else None
