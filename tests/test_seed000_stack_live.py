"""Seed 000's stack, live: the hello and aws_io grpcio sync servers on grpcio 1.28.1 (the seed
venv that roles/seed000_stack makes on a Python 3.8) answer real calls (aws_io's against the
shared prefix's versitygw and FerretDB) and say which grpcio serves.

Started exactly as the runner starts it (impl.toml's command, the host prefix's environment).
Skipped, with the role's own record of why, on a host with no Python grpcio 1.28.1 has
wheels for; a prefix set up before the role is an error under `make test`.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from perflab.host import services
from perflab.host.impls import HostPaths, discover
from perflab.host.launch import server_env, serving
from tests.conftest import REPO, study_vars

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


# Runs in the host venv (the current stack's grpcio, as ghz is a client of its own): what
# the aws_io server on the seed stack answered, and what MongoDB holds after ListAndSave.
AWS_CALL = """
import json, sys
import grpc, objects_pb2, objects_pb2_grpc, pymongo
target, mongo_uri, collection = sys.argv[1:4]
with grpc.insecure_channel(target) as channel:
    stub = objects_pb2_grpc.ObjectsStub(channel)
    request = objects_pb2.ListRequest(prefix="objects/")
    unary = [o.key for o in stub.ListObjects(request, timeout=60).objects]
    stream = [o.key for o in stub.ListObjectsStream(request, timeout=60)]
    saved = stub.ListAndSave(request, timeout=60).count
docs = pymongo.MongoClient(mongo_uri)["perflab"][collection].count_documents({})
print(json.dumps({"unary": unary, "stream": stream, "saved": saved, "docs": docs}))
"""


@pytest.mark.parametrize("name", ["grpcio_sync_w1", "grpcio_sync_w10"])
def test_the_aws_io_server_on_the_seed_stack_lists_s3_and_saves_to_mongo(
    seed_stack: dict, host_paths: HostPaths, tmp_path, name: str
):
    """aws_io's grpcio server, as the matrix runs it on seed000, against the shared prefix's
    real versitygw and FerretDB: every RPC answers with the seeded bucket."""
    matrix = study_vars("aws_io")[0]
    entry = matrix["implementations"][name]
    for service in matrix["dependencies"]:
        try:
            services.ensure(host_paths.home, service)
        except services.ServiceError as exc:
            pytest.fail(f"{exc}\nrun the s3_versitygw and mongo_ferretdb roles (make setup)")
    endpoints = {k: matrix[k] for k in ("s3_endpoint", "bucket", "mongo_uri")}
    impl = IMPLS[entry["stacks"]["seed000"]]
    log = tmp_path / "server.log"
    options = {**entry.get("options", {}), **endpoints}
    with serving(impl, host_paths, log, options=options, ready_timeout_s=60) as server:
        done = subprocess.run(
            [
                str(host_paths.python),
                "-c",
                AWS_CALL,
                f"127.0.0.1:{server.port}",
                matrix["mongo_uri"],
                f"objects_{server.pid}",
            ],
            env=server_env(host_paths),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert server.stop() == "" and server.exit_code() == 0, "no clean exit on SIGTERM"
    got = json.loads(done.stdout)
    keys = [f"objects/{i:05d}.json" for i in range(matrix["objects"])]
    assert got["unary"] == keys
    assert got["stream"] == keys
    assert got["saved"] == got["docs"] == matrix["objects"]
    said = log.read_text().splitlines()
    assert f"grpcio {SEED_GRPCIO}" in said, said[:5]
    stats = json.loads(
        next(line for line in said if line.startswith("STATS ")).removeprefix("STATS ")
    )
    assert stats["errors"] == {}
