"""The server agent (multi-host topologies): a real agent process starts the C++ hello
server for a runner that then loads it with ghz; the cell folder looks exactly like a
local one. Refusals and an absent agent fail the cell with the reason. On loopback
here; the netns topology uses the same code across its veth."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

import perflab
from perflab.cell import CellSpec, LoadSpec, ServerSpec
from perflab.runner import CellRunner, free_port, port_open
from tests.conftest import GROUP_VARS, study_vars

# Every test here starts the agent or a server, or needs the set-up host.
pytestmark = pytest.mark.live

GHZ_VERSION = study_vars("calibration")[0]["ghz_versions"][0]


def hello_spec(impl: str = "cpp/hello") -> CellSpec:
    return CellSpec(
        run_id="t",
        study="hello",
        cell_id="cpp-steady-c2-r1",
        scenario="steady",
        implementation="cpp",
        client="ghz",
        params={"concurrency": 2},
        repeat=1,
        server=ServerSpec(impl=impl),
        load=LoadSpec(
            kind="ghz",
            proto="hello.proto",
            call="helloworld.Greeter.SayHello",
            data={"name": "perflab"},
            concurrency=2,
            duration_s=1,
            warmup_s=0.5,
            ghz_version=GHZ_VERSION,
        ),
    )


@pytest.mark.slow
def test_agent_serves_a_cell_whose_folder_matches_a_local_one(agent_url, host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path, server_agent=agent_url, server_host="127.0.0.1")
    record = runner.run(hello_spec())
    assert record is not None and record.status == "ok", record.error
    cell_dir = tmp_path / "t" / "hello" / "cpp-steady-c2-r1"
    assert "READY" in (cell_dir / "server.log").read_text()
    argv = json.loads((cell_dir / "server.argv.json").read_text())
    assert Path(argv[0]).name == "hello_server_cpp"  # what the agent's host ran
    with (cell_dir / "resources.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    server_phases = {row["phase"] for row in rows if row["role"] == "server"}
    # The agent's samples landed on the runner's timeline, labelled with its phases.
    assert "measure" in server_phases
    metrics = perflab.load(tmp_path / "t").set_index("metric")["value"]
    assert metrics["ok"] > 50 and metrics["errors"] == 0
    assert metrics["server_cpu_seconds"] > 0
    # The agent stopped the server: nothing is left listening on the cell's port.
    port = json.loads((cell_dir / "cell.json").read_text())["spec"]["server"]["port"]
    assert not port_open("127.0.0.1", port)


def test_agent_refusal_fails_the_cell_with_its_reason(agent_url, host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path, server_agent=agent_url, server_host="127.0.0.1")
    record = runner.run(hello_spec(impl="cpp/nonexistent"))
    assert record is not None and record.status == "failed"
    assert "unknown implementation 'cpp/nonexistent'" in record.error


def test_absent_agent_fails_the_cell_naming_it(host_paths, tmp_path):
    url = f"http://127.0.0.1:{free_port('127.0.0.1')}"
    runner = CellRunner(host_paths, tmp_path, server_agent=url, server_host="127.0.0.1")
    record = runner.run(hello_spec())
    assert record is not None and record.status == "failed"
    assert f"server agent {url} unreachable" in record.error


@pytest.mark.slow
def test_hello_study_through_ansible_with_remote_servers(tmp_path, host_paths):
    """The multi-host path of the playbooks, on loopback: server_agent.yml starts the agent,
    study_run hands every cell to it, collect.yml stops it."""
    from tests.test_ansible import ansible

    run_id = "agent-smoke"
    result = ansible(
        "-i",
        "inventory/localhost.yml",
        "playbooks/hello.yml",
        "playbooks/collect.yml",
        "-e",
        "perflab_profile=smoke",
        "-e",
        "perflab_remote_servers=true",
        "-e",
        f"perflab_run_id={run_id}",
        "-e",
        f"perflab_data_dir={tmp_path}",
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    cells = [json.loads(p.read_text()) for p in (tmp_path / run_id / "hello").glob("*/cell.json")]
    assert len(cells) == len(study_vars("hello")[0]["implementations"])
    for cell in cells:
        assert cell["status"] in ("ok", "bound"), cell["error"]
        assert cell["hosts"]["server"] == "127.0.0.1"  # the agent's address, not local start
    assert not (host_paths.home / "agent" / "agent.pid").exists()
    agent_port = yaml.safe_load((GROUP_VARS / "main.yml").read_text())["perflab_agent_port"]
    assert not port_open("127.0.0.1", int(agent_port))
