"""Shared fixtures: where the repo and the host prefix are, and helpers that start real things."""

from __future__ import annotations

import _posixsubprocess
import importlib.util
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from perflab.contract import group_vars
from perflab.host.impls import HostPaths

REPO = Path(__file__).resolve().parent.parent
GROUP_VARS = REPO / "inventory" / "group_vars" / "all"
# Fixtures that start servers and the agent through perflab.host.launch.
pytest_plugins = ("tests.fixtures_live",)


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
    if nextitem is None or nextitem.path != item.path:
        # Leaving a file (or the session) also tears down its module- and session-scoped
        # fixtures, which live tests set up: stopping those is not this test's doing.
        return (yield)
    with processes_refused(item):
        return (yield)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def localhost_reference():
    """(run id, replication): the committed localhost reference run judged as its index
    judges it. Judged once a session: the README, the index's power column and the run's
    readings file are each checked against the same judgement."""
    from perflab.analysis.drift_history import READINGS_HISTORY
    from perflab.analysis.replication import REFERENCE_RUNS_FILE, replicate
    from perflab.analysis.run import read
    from perflab.cli import claim_frame_hooks

    reference = REPO / "data" / "reference"
    run_id = yaml.safe_load((reference / REFERENCE_RUNS_FILE).read_text())["localhost"]
    run = read(REPO / "data" / run_id, claim_frame_hooks(), READINGS_HISTORY)
    return run_id, replicate(run, reference)


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


def load_script(path: Path, name: str) -> ModuleType:
    """A script that is no package module (a role's filter plugin, a server folder's client,
    an experiment's judge), imported from its path under `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, f"cannot import {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def study_vars(study: str) -> tuple[dict, dict]:
    """perflab_matrix_<study> and perflab_profiles_<study> as Ansible would read them."""
    return group_vars.study_vars(study, GROUP_VARS)


def matrix_only(cells: list) -> list:
    """A study's matrix cells without its A/A cells (params `aa`), which the counts of a
    profile's configurations leave out (tests/test_rounds.py checks them)."""
    return [cell for cell in cells if "aa" not in cell.params]


def resolve_group_vars(value):  # noqa: ANN001, ANN201 - any YAML value
    return group_vars.resolve(value, GROUP_VARS)


# The only intervals a page may call 95%: an error rate's, exact Clopper-Pearson or the
# Chernoff-Hoeffding interval over cells, whose methods guarantee at least that. A percentile
# bootstrap of 3 repeats never does (issue 12). A bound such as "2.95%" is a value, not a label.
OVERCLAIMED_INTERVAL = re.compile(
    r"(?<![\d.])95%(?! exact Clopper-Pearson interval| Chernoff-Hoeffding interval over"
    r"| clustered Clopper-Pearson interval over| paired t interval of)|bootstrap"
)


def overclaimed_intervals(page: str) -> list[str]:
    """Every interval label on a rendered page that claims a coverage its method lacks."""
    return OVERCLAIMED_INTERVAL.findall(page)
