"""Latency profiles through Toxiproxy (perflab/host/proxy.py): the delay asked is the delay
applied (sub-millisecond rounded up, and said so); an orders cell with a delayed profile
runs its client through the proxy the runner starts between it and the server (the client
itself knows nothing of it), records what the proxy applied in proxies.json and stops it;
and a missing binary is an error naming it."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import psutil
import pytest

from perflab.contract.cell import CellSpec
from perflab.contract.latency import LATENCY_PROFILES
from perflab.contract.matrix import expand
from perflab.host import net
from perflab.host import proxy as proxy_module
from perflab.host.impls import HostPaths
from perflab.host.launch import LaunchError, start_load_proxy, start_proxies
from perflab.host.proxy import LatencyProxy, ProxyError, applied_delay_ms
from perflab.host.runner import CellRunner
from perflab.host.sampler import ResourceSampler
from perflab.studies import get_study
from tests.conftest import matrix_only, study_vars
from tests.test_orders_live import IMPLS


def test_profiles_are_the_issue_s_one_way_delays():
    assert LATENCY_PROFILES == {
        "none": None,
        "proxy_0ms": 0.0,
        "lan": 0.5,
        "region": 10.0,
        "cross_region": 70.0,
    }
    assert [applied_delay_ms(ms) for ms in (0.0, 0.5, 10.0, 70.0)] == [0, 1, 10, 70]
    with pytest.raises(ProxyError, match="negative"):
        applied_delay_ms(-1)


def test_missing_binary_is_named(tmp_path):
    with pytest.raises(ProxyError, match="no toxiproxy-server"):
        LatencyProxy.start(tmp_path / "toxiproxy-server", "127.0.0.1:1", 0.0)


@pytest.mark.live
def test_a_listen_port_taken_before_toxiproxy_binds_it_is_replaced(host_paths, monkeypatch):
    binary = host_paths.bin / "toxiproxy-server"
    if not binary.is_file():
        pytest.fail("no toxiproxy-server: roles/toxiproxy installs it (make setup)")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        # The API's port, then the busy one (as if taken since free_port saw it), then free.
        ports = iter([net.free_port(), busy])
        monkeypatch.setattr(
            proxy_module, "free_port", lambda host: next(ports, 0) or net.free_port(host)
        )
        proxy = LatencyProxy.start(binary, "127.0.0.1:1", 0.0)
        try:
            assert proxy.listen != f"127.0.0.1:{busy}"
            assert net.port_open(*proxy.listen.split(":"))
        finally:
            proxy.stop()


def orders_cells(profiles: list[str]) -> dict[str, CellSpec]:
    """Repeat 1 of one small unary cell per profile, as the orders matrix writes them."""
    matrix, _ = study_vars("orders")
    matrix.update(
        topology="localhost",
        modes=["unary"],
        security=["plaintext"],
        latency_profiles=profiles,
        clients=[1],
        orders=[30],
        delayed_clients=[1],
        delayed_orders=[30],
        warmup=2,
        repeats=1,
        seed_unary_profiles=[],
        sequential_profiles=[],
    )
    cells = matrix_only(expand("run1", get_study("orders"), matrix, {}, "smoke", set(IMPLS)))
    return {cell.params["latency_profile"]: cell for cell in cells}


def test_a_cell_has_one_load_proxy_at_most(tmp_path):
    cell = orders_cells(["lan"])["lan"]
    cell.latency_proxies.append({"caller": "load", "one_way_ms": 1.0})
    with pytest.raises(LaunchError, match="2 entries for the load"):
        start_load_proxy(tmp_path / "bin", cell, tmp_path, ResourceSampler(tmp_path / "r.csv"))


def test_no_load_proxy_without_a_load_entry(tmp_path):
    cell = orders_cells(["none"])["none"]
    sampler = ResourceSampler(tmp_path / "resources.csv")
    assert start_load_proxy(tmp_path / "toxiproxy-server", cell, tmp_path, sampler) is None


def test_the_server_side_leaves_the_load_s_proxy_to_the_runner(tmp_path):
    # The agent starts a remote server's proxies with start_proxies: the load's is not one,
    # it stays on the load generator's host, between client and server.
    cell = orders_cells(["lan"])["lan"]
    assert start_proxies(tmp_path / "no-binary", cell, tmp_path) == []
    assert not (tmp_path / "proxies.json").exists()


@pytest.mark.live
def test_client_goes_through_the_runner_s_proxy_with_the_profile_s_delay(host_paths, tmp_path):
    if not (host_paths.bin / "toxiproxy-server").is_file():
        pytest.fail("no toxiproxy-server: roles/toxiproxy installs it (make setup)")
    runner = CellRunner(HostPaths(home=host_paths.home, src=host_paths.src), tmp_path / "runs")
    folders: dict[str, Path] = {}
    for profile, cell in orders_cells(["none", "proxy_0ms", "lan"]).items():
        record = runner.run(cell)
        assert record is not None and record.status == "ok", record and record.error
        folders[profile] = runner.cell_dir(cell)
    assert not (folders["none"] / "proxies.json").exists()
    zero = json.loads((folders["proxy_0ms"] / "proxies.json").read_text())["load"]
    lan = json.loads((folders["lan"] / "proxies.json").read_text())["load"]
    assert zero["applied_ms"] == 0 and zero["toxics"] == []
    assert lan["applied_ms"] == 1 and lan["one_way_ms"] == 0.5
    assert {t["stream"] for t in lan["toxics"]} == {"upstream", "downstream"}
    for profile, proxy in (("proxy_0ms", zero), ("lan", lan)):
        folder = folders[profile]
        # The client took its target on stdin and says which it dialled.
        report = json.loads((folder / "client.json").read_text())
        assert report["target"] == proxy["listen"], "client did not call the proxy"
        server = json.loads((folder / "cell.json").read_text())["spec"]["server"]
        assert proxy["upstream"] == f"{server['host']}:{server['port']}"
        assert not psutil.pid_exists(proxy["pid"]), "the runner left its proxy running"
    rtt = {
        m["metric"]: m["value"]
        for m in json.loads((folders["lan"] / "client.json").read_text())["metrics"]
    }
    # 1 ms each way: every round trip takes at least 2 ms.
    assert rtt["orders_ok"] == 30 and rtt["rtt_p50"] >= 2000
