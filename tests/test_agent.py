"""The server agent (multi-host topologies): a real agent process starts the C++ hello
server for a runner that then loads it with ghz; the cell folder looks exactly like a
local one. The agent is locked down: a request without this run's token, or one that
names an implementation, option, value or environment the host does not offer, is refused
(401/400) with its reason in the agent's log, changes nothing, and a normal cell still runs
afterwards. On loopback here; the netns topology uses the same code across its veth."""

from __future__ import annotations

import copy
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from perflab.analysis import frames
from perflab.contract.cell import CellSpec
from perflab.contract.matrix import expand
from perflab.host.agent_client import AgentError, call
from perflab.host.impls import discover
from perflab.host.net import free_port, port_open
from perflab.host.runner import CellRunner
from perflab.studies import get_study
from tests.conftest import GROUP_VARS, REPO, study_vars
from tests.fixtures_live import AgentHandle, hello_cell, write_token

pytestmark = pytest.mark.live


def hello_spec(impl: str = "cpp/hello") -> CellSpec:
    return hello_cell(impl, "cpp")


def runner_for(agent: AgentHandle, runs: Path, host_paths) -> CellRunner:
    return CellRunner(
        host_paths,
        runs,
        server_agent=agent.url,
        server_host="127.0.0.1",
        agent_token_file=agent.token_file,
    )


def start_request(**server: object) -> dict:
    """A /start body for the hello cell with the server spec's fields changed."""
    spec = json.loads(hello_spec().to_json())
    spec["server"]["host"] = "127.0.0.1"
    spec["server"].update(copy.deepcopy(server))
    return {"spec": spec, "server_cpus": [], "pin": False}


@pytest.mark.slow
def test_agent_serves_a_cell_whose_folder_matches_a_local_one(agent, host_paths, tmp_path):
    runner = runner_for(agent, tmp_path, host_paths)
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
    metrics = frames.read_run(tmp_path / "t").set_index("metric")["value"]
    assert metrics["ok"] > 50 and metrics["errors"] == 0
    assert metrics["server_cpu_seconds"] > 0
    # The record says where the server really listened (the agent chose the port), and the
    # agent stopped it: nothing is left listening there.
    server = json.loads((cell_dir / "cell.json").read_text())["spec"]["server"]
    assert server["host"] == "127.0.0.1" and server["port"] > 0
    assert argv[argv.index("--port") + 1] == str(server["port"])
    assert not port_open("127.0.0.1", server["port"])


def test_agent_refusal_fails_the_cell_with_its_reason(agent, host_paths, tmp_path):
    runner = runner_for(agent, tmp_path, host_paths)
    record = runner.run(hello_spec(impl="cpp/nonexistent"))
    assert record is not None and record.status == "failed"
    assert "unknown implementation 'cpp/nonexistent'" in record.error


def test_absent_agent_fails_the_cell_naming_it(host_paths, tmp_path):
    url = f"http://127.0.0.1:{free_port('127.0.0.1')}"
    runner = CellRunner(
        host_paths,
        tmp_path,
        server_agent=url,
        server_host="127.0.0.1",
        agent_token_file=write_token(tmp_path / "token"),
    )
    record = runner.run(hello_spec())
    assert record is not None and record.status == "failed"
    assert f"server agent {url} unreachable" in record.error


# Each hostile request: what it changes, the HTTP code and the reason the agent gives.
REFUSALS = {
    "unknown implementation": (
        {"impl": "cpp/nonexistent"},
        "unknown implementation 'cpp/nonexistent' on this host",
    ),
    "undeclared option": ({"impl": "cpp/hello", "options": {"exec": "sh"}}, "undeclared option"),
    "shell metacharacters": (
        {"impl": "python/grpclib", "options": {"loop": "asyncio; touch /tmp/perflab-pwned"}},
        "holds characters not accepted",
    ),
    "path traversal": (
        {"impl": "python/orders_server", "options": {"tls_dir": "/root/../../etc"}},
        "climbs out of a folder",
    ),
    "bare word made a path": (
        {"impl": "floor/iperf3_server", "options": {"iperf3": "/tmp/evil"}},
        "takes a plain word",
    ),
    "wrong option type": (
        {"impl": "python/grpcio_sync", "options": {"workers": "10"}},
        "expected int",
    ),
    "environment injection": (
        {"impl": "cpp/hello", "env": {"LD_PRELOAD": "/tmp/evil.so"}},
        "environment from a request is not accepted (LD_PRELOAD)",
    ),
    "wildcard host": ({"impl": "cpp/hello", "host": "0.0.0.0"}, "listen on 127.0.0.1 only"),
}


@pytest.mark.parametrize("token", [None, "wrong"], ids=["no token", "wrong token"])
def test_a_request_without_the_runs_token_gets_401_and_changes_nothing(agent, token):
    for path, payload in (("/start", start_request()), ("/status", None), ("/stop", {})):
        with pytest.raises(AgentError, match=r"\(401\)"):
            call(agent.url, path, token or "", payload)
    assert call(agent.url, "/status", agent.token) == {"running": False, "exit_code": None}
    reason = "no token" if token is None else "wrong token"
    assert f"refused POST /start from 127.0.0.1 (401): {reason}" in agent.log()
    assert agent.token not in agent.log()


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_hostile_start_is_refused_with_its_reason_logged(agent, case):
    server, reason = REFUSALS[case]
    with pytest.raises(AgentError, match=r"\(400\)") as refused:
        call(agent.url, "/start", agent.token, start_request(**server))
    assert reason in str(refused.value)
    assert call(agent.url, "/status", agent.token) == {"running": False, "exit_code": None}
    assert "refused POST /start from 127.0.0.1 (400)" in agent.log()
    assert reason in agent.log()
    assert not Path("/tmp/perflab-pwned").exists()


def test_a_hostile_run_id_is_refused(agent):
    request = start_request()
    request["spec"]["run_id"] = "../../tmp/evil"
    with pytest.raises(AgentError, match=r"\(400\).*run id '../../tmp/evil' refused"):
        call(agent.url, "/start", agent.token, request)


def test_a_normal_cell_runs_after_every_refusal(agent, host_paths, tmp_path):
    for token in ("", "wrong"):
        with pytest.raises(AgentError):
            call(agent.url, "/start", token, start_request())
    for server, _ in REFUSALS.values():
        with pytest.raises(AgentError):
            call(agent.url, "/start", agent.token, start_request(**server))
    record = runner_for(agent, tmp_path, host_paths).run(hello_spec())
    assert record is not None and record.status == "ok", record.error
    assert (
        agent.token not in (tmp_path / "t" / "hello" / "cpp-steady-c2-r1" / "cell.json").read_text()
    )


def test_agent_refuses_a_wildcard_address_and_a_token_others_can_read(host_paths, tmp_path):
    token = write_token(tmp_path / "token")
    base = [sys.executable, "-m", "perflab", "agent", f"--port={free_port()}"]
    base += [f"--home={host_paths.home}", f"--src={REPO}"]
    wildcard = subprocess.run(
        [*base, "--listen=0.0.0.0", f"--token-file={token}"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert wildcard.returncode != 0 and "--listen '0.0.0.0' refused" in wildcard.stderr
    os.chmod(token, 0o644)
    readable = subprocess.run(
        [*base, "--listen=127.0.0.1", f"--token-file={token}"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert readable.returncode != 0 and "must be 0600" in readable.stderr


@pytest.mark.slow
def test_hello_study_through_ansible_with_remote_servers(tmp_path, host_paths):
    """The multi-host path of the playbooks, on loopback: server_agent.yml starts the agent,
    study_run hands every cell to it, collect.yml stops it."""
    from tests.test_ansible import ansible

    run_id = "agent-smoke"
    result = ansible(
        "-i",
        "inventory/localhost.yml",
        "playbooks/studies.yml",
        "playbooks/collect.yml",
        "-e",
        '{"perflab_studies": ["hello"]}',
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
    matrix, profiles = study_vars("hello")
    planned = expand(
        run_id, get_study("hello"), matrix, profiles, "smoke", set(discover(REPO / "servers"))
    )
    assert sorted(c["cell_id"] for c in cells) == sorted(spec.cell_id for spec in planned)
    for cell in cells:
        assert cell["status"] in ("ok", "bound"), cell["error"]
        assert cell["hosts"]["server"] == "127.0.0.1"  # the agent's address, not local start
        assert cell["spec"]["server"]["port"] > 0  # where it really listened
    assert not (host_paths.home / "agent" / "agent.pid").exists()
    agent_port = yaml.safe_load((GROUP_VARS / "main.yml").read_text())["perflab_agent_port"]
    assert not port_open("127.0.0.1", int(agent_port))


STOP_AGENT = """
- name: Stop the server agent
  hosts: servers
  gather_facts: true
  roles:
    - role: server_agent
      vars:
        server_agent_state: stopped
"""


@pytest.mark.slow
def test_agent_role_gives_each_run_its_own_token_and_reruns_quietly(tmp_path, host_paths):
    """roles/server_agent: the token lands on the host with mode 0600 and the agent accepts
    it; a second play for the same run changes nothing; a new run's token replaces the old
    one (the agent is restarted for it); stopping removes the host's copy."""
    from tests.test_ansible import ansible

    def start(run_id: str):
        return ansible(
            "-i",
            "inventory/localhost.yml",
            "playbooks/run_start.yml",
            "playbooks/server_agent.yml",
            "-e",
            "perflab_remote_servers=true",
            "-e",
            "perflab_profile=smoke",
            "-e",
            f"perflab_run_id={run_id}",
            "-e",
            f"perflab_data_dir={tmp_path}",
            timeout=300,
        )

    port = yaml.safe_load((GROUP_VARS / "main.yml").read_text())["perflab_agent_port"]
    url = f"http://127.0.0.1:{port}"
    token_file = host_paths.home / "agent" / "token"
    stop_playbook = tmp_path / "stop.yml"
    stop_playbook.write_text(STOP_AGENT)
    try:
        first = start("agent-token-1")
        assert first.returncode == 0, first.stdout[-3000:]
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        assert len(token) >= 32 and token not in first.stdout
        assert call(url, "/status", token)["running"] is False
        pid = (host_paths.home / "agent" / "agent.pid").read_text().strip()

        again = start("agent-token-1")
        assert again.returncode == 0, again.stdout[-3000:]
        recap = again.stdout.split("PLAY RECAP", 1)[1]
        assert "changed=0" in recap and "changed=1" not in recap, recap
        assert (host_paths.home / "agent" / "agent.pid").read_text().strip() == pid

        second = start("agent-token-2")
        assert second.returncode == 0, second.stdout[-3000:]
        new_token = token_file.read_text().strip()
        assert new_token != token
        with pytest.raises(AgentError, match=r"\(401\): wrong token"):
            call(url, "/status", token)
        assert call(url, "/status", new_token)["running"] is False
        assert (host_paths.home / "agent" / "agent.pid").read_text().strip() != pid
        assert token not in (host_paths.home / "agent" / "agent.log").read_text()
    finally:
        stopped = ansible("-i", "inventory/localhost.yml", str(stop_playbook), timeout=120)
    assert stopped.returncode == 0, stopped.stdout[-3000:]
    assert not token_file.exists()
    assert not port_open("127.0.0.1", int(port))
