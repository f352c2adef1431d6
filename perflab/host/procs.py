"""Small process helpers shared by the runner, the agent and perflab.host.services."""

from __future__ import annotations

from pathlib import Path

import psutil


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log, for an error message; empty when it cannot be read."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def process_alive(pid: int) -> bool:
    """A zombie (killed, not yet reaped by its parent) counts as dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
