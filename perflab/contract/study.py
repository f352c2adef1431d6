"""What a study is, in one record: the package `perflab/studies/<id>/` exports it as `STUDY`.

- `matrix.py`: `Matrix`, its matrix's keys declared once (perflab.contract.knobs), and
  `expand(run_id, config, known_impls) -> list[CellSpec]` (host side: standard library only);
- `analysis.py`: what its notebook shows (pandas; imported only by notebooks and tests).

The record is what the playbooks are driven from (playbooks/study_records.yml reads it
through `python -m perflab.runargs known`): which roles build what its cells run, whether
the run calibrates ghz first, what checks its servers' services before any cell. The list
of the studies is `perflab.studies.registry()`, above the packages it registers; nothing in
the contract imports a study.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perflab.contract.cell import CellSpec

Expander = Callable[[str, dict[str, Any], set[str]], list["CellSpec"]]
# run_dir -> the study's derived rows for the verdicts (a pandas DataFrame; controller only).
ClaimFrame = Callable[[Path], Any]
# The study's rows of the seeds' tables -> them with its own columns and derived rows
# (perflab.analysis.published.ReferenceRowsHook; pandas DataFrames, controller only).
SeedRows = Callable[[Any], Any]


@dataclass(frozen=True)
class Study:
    """One study: its id, how it makes load, what a host must have before its cells run."""

    id: str
    # Its cells' matrix expansion (the package's matrix.expand).
    expand: Expander
    # Its cells load the server with ghz: the run calibrates ghz first (the calibration
    # pseudo-study's cells, then `perflab calibrate`), and its matrix has the ghz knobs.
    uses_ghz: bool
    # Roles playbooks/setup.yml runs on every host for it (servers, clients, tools), in order.
    builds: tuple[str, ...] = ()
    # Roles setup.yml runs on the servers hosts only: what builds and starts the services
    # its servers call (its cells' `dependencies`, perflab.host.services names).
    server_builds: tuple[str, ...] = ()
    # A module its servers hosts run before any cell of the run, as
    # `python -m <module> <args...> --home=<host prefix>` with its matrix (perflab_matrix_<id>)
    # as JSON on stdin: a non-zero exit refuses the run with the module's stderr.
    servers_check: tuple[str, ...] = ()
    # Rows it adds to perflab.analysis.frames' for the verdicts (derived metrics), or None.
    # Called on the controller only: a hook that imports pandas imports it when called.
    claim_frame: ClaimFrame | None = None
    # Its metrics on the run's terms computed from its reference table (the seed's figures
    # for its claims), or None; called on the controller only, like claim_frame.
    seed_rows: SeedRows | None = None
    # Its own run metrics and the seed tables' metric each is on the same terms as, as
    # (run metric, seed metric) pairs: a claim of this study on the run metric may take its
    # published figure from that seed metric (perflab.analysis.published.published_problems).
    seed_metrics: tuple[tuple[str, str], ...] = ()
    # A pseudo-study (calibration) has cells but no notebook, reference table or page.
    pseudo: bool = False

    def playbook_record(self) -> dict[str, Any]:
        """What the playbooks read of it (JSON)."""
        return {
            "uses_ghz": self.uses_ghz,
            "builds": list(self.builds),
            "server_builds": list(self.server_builds),
            "servers_check": list(self.servers_check),
            "pseudo": self.pseudo,
        }
