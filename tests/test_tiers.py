"""The test tiers hold: `make test-fast` runs `-m "not live"`, so tests/conftest.py refuses a
process start in any unmarked test (naming the test and the rule), refuses the set-up host to
it, and a live test that needs the host skips without it, or fails under `make test`
(PERFLAB_REQUIRE_SETUP=1). Each case runs a small test file through pytest in this process
with the repo's conftest as a plugin."""

from __future__ import annotations

import pytest

import tests.conftest as repo_conftest

RULE = "but is not marked `live`"


def run(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nmarkers =\n    live: starts a process\n")
    pytester.makepyfile(test_inner=source)
    return pytester.runpytest("-p", "no:cacheprovider", "-rA", plugins=[repo_conftest])


def test_an_unmarked_test_that_starts_a_process_fails_naming_the_rule(pytester):
    result = run(
        pytester,
        """
import subprocess

def test_spawns():
    subprocess.run(["true"], check=True)
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*test_inner.py::test_spawns started a process (*) {RULE}*"])


@pytest.mark.parametrize(
    "start",
    [
        "os.system('true')",
        "os.posix_spawn('/bin/true', ['true'], {})",
        "multiprocessing.get_context('spawn').Process(target=print).start()",
        "asyncio.run(asyncio.create_subprocess_exec('true'))",
    ],
)
def test_every_way_of_starting_one_is_refused_even_when_the_error_is_caught(pytester, start):
    result = run(
        pytester,
        f"""
import asyncio, multiprocessing, os

def test_hides_it():
    try:
        {start}
    except Exception:
        pass
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*test_hides_it started a process*{RULE}*"])


def test_an_unmarked_test_asking_for_the_set_up_host_is_refused(pytester):
    result = run(pytester, "def test_needs_host(host_paths):\n    pass\n")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_needs_host uses host_paths {RULE}*"])


@pytest.mark.live
def test_a_live_test_may_start_one(pytester):
    result = run(
        pytester,
        """
import subprocess
import pytest

@pytest.mark.live
def test_spawns():
    assert subprocess.run(["true"]).returncode == 0
""",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("required", [False, True])
def test_a_missing_host_prefix_skips_unless_make_test_requires_it(
    pytester, monkeypatch, tmp_path, required
):
    monkeypatch.setenv("PERFLAB_HOME", str(tmp_path / "not-set-up"))
    if required:
        monkeypatch.setenv("PERFLAB_REQUIRE_SETUP", "1")
    else:
        monkeypatch.delenv("PERFLAB_REQUIRE_SETUP", raising=False)
    result = run(
        pytester,
        """
import pytest

@pytest.mark.live
def test_needs_host(host_paths):
    pass
""",
    )
    if required:
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*not-set-up is not set up*PERFLAB_REQUIRE_SETUP=1*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*SKIPPED*not-set-up is not set up: run `make setup`*"])


def test_a_fixture_teardown_of_an_unmarked_test_is_refused_too(pytester):
    result = run(
        pytester,
        """
import subprocess
import pytest

@pytest.fixture
def cleans_up():
    yield
    subprocess.run(["true"])

def test_first(cleans_up):
    pass

def test_second():
    pass
""",
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_first*", f"*{RULE}*"])


@pytest.mark.live
def test_a_live_session_fixture_may_stop_after_the_last_unmarked_test(pytester):
    result = run(
        pytester,
        """
import subprocess
import pytest

@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen(["sleep", "30"])
    yield proc
    proc.terminate()
    subprocess.run(["true"], check=True)  # e.g. a stop command
    proc.wait(5)

@pytest.mark.live
def test_live(server):
    assert server.poll() is None

def test_unit():
    pass
""",
    )
    result.assert_outcomes(passed=2)
