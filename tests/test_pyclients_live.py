"""pyclients study, live: every client gets correct answers from the C++ numbers server in
every scenario and by both methods, and exits non-zero when an answer is wrong.

Starts the real server (servers/cpp/numbers, built by roles/pyclients_build) on 127.0.0.1
and the clients with the host venv, exactly as the runner would (impl.toml commands).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from perflab.host.impls import HostPaths, Implementation, command_argv, discover
from perflab.host.launch import ServerProcess, server_env, serving
from perflab.host.net import free_port
from tests.conftest import REPO

pytestmark = pytest.mark.live

CLIENTS = [
    "python/pyclient_grpc_aio",
    "python/pyclient_betterproto",
    "python/pyclient_betterproto2",
    "python/pyclient_grpcio_sync",
]
ASYNC_CLIENTS = CLIENTS[:3]
IMPLS = discover(REPO / "servers")
# Small counts: these check answers, they do not measure.
SEED = {"method": "seed", "seed_loops": 3, "seed_repeats": 2, "warmup_calls": 1}
STEADY = {"method": "steady", "steady_calls": 5, "warmup_calls": 1}
NUMBERS = {"request_reply": 0, "stream_10": 10, "stream_100000": 100_000}


@pytest.fixture(scope="module")
def numbers_server(host_paths: HostPaths, tmp_path_factory):
    if not (host_paths.bin / "numbers_server").is_file():
        pytest.fail(f"{host_paths.bin}/numbers_server is missing: run `make setup` first")
    log = tmp_path_factory.mktemp("numbers") / "server.log"
    with serving(IMPLS["cpp/numbers"], host_paths, log, ready_timeout_s=30) as server:
        yield f"127.0.0.1:{server.port}"
        assert server.stop() == "" and server.exit_code() == 0, "no clean exit on SIGTERM"


def run_client(
    impl: Implementation, paths: HostPaths, target: str, out: Path, options: dict
) -> subprocess.CompletedProcess[str]:
    argv = command_argv(impl, paths, options, target=target, out=str(out))
    return subprocess.run(argv, env=server_env(paths), capture_output=True, text=True, timeout=300)


def metrics(out: Path) -> dict[str, float]:
    report = json.loads(out.read_text())
    return {m["metric"]: m["value"] for m in report["metrics"]}


@pytest.mark.parametrize("scenario", list(NUMBERS))
@pytest.mark.parametrize("client", CLIENTS)
def test_client_gets_correct_answers_in_every_scenario(
    client, scenario, numbers_server, host_paths, tmp_path
):
    impl = IMPLS[client]
    # The 100 000-number stream once (seed, one loop, no warm-up); the others by both methods.
    methods = (
        [{"method": "seed", "seed_loops": 1, "seed_repeats": 1, "warmup_calls": 0}]
        if scenario == "stream_100000"
        else [SEED, STEADY]
    )
    for options in methods:
        out = tmp_path / f"{options['method']}.json"
        done = run_client(impl, host_paths, numbers_server, out, {"scenario": scenario, **options})
        assert done.returncode == 0, f"{client} {scenario}: {done.stderr}"
        found = metrics(out)
        assert found["time_per_call"] > 0 and found["calls_per_s"] > 0
        if NUMBERS[scenario]:
            assert found["numbers_per_s"] == pytest.approx(found["calls_per_s"] * NUMBERS[scenario])
        if options["method"] == "steady":
            report = json.loads(out.read_text())
            assert len(report["latencies_us"]) == STEADY["steady_calls"]
            assert found["calls"] == STEADY["steady_calls"] + STEADY["warmup_calls"] + 1
            assert found["latency_p50"] <= found["latency_p99"] <= found["latency_max"]
        else:
            assert found["calls"] == options["warmup_calls"] + (
                options["seed_loops"] * options["seed_repeats"]
            )


@pytest.mark.parametrize("client", ASYNC_CLIENTS)
def test_async_clients_run_on_uvloop(client, numbers_server, host_paths, tmp_path):
    out = tmp_path / "client.json"
    for options in (SEED, STEADY):
        done = run_client(
            IMPLS[client],
            host_paths,
            numbers_server,
            out,
            {"scenario": "stream_10", "loop": "uvloop", **options},
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(out.read_text())["loop"] == "uvloop"


# A numbers server that answers wrongly: another greeting, and a stream that skips 3.
WRONG_SERVER = textwrap.dedent("""
    import asyncio, sys
    from bp1.numbers import HelloReply, NumberReply, NumbersBase
    from grpclib.server import Server
    from grpclib.utils import graceful_exit

    class Wrong(NumbersBase):
        async def say_hello(self, hello_request):
            return HelloReply(message="Hello, somebody else")

        async def stream_numbers(self, stream_request):
            for number in range(1, stream_request.count + 1):
                if number != 3:
                    yield NumberReply(number=number)

    async def main():
        server = Server([Wrong()])
        with graceful_exit([server]):
            await server.start("127.0.0.1", int(sys.argv[1]))
            print("READY", flush=True)
            await server.wait_closed()

    asyncio.run(main())
""")


@pytest.fixture(scope="module")
def wrong_server(host_paths: HostPaths, tmp_path_factory):
    script = tmp_path_factory.mktemp("wrong") / "wrong_server.py"
    script.write_text(WRONG_SERVER)
    port = free_port("127.0.0.1")
    argv = [str(host_paths.python), str(script), str(port)]
    server = ServerProcess.start(
        argv, server_env(host_paths), script.with_suffix(".log"), "127.0.0.1", port
    )
    try:
        server.wait_ready(30)
        yield f"127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.mark.parametrize("scenario", ["request_reply", "stream_10"])
@pytest.mark.parametrize("client", CLIENTS)
def test_client_exits_nonzero_on_a_wrong_answer(
    client, scenario, wrong_server, host_paths, tmp_path
):
    out = tmp_path / "client.json"
    options = {"scenario": scenario, **STEADY}
    done = run_client(IMPLS[client], host_paths, wrong_server, out, options)
    assert done.returncode == 3, done.stderr
    expected = (
        "reply 'Hello, somebody else'"
        if scenario == "request_reply"
        else ("stream message 3 carried 4, expected 3")
    )
    assert expected in done.stderr
    assert not out.exists(), "a client that got a wrong answer must not write measurements"


def test_harness_refuses_a_short_stream_and_ranks_percentiles():
    sys.path.insert(0, str(REPO / "servers" / "python" / "pyclient_harness"))
    try:
        import harness
    finally:
        sys.path.pop(0)
    with pytest.raises(harness.WrongAnswer, match="ended after 9 numbers, expected 10"):
        harness.check_count(9, 10)
    assert harness.percentile(list(range(1, 101)), 0.99) == 99
    assert harness.percentile([5], 0.5) == 5
    assert harness.split_target("127.0.0.1:5") == ("127.0.0.1", 5)


# The seed-stack variants and the versions seed 001's README names (requirements-seed001.txt).
SEED_STACK = {
    "python/pyclient_grpc_aio_seed001": {"grpcio": "1.62.1", "protobuf": "4.25.3"},
    "python/pyclient_betterproto_seed001": {"grpclib": "0.4.7", "betterproto": "2.0.0b6"},
}


@pytest.mark.parametrize("client", list(SEED_STACK))
def test_a_seed_stack_client_runs_and_reports_the_seed_versions(
    client, numbers_server, host_paths, tmp_path
):
    if not (host_paths.home / "venv-seed001" / "bin" / "python").is_file():
        pytest.fail(f"{host_paths.home}/venv-seed001 is missing: run `make setup` first")
    out = tmp_path / "client.json"
    options = {"scenario": "stream_10", **STEADY}
    done = run_client(IMPLS[client], host_paths, numbers_server, out, options)
    assert done.returncode == 0, f"{client}: {done.stderr}"
    report = json.loads(out.read_text())
    assert report["executable"].startswith(str(host_paths.home / "venv-seed001"))
    assert SEED_STACK[client].items() <= report["libraries"].items(), report["libraries"]


def test_a_current_stack_client_reports_the_current_versions(numbers_server, host_paths, tmp_path):
    out = tmp_path / "client.json"
    options = {"scenario": "request_reply", **STEADY}
    done = run_client(IMPLS["python/pyclient_grpc_aio"], host_paths, numbers_server, out, options)
    assert done.returncode == 0, done.stderr
    libraries = json.loads(out.read_text())["libraries"]
    # The current stack is not the seed's: the comparison has two stacks to tell apart.
    assert libraries["grpcio"] != "1.62.1" and "grpclib" not in libraries, libraries
