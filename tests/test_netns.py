"""netns topology: netns_up.yml builds two namespaces joined by a veth pair with an sshd
each, Ansible reaches both over ssh through the veths it checked, a route through the
wrong device is refused, and netns_down.yml leaves nothing behind.

Needs root (ip netns) and touches only the 10.77.0.0/30 and 10.77.1.0/29 addresses the
playbook creates; every ssh goes to those addresses, never elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_ansible import ansible

pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]

NAMESPACES = ("perflab-server", "perflab-client")
LINKS = ("pl-mgmt-srv", "pl-mgmt-cli", "pl-data-srv", "pl-data-cli")
HOME = Path(os.environ.get("PERFLAB_HOME", "~/.perflab")).expanduser()


def run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def live_topology_processes() -> list[str]:
    """Processes (not zombies) of this topology: its sshds and the services run inside it,
    whose configs and data live under ~/.perflab/netns/perflab-*."""
    lines = run("ps", "-eo", "stat=,args=").splitlines()
    return [ln for ln in lines if "netns/perflab-" in ln and not ln.startswith("Z")]


def leftovers() -> list[str]:
    found = [ns for ns in NAMESPACES if ns in run("ip", "netns", "list")]
    links = run("ip", "-o", "link", "show")
    found += [link for link in LINKS if f" {link}@" in links or f" {link}:" in links]
    found += live_topology_processes()
    if (HOME / "netns").exists():
        found.append(str(HOME / "netns"))
    return found


@pytest.fixture
def topology():
    """Up before, down after, whatever the test did in between."""
    if leftovers():
        # An interrupted run (or `make run TOPOLOGY=netns` without `make netns-down`)
        # leaves this project's own topology up; taking it down is what a user would do.
        down = ansible("-i", "inventory/netns.yml", "playbooks/netns_down.yml", timeout=120)
        assert down.returncode == 0, down.stdout[-3000:] + down.stderr
        assert leftovers() == [], "netns_down.yml could not clear an earlier topology"
    up = ansible("-i", "inventory/netns.yml", "playbooks/netns_up.yml", timeout=300)
    try:
        yield up
    finally:
        down = ansible("-i", "inventory/netns.yml", "playbooks/netns_down.yml", timeout=120)
        assert down.returncode == 0, down.stdout[-3000:] + down.stderr
        assert leftovers() == [], "netns_down.yml left these behind"


def test_up_reaches_both_hosts_over_ssh_through_checked_veths(topology):
    up = topology
    assert up.returncode == 0, up.stdout[-4000:] + up.stderr
    recap = up.stdout[up.stdout.rindex("PLAY RECAP") :]
    for host in NAMESPACES:
        assert f"{host}" in recap and "unreachable=0" in recap and "failed=0" in recap
    # The routes the playbook asserted, asked again here: each goes through its own veth.
    assert "dev pl-mgmt-srv" in run("ip", "-o", "route", "get", "10.77.1.2")
    assert_data_route()
    # ssh with the generated key and strict host key checking lands in the right namespace.
    key, known = HOME / "netns" / "id_ed25519", HOME / "netns" / "known_hosts"
    for address, name in (("10.77.1.2", "perflab-server"), ("10.77.1.6", "perflab-client")):
        out = run(
            "ssh",
            "-p",
            "2222",
            "-i",
            str(key),
            "-o",
            f"UserKnownHostsFile={known}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
            f"root@{address}",
            "ip",
            "netns",
            "identify",
        )
        assert out.strip() == name
    # gRPC across the data veth: the orders server in one namespace, its client in the other.
    assert_orders_cross_the_veth()
    # A second run changes nothing.
    again = ansible("-i", "inventory/netns.yml", "playbooks/netns_up.yml", timeout=300)
    assert (
        again.returncode == 0 and "changed=0" in again.stdout[again.stdout.rindex("PLAY RECAP") :]
    )
    # A route that does not go through the expected veth stops the play before connecting.
    wrong = ansible(
        "-i",
        "inventory/netns.yml",
        "playbooks/netns_up.yml",
        "-e",
        '{"netns_extra_route_checks": [{"address": "10.77.0.1", "dev": "pl-mgmt-srv"}]}',
        timeout=300,
    )
    assert wrong.returncode != 0
    assert "refusing to connect: root namespace routes 10.77.0.1" in wrong.stdout
    assert "Check that Ansible logs in" not in wrong.stdout


def test_orders_aws_io_and_capacity_run_across_the_veth_with_services_beside_the_server(
    topology, tmp_path
):
    """The study playbooks on the netns topology (smoke): every server started by the agent
    in perflab-server, aws_io's S3 and MongoDB running in that namespace too, capacity's
    generator in perflab-client loading it across the data veth, and the adaptive look's
    rounds run there as well."""
    up = topology
    assert up.returncode == 0, up.stdout[-4000:] + up.stderr
    # Before any cell connects: the client namespace reaches the server's data address
    # through the data veth, not any other route.
    assert_data_route()
    run_id = "netns-smoke"
    try:
        result = ansible(
            "-i",
            "inventory/netns.yml",
            # As run_all.yml does: among others, the server certificate gets the data
            # veth's address (a localhost setup on this shared disk leaves it out).
            "playbooks/setup.yml",
            "playbooks/studies.yml",
            # The looks pull the client's cells to the controller to judge them.
            "playbooks/adaptive.yml",
            "playbooks/collect.yml",
            "-e",
            "perflab_profile=smoke",
            "-e",
            f"perflab_run_id={run_id}",
            "-e",
            f"perflab_data_dir={tmp_path}",
            "-e",
            '{"perflab_studies": ["orders", "aws_io", "capacity"]}',
            timeout=1200,
        )
    finally:
        # The client namespace wrote its cells under the shared prefix; collect copied them.
        shutil.rmtree(HOME / "runs" / run_id, ignore_errors=True)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    # The services the agent sampled run in the server's namespace, not the machine's.
    services = HOME / "netns" / "perflab-server" / "services"
    for name in ("s3", "mongo"):
        pid = (services / f"{name}.pid").read_text().strip()
        assert run("ip", "netns", "identify", pid).strip() == "perflab-server"
    import json

    run_dir = tmp_path / run_id
    # The adaptive look judged the cells it pulled from the client namespace (the ledger's
    # base rounds come from them), and any cell it planned ran there too. Smoke's orders and
    # aws_io cells may leave no claim open: then the look plans none and says so.
    ledger = json.loads((run_dir / "adaptive.json").read_text())
    assert {"orders", "aws_io"} <= set(ledger["base_rounds"]), ledger["base_rounds"]
    (look,) = ledger["taken"]
    assert look["note"] == "no claim is open" or look["chosen_claims"], look
    assert all((run_dir / name / "cell.json").is_file() for name in look["cells"])
    for study in ("orders", "aws_io", "capacity"):
        cells = [json.loads(p.read_text()) for p in (run_dir / study).glob("*/cell.json")]
        assert cells, f"no {study} cell in {run_dir}"
        for cell in cells:
            assert cell["status"] in ("ok", "bound"), cell["error"]
            assert cell["hosts"]["server"] == "10.77.0.1"  # across the data veth
            # The record says where the server really listened, not the spec's defaults.
            assert cell["spec"]["server"]["host"] == "10.77.0.1"
            assert cell["spec"]["server"]["port"] > 0
    # The run's agent token (made on the controller) is nowhere in the run's record.
    token = (Path.home() / ".perflab" / "agent-tokens" / run_id).read_bytes().strip()
    assert len(token) >= 32
    leaked = [p for p in run_dir.rglob("*") if p.is_file() and token in p.read_bytes()]
    assert not leaked, leaked
    resources = (next((run_dir / "aws_io").glob("*list_save*")) / "resources.csv").read_text()
    assert "dependency_s3" in resources and "dependency_mongo" in resources
    assert_capacity_loaded_the_server_across_the_veth(run_dir)


def assert_data_route() -> None:
    """The client namespace's route to the server's data address goes through our veth."""
    assert "dev pl-data-cli" in run(
        "ip", "-netns", "perflab-client", "-o", "route", "get", "10.77.0.1"
    )


def assert_capacity_loaded_the_server_across_the_veth(run_dir: Path) -> None:
    """Every capacity search's generator dialled the server's data address, and its steps
    read with the server's CPU, sampled by the agent in the server namespace."""
    import json

    from perflab.analysis.run import read
    from perflab.studies.capacity import analysis as capacity

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["topology"] == "netns" and "capacity" in manifest["studies"]
    folders = sorted((run_dir / "capacity").glob("*/cell.json"))
    assert folders, f"no capacity cell in {run_dir}"
    for cell in folders:
        argv = json.loads((cell.parent / "client.argv.json").read_text())
        target = argv[argv.index("--target") + 1]
        assert target.startswith("10.77.0.1:"), argv
        report = json.loads((cell.parent / "client.json").read_text())
        assert report["config"]["target"] == target
    found = capacity.searches(read(run_dir))
    steps = capacity.all_steps(found)
    assert {s.implementation for s in found} and not steps.empty
    # Server CPU per step comes from the agent's samples, moved onto the client's clock.
    assert (steps["server_cores"] > 0).all(), steps[["implementation", "server_cores"]]


def assert_orders_cross_the_veth() -> None:
    from perflab.host.impls import HostPaths, command_argv, discover
    from perflab.host.launch import launch_server, server_env

    paths = HostPaths(home=HOME, src=REPO)
    impls = discover(REPO / "servers")
    server = launch_server(
        impls["python/orders_server"],
        paths,
        HOME / "netns" / "orders-server.log",
        options={"workers": 4},
        host="10.77.0.1",
        port=50051,
        prefix=["ip", "netns", "exec", "perflab-server"],
        ready_timeout_s=30,
    )
    try:
        out = HOME / "netns" / "client.json"
        client = command_argv(
            impls["python/orders_client"],
            paths,
            {"mode": "unary", "clients": 2, "orders": 20, "warmup": 2},
            target="10.77.0.1:50051",
            out=str(out),
        )
        done = subprocess.run(
            ["ip", "netns", "exec", "perflab-client", *client],
            env=server_env(paths),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        import json

        metrics = {m["metric"]: m["value"] for m in json.loads(out.read_text())["metrics"]}
        assert metrics["orders_ok"] == 20 and metrics["stamp_violations"] == 0
    finally:
        note = server.stop()
    assert note == "" and server.exit_code() == 0


def test_inventory_names_only_the_addresses_the_playbook_creates():
    import yaml

    inventory = yaml.safe_load((REPO / "inventory" / "netns.yml").read_text())
    defaults = yaml.safe_load((REPO / "roles" / "netns" / "defaults" / "main.yml").read_text())
    hosts = {
        **inventory["all"]["children"]["servers"]["hosts"],
        **inventory["all"]["children"]["clients"]["hosts"],
    }
    mgmt = {m["ns"]: m["address"] for m in defaults["netns_mgmt"]}
    data = {d["ns"]: d["address"] for d in defaults["netns_data"]}
    for name, host in hosts.items():
        assert host["ansible_host"] == mgmt[name]
        assert host["perflab_data_address"] == data[name]
    assert inventory["all"]["vars"]["ansible_port"] == defaults["netns_ssh_port"] != 22
