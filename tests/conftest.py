"""Shared fixtures: where the repo and the host prefix are, and helpers that start real things."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from perflab.impls import HostPaths

REPO = Path(__file__).resolve().parent.parent
GROUP_VARS = REPO / "inventory" / "group_vars" / "all"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def host_paths() -> HostPaths:
    """The prefix `make setup` installed (PERFLAB_HOME, default ~/.perflab), with this checkout
    as the source tree, so tests exercise the code being committed."""
    home = Path(os.environ.get("PERFLAB_HOME", "~/.perflab")).expanduser()
    if not (home / "venv" / "bin" / "python").is_file():
        pytest.fail(f"{home} is not set up: run `make setup` first (make test does)")
    return HostPaths(home=home, src=REPO)


def study_vars(study: str) -> tuple[dict, dict]:
    """perflab_matrix_<study> and perflab_profiles_<study> as Ansible would read them."""
    data = yaml.safe_load((GROUP_VARS / f"{study}.yml").read_text())
    return data[f"perflab_matrix_{study}"], data.get(f"perflab_profiles_{study}", {})
