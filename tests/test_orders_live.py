"""orders study, live: the grpcio orders server answers every order, unary and bidi, with
and without TLS, with a response time stamped after the request time; the parallel client
writes a complete client.json and fails loudly when the server is unreachable.

Starts the real server and client with the host venv, from their impl.toml commands.
TLS uses a throwaway CA and server certificate made with openssl in the test's tmp dir.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from perflab.host.impls import HostPaths, command_argv, discover
from perflab.host.launch import server_env, serving
from perflab.host.net import free_port
from tests.conftest import REPO

pytestmark = pytest.mark.live

IMPLS = discover(REPO / "servers")
SECURITY = ["plaintext", "tls"]


def make_certs(folder: Path) -> Path:
    """A CA and a server certificate for 127.0.0.1/localhost, as roles/tls_certs lays out."""
    folder.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=perflab test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.pem",
    )
    return folder


@pytest.fixture(scope="module")
def tls_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_certs(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module", params=SECURITY)
def server(request, host_paths: HostPaths, tls_dir: Path, tmp_path_factory):
    security = request.param
    with serving(
        IMPLS["python/orders_server"],
        host_paths,
        tmp_path_factory.mktemp("orders") / "server.log",
        options={"workers": 4, "security": security, "tls_dir": str(tls_dir)},
        ready_timeout_s=30,
    ) as server:
        yield security, f"127.0.0.1:{server.port}"
        assert server.stop() == "" and server.exit_code() == 0, "no clean exit on SIGTERM"


# Calls the server directly with the generated stubs and prints every stamp it saw.
PROBE = textwrap.dedent(
    """
    import json, sys, time, grpc, order_pb2, order_pb2_grpc
    target, security, tls_dir = sys.argv[1:4]
    if security == "tls":
        creds = grpc.ssl_channel_credentials(open(tls_dir + "/ca.pem", "rb").read())
        channel = grpc.secure_channel(target, creds)
    else:
        channel = grpc.insecure_channel(target)
    stub = order_pb2_grpc.OrderServiceStub(channel)
    def order(i):
        o = order_pb2.Order(instrumentID=i, price=10, quantity=1, side=True)
        o.requestTime.FromNanoseconds(time.time_ns())
        return o
    out = {"unary": [], "bidi": []}
    for i in range(5):
        o = order(i)
        r = stub.AddOrder(o, timeout=10)
        out["unary"].append([o.requestTime.ToNanoseconds(), r.responseTime.ToNanoseconds(),
                             time.time_ns(), r.result])
    sent = [order(i) for i in range(5)]
    for o, r in zip(sent, stub.AddOrderStream(iter(sent), timeout=10)):
        out["bidi"].append([o.requestTime.ToNanoseconds(), r.responseTime.ToNanoseconds(),
                            time.time_ns(), r.result])
    print(json.dumps(out))
    """
)


def test_every_order_is_answered_after_it_was_sent(server, host_paths, tls_dir):
    security, target = server
    done = subprocess.run(
        [str(host_paths.python), "-c", PROBE, target, security, str(tls_dir)],
        env=server_env(host_paths),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    stamps = json.loads(done.stdout)
    for mode in ("unary", "bidi"):
        assert len(stamps[mode]) == 5, f"{mode}: {len(stamps[mode])} replies for 5 orders"
        for request_ns, response_ns, received_ns, result in stamps[mode]:
            assert result is True
            # Same host, same clock: the server stamps after the client, before the receipt.
            assert request_ns <= response_ns <= received_ns, (mode, security)


@pytest.mark.parametrize("mode", ["unary", "bidi", "bidi_pipelined"])
def test_parallel_client_writes_a_complete_report(server, host_paths, tls_dir, tmp_path, mode):
    security, target = server
    out = tmp_path / "client.json"
    options = {
        "mode": mode,
        "clients": 4,
        "orders": 40,
        "warmup": 2,
        "security": security,
        "tls_dir": str(tls_dir),
    }
    argv = command_argv(
        IMPLS["python/orders_client"], host_paths, options, target=target, out=str(out)
    )
    done = subprocess.run(
        argv, env=server_env(host_paths), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    metrics = {m["metric"]: m["value"] for m in report["metrics"]}
    assert report["errors"] == {}
    assert metrics["orders_ok"] == 40 and metrics["orders_failed"] == 0
    assert report["orders_per_client"] == [10, 10, 10, 10]
    assert metrics["stamp_violations"] == 0
    assert 0 < metrics["rtt_p50"] <= metrics["rtt_p90"] <= metrics["rtt_p99"] <= metrics["rtt_max"]
    # One-way each way is part of the round trip (same clock, different clocks' resolution aside).
    assert 0 <= metrics["oneway_request_p50"] <= metrics["rtt_max"]
    assert metrics["orders_per_s"] == pytest.approx(40 / metrics["elapsed"])
    cdf = report["cdf_us"]["rtt"]
    assert cdf[-1][1] == metrics["rtt_max"] and [q for q, _ in cdf] == sorted(q for q, _ in cdf)


def test_client_fails_when_no_server_answers(host_paths, tmp_path):
    out = tmp_path / "client.json"
    argv = command_argv(
        IMPLS["python/orders_client"],
        host_paths,
        {"clients": 2, "orders": 4, "warmup": 0, "call_timeout_s": 2},
        target=f"127.0.0.1:{free_port('127.0.0.1')}",
        out=str(out),
    )
    done = subprocess.run(
        argv, env=server_env(host_paths), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    report = json.loads(out.read_text())
    assert report["metrics"][0] == {"metric": "orders_ok", "value": 0, "unit": "orders"}
    assert any("UNAVAILABLE" in error for error in report["errors"])
