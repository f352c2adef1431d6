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

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
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


def run_client(host_paths: HostPaths, target: str, out: Path, **options: object) -> dict:
    argv = command_argv(
        IMPLS["python/orders_client"], host_paths, options, target=target, out=str(out)
    )
    done = subprocess.run(
        argv, env=server_env(host_paths), capture_output=True, text=True, timeout=300
    )
    assert out.exists(), done.stderr
    return {"returncode": done.returncode, "stderr": done.stderr, **json.loads(out.read_text())}


@pytest.mark.parametrize("mode", ["bidi", "unary"])
def test_many_clients_connect_in_batches_before_warming_up(host_paths, tmp_path, mode):
    """200 clients, 32 connections at a time: every connection is READY before the first
    warm-up order, and no warm-up order or stream fails (none cancelled by the server)."""
    clients = 200
    with serving(
        IMPLS["python/orders_server"],
        host_paths,
        tmp_path / "server.log",
        # bidi holds a server thread per stream, as the matrix's bidi cells size it.
        options={"workers": clients if mode == "bidi" else 10},
        ready_timeout_s=30,
    ) as server:
        report = run_client(
            host_paths,
            f"127.0.0.1:{server.port}",
            tmp_path / "client.json",
            mode=mode,
            clients=clients,
            orders=2 * clients,
            warmup=3,
            connect_batch=32,
        )
    warmup = report["warmup"]
    assert report["returncode"] == 0, report["stderr"]
    assert warmup["errors"] == {} and report["errors"] == {}
    assert warmup["orders_ok"] == 3 * clients and warmup["connections_not_ready"] == 0
    assert 0 < warmup["connected_at_s"] <= warmup["first_order_at_s"] <= warmup["warmed_at_s"]
    assert warmup["connect_batch"] == 32


def test_the_window_holds_every_order_when_each_client_sends_one(host_paths, tmp_path):
    """300 clients of one order each: the clock starts before any client is released, so
    no order's round trip is longer than the window it was sent in. With the clock read by
    the main thread after its own wait on the barrier, reference run 20261127T082212Z-quick
    measured 1 000 such orders in 10 ms while one of them took 73 ms."""
    clients = 300
    with serving(
        IMPLS["python/orders_server"],
        host_paths,
        tmp_path / "server.log",
        options={"workers": 10},
        ready_timeout_s=30,
    ) as server:
        report = run_client(
            host_paths,
            f"127.0.0.1:{server.port}",
            tmp_path / "client.json",
            mode="unary",
            clients=clients,
            orders=clients,
            warmup=1,
        )
    assert report["returncode"] == 0, report["stderr"]
    metrics = {m["metric"]: (m["value"], m["unit"]) for m in report["metrics"]}
    assert metrics["orders_ok"][0] == clients
    assert metrics["elapsed"][1] == "s" and metrics["rtt_max"][1] == "us"
    assert metrics["elapsed"][0] >= metrics["rtt_max"][0] / 1e6


@pytest.mark.parametrize("mode", ["bidi", "bidi_pipelined", "unary"])
def test_warmup_error_is_recorded_as_the_server_said_it(host_paths, tmp_path, mode):
    """A real gRPC server without the orders service: every warm-up stream ends with
    UNIMPLEMENTED, and that is what the warm-up records, once per client, with no
    cancellation of the client's own or traceback in its place."""
    clients = 3
    with serving(IMPLS["python/grpcio_sync"], host_paths, tmp_path / "hello.log") as server:
        report = run_client(
            host_paths,
            f"127.0.0.1:{server.port}",
            tmp_path / "client.json",
            mode=mode,
            clients=clients,
            orders=clients,
            warmup=2,
            call_timeout_s=10,
        )
    (error,) = report["warmup"]["errors"]
    assert error.startswith("UNIMPLEMENTED: ")
    assert report["warmup"]["errors"][error] == (clients if mode != "unary" else 2 * clients)
    assert report["warmup"]["orders_ok"] == 0 and report["warmup"]["connections_not_ready"] == 0
    # The measured orders fail the same way, each client's error counted once.
    assert report["returncode"] == 1
    assert report["errors"] == {error: clients}
    assert "UNIMPLEMENTED" in report["stderr"] and "CANCELLED" not in report["stderr"]


def orders_cell(server_impl: str, mode: str = "bidi") -> CellSpec:
    """A small orders cell as the runner gets it: the orders client against server_impl."""
    return CellSpec(
        run_id="t",
        study="orders",
        cell_id=f"{mode}-plaintext-c4-n8-r1",
        scenario=f"localhost_{mode}",
        implementation="grpcio_python",
        client="grpcio_python",
        params={"mode": mode, "clients": 4, "orders": 8},
        repeat=1,
        server=ServerSpec(impl=server_impl, options={"workers": 4}),
        load=LoadSpec(
            kind="client",
            client_impl="python/orders_client",
            client_options={"mode": mode, "clients": 4, "orders": 8, "warmup": 2},
            timeout_s=120,
        ),
    )


@pytest.mark.parametrize("answers", [True, False])
def test_the_cell_record_keeps_the_clients_warmup(host_paths, tmp_path, answers):
    """The runner copies the client's warm-up into cell.json (`warmup`); warm-up errors
    become a note naming them, next to the measured orders' failure."""
    from perflab.host.runner import CellRunner

    spec = orders_cell("python/orders_server" if answers else "python/grpcio_sync")
    record = CellRunner(host_paths, tmp_path).run(spec)
    assert record is not None
    folder = tmp_path / spec.run_id / spec.study / spec.cell_id
    warmup = json.loads((folder / "cell.json").read_text())["warmup"]
    notes = [n for n in record.notes if n.startswith("warm-up:")]
    if answers:
        assert record.status == "ok", record.error
        assert warmup["orders_ok"] == 8 and warmup["errors"] == {} and notes == []
    else:
        assert record.status == "failed"
        (error,) = warmup["errors"]
        assert error.startswith("UNIMPLEMENTED: ") and warmup["orders_ok"] == 0
        assert notes == [f"warm-up: 4 errors (4 x {error}); discarded with the warm-up"]
