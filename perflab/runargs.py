"""What a run may be asked for, checked before anything is created or installed: the run id
(perflab.contract.runid), the studies, the profile, and for a re-render the run folder. Each refusal
is one line naming the value and what is accepted.

`make run` and `make report` call this with the system Python before the venv exists, so it
needs the standard library only (the study registry, perflab.studies, is standard library
too); playbooks/run_start.yml asks it for the known studies, profiles and study records
(`known`) and asserts on them, so both refuse the same values.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from perflab.contract.runid import RUN_PROFILES, validate_run_id
from perflab.studies import registry, runnable

REPO = Path(__file__).resolve().parents[1]


def known() -> dict[str, Any]:
    """What playbooks/run_start.yml and setup.yml read: the studies a run can name, the
    profiles, and every study's record as the playbooks use it (perflab.studies)."""
    return {
        "studies": runnable(),
        "profiles": list(RUN_PROFILES),
        "records": {study_id: study.playbook_record() for study_id, study in registry().items()},
    }


def check_run_args(run_id: str, profile: str, studies: list[str]) -> None:
    """ValueError, one line, for the first value a run cannot take; an empty run id is fine
    (the run names itself)."""
    if run_id:
        validate_run_id(run_id)
    if profile not in RUN_PROFILES:
        raise ValueError(
            f"profile {profile!r} refused: known profiles are {', '.join(RUN_PROFILES)}"
        )
    names = runnable()
    unknown = [study for study in studies if study not in names]
    if unknown:
        raise ValueError(f"study {unknown[0]!r} refused: known studies are {', '.join(names)}")


def runs_here(data: Path) -> list[str]:
    return sorted(path.parent.name for path in data.glob("*/manifest.json"))


def check_run_dir(value: str) -> Path:
    """The run folder a report is rendered from: an existing, readable folder whose name is
    a run id. ValueError, one line, otherwise."""
    path = Path(value)
    accepted = "give RUN=data/<run_id>, a readable run folder"
    runs = runs_here(REPO / "data")
    if runs:
        accepted += f" (runs here: {', '.join(runs)})"
    try:
        validate_run_id(path.name)
    except ValueError as exc:
        raise ValueError(
            f"run folder {value!r} refused: its name is not a run id; {accepted}"
        ) from exc
    if not path.is_dir():
        raise ValueError(f"run folder {value!r} does not exist; {accepted}")
    if not os.access(path, os.R_OK | os.X_OK):
        raise ValueError(f"run folder {value!r} is not readable; {accepted}")
    return path


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog="python -m perflab.runargs", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    sub.add_parser("known", help="print the known studies, profiles and study records as JSON")
    run = sub.add_parser("run", help="check a run's id, profile and studies")
    run.add_argument("--run-id", default="")
    run.add_argument("--profile", required=True)
    run.add_argument("--studies", default="", help="space-separated study ids")
    run_dir = sub.add_parser("run-dir", help="check a run folder to render")
    run_dir.add_argument("path")
    args = top.parse_args(argv)
    if args.command == "known":
        print(json.dumps(known()))
        return 0
    try:
        if args.command == "run":
            check_run_args(args.run_id, args.profile, args.studies.split())
        else:
            check_run_dir(args.path)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
