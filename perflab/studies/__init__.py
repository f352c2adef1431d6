"""The studies, one package each (`perflab/studies/<id>/`: its STUDY record, matrix and
analysis), and the one list of them, read everywhere.

    registry() -> {id: Study}   every study package, calibration's pseudo-study among them
    get_study(id) -> Study      one, refused with the known ids when there is no such package
    runnable() -> [id]          the studies a run can name (every non-pseudo one)

This module sits above what it registers: it imports the study packages, the contract
imports none (the CLI hands `Study.expand` to perflab.contract.matrix.expand, and the
verdicts take `Study.claim_frame` from here). Importing a study package loads its matrix
(standard library only), so `perflab.runargs` reads the registry before the venv exists.
Adding a study adds a package; nothing here lists them.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from perflab.contract.study import Study


class UnknownStudy(LookupError):
    """No package perflab/studies/<id>/: the message lists the studies there are."""


def study_ids() -> list[str]:
    """Every study package, by folder name, sorted (this package's search path: a test may
    add a folder to it)."""
    return sorted(
        {
            path.parent.name
            for folder in __path__
            for path in Path(folder).glob("*/__init__.py")
            if path.parent.name.isidentifier() and not path.parent.name.startswith("_")
        }
    )


def get_study(study_id: str) -> Study:
    """perflab.studies.<id>.STUDY. Only a missing package is "no such study": an import
    error inside an existing study is a bug in it and propagates as it is."""
    name = f"{__name__}.{study_id}"
    if not study_id.isidentifier() or importlib.util.find_spec(name) is None:
        raise UnknownStudy(f"no study {study_id!r}; known: {', '.join(study_ids())}")
    study = getattr(importlib.import_module(name), "STUDY", None)
    if not isinstance(study, Study) or study.id != study_id:
        raise TypeError(
            f"{name}.STUDY: expected a perflab.contract.study.Study with id {study_id!r}"
        )
    return study


def registry() -> dict[str, Study]:
    """Every study by id, sorted by id."""
    return {study_id: get_study(study_id) for study_id in study_ids()}


def runnable() -> list[str]:
    """The studies a run can name: every one but the pseudo-studies (calibration), which a
    run does when one of its studies needs it."""
    return [study_id for study_id, study in registry().items() if not study.pseudo]
