"""Latency profiles through Toxiproxy (perflab/host/proxy.py): the delay asked is the delay
applied (sub-millisecond rounded up, and said so), the orders client goes through the
proxy it starts and stops it, and a missing binary is an error naming it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psutil
import pytest

from perflab.contract.latency import LATENCY_PROFILES
from perflab.host.impls import command_argv
from perflab.host.launch import server_env, serving
from perflab.host.proxy import LatencyProxy, ProxyError, applied_delay_ms
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


@pytest.fixture(scope="module")
def server(host_paths, tmp_path_factory):
    if not (host_paths.bin / "toxiproxy-server").is_file():
        pytest.fail("no toxiproxy-server: roles/toxiproxy installs it (make setup)")
    with serving(
        IMPLS["python/orders_server"],
        host_paths,
        tmp_path_factory.mktemp("orders") / "server.log",
        options={"workers": 4},
        ready_timeout_s=30,
    ) as server:
        yield f"127.0.0.1:{server.port}"
        assert server.stop() == "" and server.exit_code() == 0


def run_client(host_paths, target: str, profile: str, out: Path) -> dict:
    argv = command_argv(
        IMPLS["python/orders_client"],
        host_paths,
        {"clients": 1, "orders": 30, "warmup": 2, "latency_profile": profile},
        target=target,
        out=str(out),
    )
    done = subprocess.run(
        argv,
        env=server_env(host_paths),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=out.parent,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.mark.live
def test_client_goes_through_the_proxy_with_the_profile_s_delay(server, host_paths, tmp_path):
    direct = run_client(host_paths, server, "none", tmp_path / "none.json")
    assert direct["proxy"] is None
    zero = run_client(host_paths, server, "proxy_0ms", tmp_path / "zero.json")
    lan = run_client(host_paths, server, "lan", tmp_path / "lan.json")
    assert zero["proxy"]["applied_ms"] == 0 and zero["proxy"]["toxics"] == []
    assert lan["proxy"]["applied_ms"] == 1 and lan["proxy"]["one_way_ms"] == 0.5
    assert {t["stream"] for t in lan["proxy"]["toxics"]} == {"upstream", "downstream"}
    for report in (zero, lan):
        metrics = {m["metric"]: m["value"] for m in report["metrics"]}
        assert metrics["orders_ok"] == 30 and report["errors"] == {}
        assert report["proxy"]["listen"] != server
        assert not psutil.pid_exists(report["proxy"]["pid"]), "the client left its proxy running"
    rtt = {m["metric"]: m["value"] for m in lan["metrics"]}
    # 1 ms each way: every round trip takes at least 2 ms.
    assert rtt["rtt_p50"] >= 2000
