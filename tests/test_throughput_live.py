"""throughput study, live: every server streams a small payload to every client, which
verifies the byte count and the SHA-256 the server printed, in every security mode; mTLS
refuses a client without a certificate; bad or missing certificates fail fast and clearly.

Servers and clients start exactly as the runner starts them (impl.toml commands, the host
prefix's binaries and certificates from roles/tls_certs in {home}/tls) on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from perflab.contract.cell import CellSpec
from perflab.host.impls import HostPaths, command_argv, discover
from perflab.host.launch import ServerProcess, launch_server, server_env
from perflab.host.net import free_port
from perflab.host.runner import CellRunner
from perflab.studies.throughput import matrix as study
from tests.conftest import REPO, study_vars

pytestmark = pytest.mark.live

IMPLS = discover(REPO / "servers")
SERVERS = {
    "go": "go/throughput_server",
    "cpp": "cpp/throughput",
    "python": "python/throughput_server",
    "python_aio": "python/throughput_server",
}
CLIENTS = {
    "go": "go/throughput_client",
    "cpp": "cpp/throughput_client",
    "python": "python/throughput_client",
    "python_aio": "python/throughput_client",
}
# grpc.aio is the Python folders with this option.
API = {"python_aio": {"api": "aio"}}
# Not a multiple of the chunk, so the last message is a short one; small: this checks, not measures.
SIZE = 5 * 1_000_000 + 123
CHUNK = 1_000_000
# A client that cannot connect must give up long before this; a hang would hit it.
FAST_S = 15.0


@dataclass
class Server:
    """A started server and the SHA-256 of its payload, which it printed before READY."""

    process: ServerProcess
    sha256: str

    def stop(self) -> str:
        return self.process.stop()


def start_server(
    paths: HostPaths, name: str, security: str, log_dir: Path, **options: object
) -> Server:
    process = launch_server(
        IMPLS[SERVERS[name]],
        paths,
        log_dir / f"{name}-{security}.log",
        options={
            **API.get(name, {}),
            "size": SIZE,
            "chunk_bytes": CHUNK,
            "security": security,
            "checksum": 1,
            **options,
        },
        ready_timeout_s=30,
    )
    said = process.log_path.read_text().splitlines()
    sha256 = next((line.split()[1] for line in said if line.startswith("SHA256 ")), "")
    return Server(process, sha256)


def run_client(
    paths: HostPaths, name: str, port: int, out: Path, **options: object
) -> subprocess.CompletedProcess[str]:
    argv = command_argv(
        IMPLS[CLIENTS[name]],
        paths,
        {
            **API.get(name, {}),
            "expect_bytes": SIZE,
            "warmup_bytes": 1000,
            "timeout_s": 10,
            "checksum": 1,
            **options,
        },
        target=f"127.0.0.1:{port}",
        out=str(out),
    )
    return subprocess.run(
        argv, capture_output=True, text=True, env=server_env(paths), timeout=FAST_S, check=False
    )


class ServerPool:
    """Servers started on first use, one per (implementation, security), stopped at the end."""

    def __init__(self, paths: HostPaths, log_dir: Path) -> None:
        self.paths = paths
        self.log_dir = log_dir
        self.started: dict[tuple[str, str], Server] = {}

    def get(self, name: str, security: str) -> tuple[Server, int]:
        if (name, security) not in self.started:
            self.started[name, security] = start_server(self.paths, name, security, self.log_dir)
        server = self.started[name, security]
        return server, server.process.port

    def stop(self) -> None:
        for server in self.started.values():
            server.stop()


@pytest.fixture(scope="module")
def pool(host_paths: HostPaths, tmp_path_factory) -> Iterator[ServerPool]:
    servers = ServerPool(host_paths, tmp_path_factory.mktemp("servers"))
    try:
        yield servers
    finally:
        servers.stop()


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("server", list(SERVERS))
@pytest.mark.parametrize("security", ["none", "tls", "mtls"])
def test_client_receives_every_byte_with_the_servers_checksum(
    pool, security, server, client, host_paths, tmp_path
):
    proc, port = pool.get(server, security)
    out = tmp_path / "client.json"
    done = run_client(host_paths, client, port, out, security=security)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    metrics = {m["metric"]: m for m in result["metrics"]}
    assert result["bytes"] == SIZE == metrics["bytes"]["value"]
    assert metrics["messages"]["value"] == 6  # five full chunks and a short one
    assert len(proc.sha256) == 64
    assert result["sha256"] == proc.sha256
    assert result["security"] == security
    assert metrics["throughput"]["unit"] == "GiB/s"
    assert metrics["throughput"]["value"] == pytest.approx(
        SIZE / 2**30 / result["seconds"], rel=1e-6
    )


@pytest.mark.parametrize("client", list(CLIENTS))
def test_several_timed_calls_each_deliver_the_payload_and_add_up(
    pool, client, host_paths, tmp_path
):
    proc, port = pool.get("cpp", "none")
    out = tmp_path / "client.json"
    done = run_client(host_paths, client, port, out, calls=3)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    metrics = {m["metric"]: m["value"] for m in result["metrics"]}
    assert result["calls"] == metrics["calls"] == 3
    assert result["bytes"] == metrics["bytes"] == 3 * SIZE
    assert metrics["messages"] == 3 * 6
    # The window is the calls' own seconds, and the throughput their bytes over them.
    assert len(result["call_seconds"]) == 3
    assert all(seconds > 0 for seconds in result["call_seconds"])
    assert result["seconds"] == pytest.approx(sum(result["call_seconds"]), rel=1e-6)
    assert metrics["stream_seconds"] == pytest.approx(result["seconds"], rel=1e-6)
    assert metrics["throughput"] == pytest.approx(3 * SIZE / 2**30 / result["seconds"], rel=1e-6)
    # The digest is the payload's (the first call's), as with one call.
    assert result["sha256"] == proc.sha256


@pytest.mark.parametrize("client", list(CLIENTS))
def test_zero_timed_calls_is_refused_before_connecting(client, host_paths, tmp_path):
    # Port 1 on loopback: nothing listens, so only an argument check can end it this fast.
    done = run_client(host_paths, client, 1, tmp_path / "c.json", calls=0)
    assert done.returncode != 0
    assert "calls" in done.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_wrong_byte_count_fails_the_client(pool, client, host_paths, tmp_path):
    _, port = pool.get("cpp", "none")
    done = run_client(host_paths, client, port, tmp_path / "c.json", expect_bytes=SIZE + 1)
    assert done.returncode != 0
    assert f"received {SIZE} bytes, expected {SIZE + 1}" in done.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("server", list(SERVERS))
def test_mtls_rejects_a_client_without_a_certificate(pool, server, client, host_paths, tmp_path):
    _, port = pool.get(server, "mtls")
    began = time.monotonic()
    # security "tls": the client trusts the CA but presents no certificate of its own.
    done = run_client(host_paths, client, port, tmp_path / "c.json", security="tls")
    assert done.returncode != 0
    assert time.monotonic() - began < FAST_S
    # The handshake is refused (a TLS alert "certificate required", or the connection closed).
    assert "unavailable" in done.stderr.lower()
    assert not (tmp_path / "c.json").exists()


@pytest.fixture(scope="module")
def stranger_ca(tmp_path_factory) -> Path:
    """A CA that signed nothing the servers present: a client trusting it must refuse them."""
    folder = tmp_path_factory.mktemp("stranger")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=stranger",
            "-keyout",
            str(folder / "ca.key"),
            "-out",
            str(folder / "ca.pem"),
        ],
        check=True,
        capture_output=True,
    )
    return folder


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_mismatched_ca_fails_fast_with_an_error(pool, client, host_paths, tmp_path, stranger_ca):
    _, port = pool.get("go", "tls")  # one TLS server is enough to show the refusal
    began = time.monotonic()
    done = run_client(
        host_paths, client, port, tmp_path / "c.json", security="tls", tls_dir=str(stranger_ca)
    )
    assert done.returncode != 0
    assert time.monotonic() - began < FAST_S
    assert "fail" in done.stderr.lower()


@pytest.mark.parametrize("client", list(CLIENTS))
def test_missing_client_certificates_are_named(client, host_paths, tmp_path):
    done = run_client(
        host_paths,
        client,
        free_port("127.0.0.1"),
        tmp_path / "c.json",
        security="mtls",
        tls_dir=str(tmp_path / "nowhere"),
    )
    assert done.returncode != 0
    assert "cannot set up mtls" in done.stderr
    assert "nowhere" in done.stderr


@pytest.mark.parametrize("server", list(SERVERS))
def test_missing_server_certificates_stop_the_server_before_ready(server, host_paths, tmp_path):
    argv = command_argv(
        IMPLS[SERVERS[server]],
        host_paths,
        {
            **API.get(server, {}),
            "size": SIZE,
            "chunk_bytes": CHUNK,
            "security": "tls",
            "tls_dir": str(tmp_path / "none"),
        },
        host="127.0.0.1",
        port=str(free_port("127.0.0.1")),
    )
    done = subprocess.run(
        argv, capture_output=True, text=True, env=server_env(host_paths), timeout=30
    )
    assert done.returncode != 0
    assert "READY" not in done.stdout
    assert "cannot set up tls" in done.stderr


def test_generated_certificates_name_the_loopback_and_chain_to_the_ca(host_paths):
    tls = host_paths.home / "tls"
    names = subprocess.run(
        ["openssl", "x509", "-in", str(tls / "server.pem"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "IP Address:127.0.0.1" in names and "DNS:localhost" in names
    verified = subprocess.run(
        [
            "openssl",
            "verify",
            "-CAfile",
            str(tls / "ca.pem"),
            str(tls / "server.pem"),
            str(tls / "client.pem"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert verified.count(": OK") == 2
    assert oct((tls / "server.key").stat().st_mode)[-3:] == "600"


def cell(size: int, run_id: str) -> CellSpec:
    """A Go-to-Go cell built by the study's own code from its group_vars record, with a small
    chunk, no warm-up and a short timeout: this checks the runner, it does not measure."""
    config, _ = study_vars("throughput")
    config.update(chunk_bytes=CHUNK, warmup_bytes=0, timeout_s=10.0)
    matrix = study.checked(config, set(IMPLS))
    return study.grpc_cell(run_id, matrix, "go", "go", "none", size, 1)


def test_a_payload_larger_than_memory_is_refused_before_the_server_starts(host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path)
    record = runner.run(cell(2**50, "refuse"))  # 1 PiB
    assert record is not None and record.status == "failed"
    assert "refused before start" in record.error
    assert "1048576.00 GiB" in record.error  # the numbers: needed and available
    assert "available" in record.error
    folder = tmp_path / "refuse" / "throughput" / record.cell_id
    assert not (folder / "server.argv.json").exists()  # the server never started


def test_a_cell_runs_through_the_runner(host_paths, tmp_path):
    record = CellRunner(host_paths, tmp_path).run(cell(SIZE, "one"))
    assert record is not None and record.status == "ok", record.error
    result = json.loads(
        (tmp_path / "one" / "throughput" / record.cell_id / "client.json").read_text()
    )
    assert result["bytes"] == SIZE


def test_a_client_without_a_certificate_fails_its_cell_with_the_reason(host_paths, tmp_path):
    spec = cell(SIZE, "nocert")
    spec.server.options["security"] = "mtls"
    spec.load.client_options["security"] = "tls"  # trusts the CA, presents no certificate
    began = time.monotonic()
    record = CellRunner(host_paths, tmp_path).run(spec)
    assert record is not None and record.status == "failed"
    assert time.monotonic() - began < 30  # the deadline, not a hang
    assert "exited with code 1" in record.error
    assert "Unavailable" in record.error  # the client's own words reach cell.json
