"""What a study is, in one record, and how the studies are found.

Each study is a package `perflab/studies/<id>/` whose `__init__.py` exports `STUDY`:

- `matrix.py`: `Matrix`, its matrix's keys declared once (perflab.contract.knobs), and
  `expand(run_id, config, known_impls) -> list[CellSpec]` (host side: standard library only);
- `analysis.py`: what its notebook shows (pandas; imported only by notebooks and tests,
  never by the host side, so `Study` names it rather than importing it). It may define
  `claim_frame(run_dir) -> pandas.DataFrame` for the verdict engine. The calibration
  pseudo-study has none: its `ceiling.py` picks the ghz on the host instead.

Studies import shared modules (`perflab.contract.matrix`, `perflab.analysis.stats`, ...),
never each other.
Adding a study adds a package; nothing here lists them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perflab.contract.cell import CellSpec

STUDIES_DIR = Path(__file__).resolve().parents[1] / "studies"

Expander = Callable[[str, dict[str, Any], set[str]], list["CellSpec"]]


@dataclass(frozen=True)
class Study:
    """One study: its id, how it makes load, what a host must have before its cells run."""

    id: str
    # Its cells' matrix expansion (the package's matrix.expand).
    expand: Expander
    # Its cells load the server with ghz: the run calibrates ghz first (calibrate.yml),
    # and its matrix has the ghz knobs (e.g. `connections`).
    uses_ghz: bool
    # perflab.host.services names its servers call (started and sampled beside each cell).
    services: tuple[str, ...] = ()
    # Roles of setup.yml that build what its cells run (servers, clients, tools).
    builds: tuple[str, ...] = ()
    # A pseudo-study (calibration) has cells but no notebook, reference table or playbook
    # of its own.
    pseudo: bool = False

    @property
    def analysis_module(self) -> str:
        return f"perflab.studies.{self.id}.analysis"

    def analysis(self) -> ModuleType:
        """Its analysis module (imports pandas): for notebooks and tests, not the host side."""
        return importlib.import_module(self.analysis_module)


class UnknownStudy(LookupError):
    """No package perflab/studies/<id>/: the message lists the studies there are."""


def study_ids() -> list[str]:
    """Every study package under perflab/studies/, by folder name, sorted."""
    return sorted(
        path.parent.name
        for path in STUDIES_DIR.glob("*/__init__.py")
        if path.parent.name.isidentifier() and not path.parent.name.startswith("_")
    )


def get_study(study_id: str) -> Study:
    """perflab.studies.<id>.STUDY. Only a missing package is "no such study": an import
    error inside an existing study is a bug in it and propagates as it is."""
    name = f"perflab.studies.{study_id}"
    if not study_id.isidentifier() or importlib.util.find_spec(name) is None:
        raise UnknownStudy(f"no study {study_id!r}; known: {', '.join(study_ids())}")
    module = importlib.import_module(name)
    study = getattr(module, "STUDY", None)
    if not isinstance(study, Study) or study.id != study_id:
        raise TypeError(
            f"{name}.STUDY: expected a perflab.contract.study.Study with id {study_id!r}"
        )
    return study
