"""Every playbook parses, and the matrix is refused before anything runs when it is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# Every test here runs ansible-playbook.
pytestmark = pytest.mark.live

ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
PLAYBOOKS = sorted((REPO / "playbooks").glob("*.yml"))
INVENTORIES = sorted((REPO / "inventory").glob("*.yml"))


def ansible(*args: str, timeout: int = 120, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """ansible-playbook in a checkout (this one, or a copy a test made), with its config."""
    env = {**os.environ, "ANSIBLE_CONFIG": str(cwd / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    # The same host prefix the rest of the suite uses (make passes it through).
    home = (
        ["-e", f"perflab_home={os.environ['PERFLAB_HOME']}"]
        if os.environ.get("PERFLAB_HOME")
        else []
    )
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), *home, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("playbook", PLAYBOOKS, ids=lambda p: p.name)
def test_playbook_syntax(playbook):
    done = ansible("--syntax-check", "-i", "inventory/localhost.yml", str(playbook))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("perflab_profile=fastest", "profile 'fastest' and studies"),
        (
            '{"perflab_matrix_hello": {"implementations": {"x": {"impl": "rust/nope"}}, '
            '"scenarios": ["steady"], "concurrency": [1], "repeats": 1, "seed_total": 1, '
            '"steady_duration_s": 1, "warmup_s": 1}}',
            "perflab_matrix_hello.implementations.x.impl: unknown server 'rust/nope'",
        ),
        (
            '{"perflab_profiles_hello": {"quick": {"concurrency": [0]}}}',
            "perflab_matrix_hello.concurrency: 0 is not a positive integer",
        ),
    ],
)
def test_bad_matrix_is_refused_before_anything_runs(extra, message, tmp_path):
    done = ansible(
        "-i",
        "inventory/localhost.yml",
        "playbooks/run_all.yml",
        "-e",
        extra,
        "-e",
        f"perflab_data_dir={tmp_path}",
    )
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    # Refused in the first play: no host was set up, no cell folder was written.
    assert "Set up every benchmark host" not in done.stdout
    assert list(tmp_path.iterdir()) == []
