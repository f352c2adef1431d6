"""Shared fixtures: where the repo and the host prefix are, and helpers that start real things."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from perflab.impls import HostPaths
from perflab.runner import free_port

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


@pytest.fixture
def agent_url(host_paths, tmp_path) -> Iterator[str]:
    """A real server agent on loopback (the netns topology runs the same code on its veth)."""
    port = free_port("127.0.0.1")
    log = (tmp_path / "agent.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "perflab",
            "agent",
            "--listen",
            "127.0.0.1",
            "--port",
            str(port),
            "--home",
            str(host_paths.home),
            "--src",
            str(REPO),
        ],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
