"""A run's adaptive ledger (adaptive.json): the knobs, each study's base rounds and every
look taken. Written by the plan of each look (perflab.analysis.adaptive), read with the run
(perflab.analysis.run)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perflab.analysis.claim_ids import current_ids
from perflab.contract.adaptive import Adaptive, Look, looks

LEDGER_FILE = "adaptive.json"


@dataclass
class LookRecord:
    """One look taken: the claims open before it, those that got its rounds and the cells."""

    index: int
    extra_rounds: int
    coverage: float
    open_claims: list[str]
    chosen_claims: list[str]
    cells: list[str]
    estimate_s: float
    note: str


@dataclass
class Ledger:
    adaptive: Adaptive
    base_coverage: float
    base_rounds: dict[str, int]
    taken: list[LookRecord] = field(default_factory=list)

    def looks(self) -> list[Look]:
        """The base look and every look whose rounds ran (a look that planned no cell is none)."""
        schedule = looks(self.adaptive, self.base_coverage)
        return schedule[: 1 + sum(1 for look in self.taken if look.cells)]

    def family_error(self) -> float:
        return self.adaptive.family_error(self.base_coverage)

    def write(self, run_dir: Path) -> None:
        (run_dir / LEDGER_FILE).write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def read(cls, run_dir: Path) -> Ledger | None:
        path = Path(run_dir) / LEDGER_FILE
        if not path.is_file():
            return None
        raw = json.loads(path.read_text())
        return cls(
            Adaptive(**raw["adaptive"]),
            float(raw["base_coverage"]),
            {study: int(n) for study, n in raw["base_rounds"].items()},
            [
                LookRecord(
                    **{
                        **look,
                        # A ledger written before the one id convention names old ids.
                        "open_claims": current_ids(look["open_claims"]),
                        "chosen_claims": current_ids(look["chosen_claims"]),
                    }
                )
                for look in raw["taken"]
            ],
        )
