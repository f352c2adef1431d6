"""Every hello server, started for real as the runner starts it, answered by a Python
client and by ghz through a real cell, and stopped cleanly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from perflab.analysis import frames
from perflab.host.impls import discover
from perflab.host.launch import server_env, serving
from perflab.host.runner import CellRunner
from tests.conftest import REPO, study_vars
from tests.fixtures_live import hello_cell

# Every test here starts a real server.
pytestmark = pytest.mark.live

HELLO = study_vars("hello")[0]["implementations"]


@pytest.fixture(scope="module")
def impls():
    return discover(REPO / "servers")


@pytest.mark.parametrize("name", sorted(HELLO))
def test_server_answers_a_python_client_and_stops_cleanly(name, impls, host_paths, tmp_path):
    entry = HELLO[name]
    with serving(
        impls[entry["impl"]],
        host_paths,
        tmp_path / "server.log",
        options=entry.get("options"),
        ready_timeout_s=30,
    ) as server:
        reply = subprocess.run(
            [
                str(host_paths.python),
                str(REPO / "tests" / "clients" / "hello_client.py"),
                f"127.0.0.1:{server.port}",
                "perflab",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            env=server_env(host_paths),
            check=True,
        )
        assert reply.stdout.strip() == "Hello perflab"
        note = server.stop()
    assert note == "", note
    assert server.proc.returncode == 0, f"SIGTERM should end it cleanly: {server.proc.returncode}"


@pytest.mark.parametrize("name", sorted(HELLO))
def test_server_serves_a_real_ghz_cell(name, host_paths, tmp_path):
    entry = HELLO[name]
    spec = hello_cell(entry["impl"], name, entry.get("options"))
    record = CellRunner(host_paths, tmp_path).run(spec)
    assert record.status == "ok", record.error
    cell_dir = tmp_path / "t" / "hello" / spec.cell_id
    assert (cell_dir / "ghz.json.gz").is_file()
    metrics = frames.read_run(tmp_path / "t").set_index("metric")["value"]
    assert metrics["ok"] > 50
    assert metrics["errors"] == 0
    assert metrics["server_cpu_seconds"] > 0
    assert metrics["client_max_rss"] > 0
    # What was started is on record: the pinned argv and disjoint CPU sets.
    argv = json.loads((cell_dir / "server.argv.json").read_text())
    assert str(Path(argv[0]).name) in {"python", "hello_server_cpp", "hello_server_go"}
    cell = json.loads((cell_dir / "cell.json").read_text())
    assert not set(cell["pinning"]["server_cpus"]) & set(cell["pinning"]["client_cpus"])
