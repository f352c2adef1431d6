"""What a run id may be: one safe folder name under data/ and reports/.

A run id becomes a path (data/<run_id>/, reports/<run_id>/, the hosts' runs folders), so it
is one path component of plain characters: no '/', no '..', no leading '.' (hidden, or the
parent) or '-' (read as an option by the tools it is passed to). The same pattern is asserted
in playbooks/run_start.yml (tests/test_hostile_input.py keeps the two equal).

Standard library only: make checks a run id (perflab.runargs) with the system Python,
before the venv exists.
"""

from __future__ import annotations

import re

# Run sizes every study's matrix has (smoke: CI, quick: the default, full: the seeds' sizes).
# Standard library only: `make run-args` checks a run against this with the system Python,
# before the venv exists.
RUN_PROFILES = ("smoke", "quick", "full")

RUN_ID_PATTERN = r"^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def validate_run_id(value: str) -> str:
    """The run id itself when it is safe; else ValueError in one line naming it and the rule."""
    if not isinstance(value, str) or not _RUN_ID.fullmatch(value):
        raise ValueError(
            f"run id {value!r} refused: a run id matches {RUN_ID_PATTERN} (letters, digits, "
            "'_', '.', '-'; no '/', no '..', no leading '.' or '-'; at most 128 characters)"
        )
    return value
