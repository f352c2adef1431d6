"""Shared fixtures: where the repo and the host prefix are, and helpers that start real things."""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from perflab.impls import HostPaths
from perflab.runner import free_port

REPO = Path(__file__).resolve().parent.parent
GROUP_VARS = REPO / "inventory" / "group_vars" / "all"


# --- test tiers ----------------------------------------------------------------------------
# `make test-fast` runs `pytest -m "not live"`, so an unmarked test must never start a process
# (a server, a tool, ansible-playbook, papermill's kernel, `python -c`). The hooks below refuse
# every way of starting one while an unmarked test sets up, runs and tears down (its session
# fixtures included), and fail the test naming the rule, even if the code under test caught it.
PROCESS_STARTERS = [
    (subprocess.Popen, "__init__"),
    (os, "fork"),
    (os, "forkpty"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "system"),
    # subprocess and multiprocessing's spawn both end here.
    (_posixsubprocess, "fork_exec"),
]
LIVE_FIXTURES = ("host_paths",)


class ProcessStartRefused(RuntimeError):
    pass


def tier_rule(nodeid: str, what: str) -> str:
    return (
        f"{nodeid} {what} but is not marked `live`: a test that starts a process or needs the "
        "set-up host carries @pytest.mark.live (or a module-level `pytestmark`); unmarked tests "
        "run in `make test-fast` and never start one"
    )


@contextmanager
def processes_refused(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("live") is not None:
        yield
        return
    attempts: list[str] = []

    def refuser(what: str):
        def refuse(*args: object, **kwargs: object) -> None:
            attempts.append(what)
            raise ProcessStartRefused(tier_rule(item.nodeid, f"started a process ({what})"))

        return refuse

    with pytest.MonkeyPatch.context() as patch:
        for owner, name in PROCESS_STARTERS:
            if hasattr(owner, name):
                where = getattr(owner, "__name__", "")
                patch.setattr(owner, name, refuser(f"{where}.{name}"))
        yield
    if attempts:
        pytest.fail(tier_rule(item.nodeid, f"started a process ({attempts[0]})"), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    if item.get_closest_marker("live") is None:
        live = [name for name in LIVE_FIXTURES if name in getattr(item, "fixturenames", ())]
        if live:
            pytest.fail(tier_rule(item.nodeid, f"uses {', '.join(live)}"), pytrace=False)
    with processes_refused(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with processes_refused(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    with processes_refused(item):
        return (yield)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def host_paths() -> HostPaths:
    """The prefix `make setup` installed (PERFLAB_HOME, default ~/.perflab), with this checkout
    as the source tree, so tests exercise the code being committed."""
    home = Path(os.environ.get("PERFLAB_HOME", "~/.perflab")).expanduser()
    if not (home / "venv" / "bin" / "python").is_file():
        missing = f"{home} is not set up: run `make setup` first (make test does)"
        # `make test` sets it: there a missing prefix is an error, never a silent skip.
        if os.environ.get("PERFLAB_REQUIRE_SETUP") == "1":
            pytest.fail(f"{missing}; PERFLAB_REQUIRE_SETUP=1 makes that an error", pytrace=False)
        pytest.skip(missing)
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
