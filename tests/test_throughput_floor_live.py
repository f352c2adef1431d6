"""throughput study, live: the floor wrappers keep the servers' contract and measure.

The iperf3 wrapper says READY only once iperf3 listens, its client writes a positive rate,
and both stop cleanly; the openssl wrapper writes the cipher's rate.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from perflab.host.impls import command_argv, discover
from perflab.host.launch import ServerProcess, server_env
from perflab.host.net import free_port, port_open
from tests.conftest import REPO

pytestmark = pytest.mark.live

IMPLS = discover(REPO / "servers")


def test_iperf3_wrappers_measure_one_stream_and_stop_cleanly(host_paths, tmp_path):
    port = free_port("127.0.0.1")
    server_argv = command_argv(
        IMPLS["floor/iperf3_server"], host_paths, host="127.0.0.1", port=str(port)
    )
    server = ServerProcess.start(
        server_argv, server_env(host_paths), tmp_path / "server.log", "127.0.0.1", port
    )
    try:
        # READY alone (no port probe here): the wrapper must say it only once iperf3 listens.
        server.wait_ready(30, probe_port=False)
        assert port_open("127.0.0.1", port)
        out = tmp_path / "client.json"
        client_argv = command_argv(
            IMPLS["floor/iperf3_client"],
            host_paths,
            {"seconds": 1, "omit_s": 0},
            target=f"127.0.0.1:{port}",
            out=str(out),
        )
        subprocess.run(client_argv, check=True, timeout=30, env=dict(os.environ))
        metrics = {m["metric"]: m for m in json.loads(out.read_text())["metrics"]}
        assert metrics["throughput"]["unit"] == "GiB/s"
        assert metrics["throughput"]["value"] > 0.05  # loopback: far above a slow NIC
        assert (tmp_path / "iperf3.json").is_file()
    finally:
        began = time.monotonic()
        note = server.stop()
    assert note == "" and server.exit_code() == 0
    assert time.monotonic() - began < 5
    assert not port_open("127.0.0.1", port)


def test_openssl_wrapper_writes_the_cipher_rate(host_paths, tmp_path):
    out = tmp_path / "client.json"
    argv = command_argv(
        IMPLS["floor/openssl_speed"], host_paths, {"seconds": 1}, target="127.0.0.1:1", out=str(out)
    )
    subprocess.run(argv, check=True, timeout=30)
    result = json.loads(out.read_text())
    metrics = {m["metric"]: m for m in result["metrics"]}
    assert metrics["throughput"]["value"] > 0.05
    assert metrics["cipher_bytes_per_s"]["value"] == pytest.approx(
        metrics["throughput"]["value"] * 2**30
    )
    assert result["version"].startswith("OpenSSL")
