"""Seed 000's stack, live: the hello grpcio sync server on grpcio 1.28.1 (the seed venv that
roles/seed000_stack makes on a Python 3.8) answers a real call and says which grpcio serves.

Started exactly as the runner starts it (impl.toml's command, the host prefix's environment).
Skipped, with the role's own record of why, on a host with no Python grpcio 1.28.1 has
wheels for; a prefix set up before the role is an error under `make test`.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from perflab.host.impls import HostPaths, discover
from perflab.host.launch import server_env, serving
from tests.conftest import REPO

pytestmark = pytest.mark.live

IMPLS = discover(REPO / "servers")
SEED_GRPCIO = "1.28.1"
CALL = """
import sys, grpc, hello_pb2, hello_pb2_grpc
with grpc.insecure_channel(sys.argv[1]) as channel:
    print(hello_pb2_grpc.GreeterStub(channel).SayHello(
        hello_pb2.HelloRequest(name="seed000"), timeout=10).message)
"""


@pytest.fixture(scope="module")
def seed_stack(host_paths: HostPaths) -> dict:
    facts = host_paths.home / "stacks" / "seed000.json"
    if not facts.is_file():
        missing = f"{facts} is missing: the prefix predates roles/seed000_stack (run make setup)"
        if os.environ.get("PERFLAB_REQUIRE_SETUP") == "1":
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    record = json.loads(facts.read_text())
    if not record["installed"]:
        pytest.skip(
            f"no Python grpcio {SEED_GRPCIO} has wheels for ({', '.join(record['wheels_for'])}) "
            f"on this host: looked for {', '.join(record['looked_for'])}"
        )
    return record


@pytest.mark.parametrize("workers", [1, 10])
def test_the_seed_stack_server_answers_on_grpcio_1_28_1(
    seed_stack: dict, host_paths: HostPaths, tmp_path, workers: int
):
    log = tmp_path / "server.log"
    impl = IMPLS["python/grpcio_sync_seed000"]
    with serving(impl, host_paths, log, options={"workers": workers}, ready_timeout_s=60) as server:
        # The current stack's client calls it, as ghz would: the wire, not the library, meets.
        done = subprocess.run(
            [str(host_paths.python), "-c", CALL, f"127.0.0.1:{server.port}"],
            env=server_env(host_paths),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Hello seed000"
        assert server.stop() == "" and server.exit_code() == 0, "no clean exit on SIGTERM"
    said = log.read_text().splitlines()
    assert f"grpcio {SEED_GRPCIO}" in said, said[:5]
    assert seed_stack["python"].startswith("3.")
