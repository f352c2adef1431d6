"""aws_io study against the real S3 (versitygw) and MongoDB (FerretDB) the roles started:
the seeded bucket, every server's answers checked by content, the refusal when a dependency
is unreachable, and a dependency killed in the middle of a real ghz cell."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from perflab.analysis.frames import read_run
from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.parsers import read_raw_text
from perflab.host import services
from perflab.host.impls import discover
from perflab.host.launch import server_env, serving
from perflab.host.net import free_port
from perflab.host.runner import CellRunner
from tests.conftest import REPO, matrix_only, study_vars

# Every test here starts S3, MongoDB, servers or ansible-playbook.
pytestmark = pytest.mark.live

MATRIX = study_vars("aws_io")[0]
IMPLS = MATRIX["implementations"]
ENDPOINTS = {k: MATRIX[k] for k in ("s3_endpoint", "bucket", "mongo_uri")}
GHZ_VERSION = study_vars("calibration")[0]["ghz_versions"][0]
N_OBJECTS = MATRIX["objects"]

# Runs in the host venv (boto3, pymongo, grpcio, generated code): what each side answered.
CLIENT = """
import json, os, sys
import grpc, objects_pb2, objects_pb2_grpc, pymongo
target, mongo_uri, collection = sys.argv[1:4]
with grpc.insecure_channel(target) as channel:
    stub = objects_pb2_grpc.ObjectsStub(channel)
    request = objects_pb2.ListRequest(prefix="objects/")
    unary = stub.ListObjects(request, timeout=60)
    stream = list(stub.ListObjectsStream(request, timeout=60))
    saved = stub.ListAndSave(request, timeout=60)
docs = pymongo.MongoClient(mongo_uri)["perflab"][collection].find({}, {"_id": 0})
print(json.dumps({
    "unary": [[o.key, o.size, o.etag] for o in unary.objects],
    "stream": [[o.key, o.size, o.etag] for o in stream],
    "saved": saved.count,
    "docs": sorted([d["key"], d["size"], d["etag"]] for d in docs),
}))
"""

# The bucket as boto3 sees it, and a document round trip through pymongo.
DEPENDENCIES = """
import json, os, sys
sys.path.insert(0, sys.argv[4])
from perflab.studies.aws_io.objstore import apply_env_file, list_keys, s3_client
import pymongo
endpoint, bucket, mongo_uri = sys.argv[1:4]
apply_env_file(os.path.expanduser("~/.perflab/aws_io/client.env"))
s3 = s3_client(endpoint)
keys = list_keys(s3, bucket, "objects/")
body = s3.get_object(Bucket=bucket, Key="objects/00005.json")["Body"].read().decode()
collection = pymongo.MongoClient(mongo_uri, serverSelectionTimeoutMS=5000)["perflab"]["roundtrip"]
collection.drop()
collection.insert_many([{"n": i, "key": k} for i, k in enumerate(keys[:50])])
back = [[d["n"], d["key"]] for d in collection.find({}, {"_id": 0}).sort("n", 1)]
collection.delete_many({"n": {"$lt": 25}})
left = collection.count_documents({})
collection.drop()
print(json.dumps({"keys": keys, "body": body, "back": back, "left": left}))
"""


def expected_keys() -> list[str]:
    return [f"objects/{i:05d}.json" for i in range(N_OBJECTS)]


def expected_size(index: int) -> int:
    return len(json.dumps({"index": index, "pad": "x" * (index % 97)}).encode())


@pytest.fixture(scope="module")
def deps(host_paths):
    """S3 and MongoDB as the roles described them, started if down (left running after)."""
    for name in ("s3", "mongo"):
        try:
            services.ensure(host_paths.home, name)
        except services.ServiceError as exc:
            pytest.fail(f"{exc}\nrun the s3_versitygw and mongo_ferretdb roles (make setup)")
    return host_paths


def host_python(host_paths, code: str, *args: str, env=None) -> dict:
    done = subprocess.run(
        [str(host_paths.python), "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_bucket_holds_the_seeded_objects_and_mongo_round_trips_documents(deps):
    got = host_python(
        deps,
        DEPENDENCIES,
        ENDPOINTS["s3_endpoint"],
        ENDPOINTS["bucket"],
        ENDPOINTS["mongo_uri"],
        str(REPO),
    )
    assert got["keys"] == expected_keys()
    assert json.loads(got["body"]) == {"index": 5, "pad": "xxxxx"}
    assert got["back"] == [[i, k] for i, k in enumerate(expected_keys()[:50])]
    assert got["left"] == 25


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_server_answers_each_rpc_with_the_bucket_contents(name, deps, tmp_path):
    entry = IMPLS[name]
    impl = discover(REPO / "servers")[entry["impl"]]
    options = {**entry.get("options", {}), **ENDPOINTS}
    log = tmp_path / "server.log"
    with serving(impl, deps, log, options=options, ready_timeout_s=60) as server:
        got = host_python(
            deps,
            CLIENT,
            f"127.0.0.1:{server.port}",
            ENDPOINTS["mongo_uri"],
            f"objects_{server.pid}",
            env=server_env(deps),
        )
        note = server.stop()
    assert note == "", note
    assert server.proc.returncode == 0
    keys = [row[0] for row in got["unary"]]
    assert keys == expected_keys()
    assert [row[1] for row in got["unary"]] == [expected_size(i) for i in range(N_OBJECTS)]
    assert all(len(row[2]) == 32 for row in got["unary"]), "S3 ETags are MD5 hex digests"
    # The stream carries the same objects, one message each, in the same order.
    assert got["stream"] == got["unary"]
    assert got["saved"] == N_OBJECTS
    assert got["docs"] == sorted(got["unary"])
    stats = json.loads(
        next(
            line
            for line in (tmp_path / "server.log").read_text().splitlines()
            if line.startswith("STATS ")
        ).removeprefix("STATS ")
    )
    assert stats["messages_sent"]["ListObjectsStream"] == N_OBJECTS
    assert stats["calls"] == {"ListObjects": 1, "ListObjectsStream": 1, "ListAndSave": 1}
    assert stats["errors"] == {}


def test_check_refuses_naming_the_endpoint_that_does_not_answer(deps):
    closed = free_port("127.0.0.1")
    argv = [
        str(deps.python),
        "-m",
        "perflab.studies.aws_io.objstore",
        "check",
        f"--endpoint=http://127.0.0.1:{closed}",
        f"--bucket={ENDPOINTS['bucket']}",
        f"--objects={N_OBJECTS}",
        f"--mongo-uri={ENDPOINTS['mongo_uri']}",
        f"--env-file={deps.home / 'aws_io' / 'client.env'}",
    ]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"S3 unreachable at 127.0.0.1:{closed}" in done.stderr
    argv[4] = f"--endpoint={ENDPOINTS['s3_endpoint']}"
    argv[7] = f"--mongo-uri=mongodb://perflab:not-a-secret@127.0.0.1:{closed}/"
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"MongoDB unreachable at 127.0.0.1:{closed}" in done.stderr
    assert "not-a-secret" not in done.stderr + done.stdout
    argv[7] = f"--mongo-uri={ENDPOINTS['mongo_uri']}"
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "ready" in done.stdout


def cell(name: str, scenario: str, call: str, dependency: str) -> CellSpec:
    entry = IMPLS["grpcio_sync_w10"]
    return CellSpec(
        run_id="fault",
        study="aws_io",
        cell_id=name,
        scenario=scenario,
        implementation="grpcio_sync_w10",
        client="ghz",
        params={"shape": "steady", "concurrency": 4, "fault": dependency},
        repeat=1,
        server=ServerSpec(impl=entry["impl"], options={**entry["options"], **ENDPOINTS}),
        load=LoadSpec(
            kind="ghz",
            proto="objects.proto",
            call=call,
            data={"prefix": "objects/"},
            concurrency=4,
            duration_s=4,
            warmup_s=0.5,
            ghz_version=GHZ_VERSION,
        ),
        dependencies=["s3", "mongo"],
    )


@pytest.mark.parametrize(
    ("dependency", "scenario", "call"),
    [
        ("s3", "list_unary", "objects.Objects.ListObjects"),
        ("mongo", "list_save", "objects.Objects.ListAndSave"),
    ],
)
def test_a_dependency_killed_mid_cell_is_recorded_and_the_next_cell_runs(
    dependency, scenario, call, deps, tmp_path
):
    runner = CellRunner(deps, tmp_path)
    service = services.load(deps.home, dependency)
    victim = services.pid(service)
    assert victim is not None

    def kill_when_measuring() -> None:
        # In the measured phase: after the warm-up (0.5 s) and the server's start.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (tmp_path / "fault" / "aws_io" / ".partial-killed" / "ghz.log").exists():
                time.sleep(1.5)
                services.psutil.Process(victim).send_signal(signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_measuring)
    killer.start()
    try:
        killed = runner.run(cell("killed", scenario, call, dependency))
    finally:
        killer.join()
        after = runner.run(cell("after", scenario, call, dependency))
        services.ensure(deps.home, dependency)
    assert killed is not None and after is not None
    assert killed.status == "failed"
    assert killed.error.startswith(f"dependency {dependency} exited during the cell")
    # The calls that failed are in the raw ghz report, with the dependency named.
    ghz = json.loads(read_raw_text(tmp_path / "fault" / "aws_io" / "killed" / "ghz.json"))
    assert ghz["statusCodeDistribution"].get("Unavailable", 0) > 0, ghz["statusCodeDistribution"]
    name = "S3" if dependency == "s3" else "MongoDB"
    assert any(f"desc = {name}: " in message for message in ghz["errorDistribution"])
    assert ghz["statusCodeDistribution"].get("OK", 0) > 0, "calls before the kill succeeded"
    # The next cell restarted the dependency first, said so, and measured normally.
    assert after.status == "ok", after.error
    assert any(f"dependency {dependency} " in n and "restarted" in n for n in after.notes)
    frame = read_run(tmp_path / "fault")
    rows = frame.set_index(["cell_id", "metric"])["value"]
    assert rows[("killed", "failed")] == 1
    assert rows[("killed", "errors_Unavailable")] > 0
    assert rows[("after", "ok")] > 0 and rows[("after", "errors")] == 0
    assert rows[("after", f"dependency_{dependency}_cpu_seconds")] > 0


def test_warm_up_calls_that_fail_are_counted_in_the_cell_and_noted(deps, tmp_path):
    """S3 unreachable from the server: every warm-up call fails. The warm-up is discarded,
    its failures are not: cell.json's `warmup` counts them by status code, a note says so."""
    spec = cell("no-s3", "list_unary", "objects.Objects.ListObjects", "s3")
    spec.server.options["s3_endpoint"] = f"http://127.0.0.1:{free_port()}"
    record = CellRunner(deps, tmp_path).run(spec)
    assert record is not None and record.status == "failed"
    assert record.error.startswith("no call succeeded"), record.error
    warmup = json.loads((tmp_path / "fault" / "aws_io" / "no-s3" / "cell.json").read_text())[
        "warmup"
    ]
    assert warmup["configured_s"] == 0.5 and warmup["ok"] == 0
    assert warmup["not_ok_by_code"] == {"Unavailable": warmup["calls"]} and warmup["calls"] > 0
    note = f"warm-up: {warmup['calls']} of {warmup['calls']} calls failed"
    assert any(n.startswith(note) for n in record.notes), record.notes


@pytest.mark.slow
def test_playbook_refuses_before_any_cell_when_s3_is_unreachable(deps, tmp_path):
    closed = free_port("127.0.0.1")
    matrix = {**MATRIX, "s3_endpoint": f"http://127.0.0.1:{closed}"}
    extra = {
        "perflab_studies": ["aws_io"],
        "perflab_profile": "smoke",
        "perflab_run_id": "refused",
        "perflab_data_dir": str(tmp_path),
        "perflab_matrix_aws_io": matrix,
    }
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "inventory/localhost.yml",
            "playbooks/studies.yml",
            "-e",
            json.dumps(extra),
            "-e",
            f"perflab_home={deps.home}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert (
        f"aws_io refused before any cell ran: refused: S3 unreachable at 127.0.0.1:{closed}"
        in done.stdout
    ), done.stdout[-3000:]
    assert not (tmp_path / "refused" / "aws_io").exists(), "no aws_io cell may have run"


def test_region_latency_profile_delays_each_s3_and_mongo_round_trip(deps, tmp_path):
    from perflab.contract.matrix import expand
    from perflab.studies import get_study

    matrix, profiles = study_vars("aws_io")
    matrix.update(
        run_implementations=["grpcio_sync_w10"],
        scenarios=["list_save"],
        latency_profiles=["region"],
        concurrency=[2],
    )
    (spec,) = matrix_only(
        expand(
            "latency",
            get_study("aws_io"),
            matrix,
            profiles,
            "smoke",
            set(discover(REPO / "servers")),
        )
    )
    spec.load.ghz_version = GHZ_VERSION
    record = CellRunner(deps, tmp_path).run(spec)
    assert record is not None and record.status == "ok", record.error
    folder = tmp_path / "latency" / "aws_io" / spec.cell_id
    proxies = json.loads((folder / "proxies.json").read_text())
    assert {name: p["applied_ms"] for name, p in proxies.items()} == {
        "s3_endpoint": 10,
        "mongo_uri": 10,
    }
    argv = json.loads((folder / "server.argv.json").read_text())
    assert f"http://{proxies['s3_endpoint']['listen']}" in argv
    # One S3 listing and one insert_many per call: at least two 20 ms round trips each.
    rows = read_run(tmp_path / "latency").set_index("metric")["value"]
    assert rows["latency_fastest"] >= 40.0
    assert rows["errors"] == 0


def test_a_remote_server_gets_its_dependencies_and_proxies_from_its_agent(deps, agent, tmp_path):
    """Multi-host topologies: S3, MongoDB and their latency proxies sit beside the server,
    so the server's agent starts and samples them, and the cell folder shows it all."""
    from perflab.contract.matrix import expand
    from perflab.studies import get_study

    matrix, profiles = study_vars("aws_io")
    matrix.update(
        run_implementations=["grpcio_sync_w1"],
        scenarios=["list_save"],
        latency_profiles=["region"],
        concurrency=[2],
    )
    (spec,) = matrix_only(
        expand(
            "remote",
            get_study("aws_io"),
            matrix,
            profiles,
            "smoke",
            set(discover(REPO / "servers")),
        )
    )
    spec.load.ghz_version = GHZ_VERSION
    runner = CellRunner(
        deps,
        tmp_path,
        server_agent=agent.url,
        server_host="127.0.0.1",
        agent_token_file=agent.token_file,
    )
    record = runner.run(spec)
    assert record is not None and record.status == "ok", record.error
    folder = tmp_path / "remote" / "aws_io" / spec.cell_id
    proxies = json.loads((folder / "proxies.json").read_text())
    assert {name: p["applied_ms"] for name, p in proxies.items()} == {
        "s3_endpoint": 10,
        "mongo_uri": 10,
    }
    assert (folder / "proxy-s3_endpoint.log").is_file()
    argv = json.loads((folder / "server.argv.json").read_text())
    assert f"http://{proxies['s3_endpoint']['listen']}" in argv
    with (folder / "resources.csv").open() as handle:
        measured = {row["role"] for row in csv.DictReader(handle) if row["phase"] == "measure"}
    assert {"server", "dependency_s3", "dependency_mongo"} <= measured
    rows = read_run(tmp_path / "remote").set_index("metric")["value"]
    assert rows["latency_fastest"] >= 40.0 and rows["errors"] == 0


# A stale collection (its pid long gone) and the collections the server left behind.
STALE = """
import json, sys
import pymongo
uri, action = sys.argv[1:3]
database = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)["perflab"]
if action == "plant":
    database["objects_999999999"].insert_one({"stale": True})
print(json.dumps(sorted(n for n in database.list_collection_names() if n.startswith("objects_"))))
"""


@pytest.mark.parametrize("implementation", ["grpcio_sync_w10", "grpclib_asyncio"])
def test_servers_prepare_and_clean_up_through_the_direct_mongo_uri(implementation, deps, tmp_path):
    """The cell's MongoDB for calls is unreachable here (a closed port, as if behind a slow
    proxy): the stale collection is still dropped before READY and nothing is left after,
    because both go through admin_mongo_uri, never through what a latency proxy delays."""
    direct = ENDPOINTS["mongo_uri"]
    assert "objects_999999999" in host_python(deps, STALE, direct, "plant")
    spec = cell("direct", "list_unary", "objects.Objects.ListObjects", "")
    entry = IMPLS[implementation]
    spec.implementation = implementation
    spec.server.impl = entry["impl"]
    spec.server.options = {
        **entry["options"],
        **ENDPOINTS,
        "mongo_uri": f"mongodb://127.0.0.1:{free_port('127.0.0.1')}/",
        "admin_mongo_uri": direct,
    }
    record = CellRunner(deps, tmp_path).run(spec)
    assert record is not None and record.status == "ok", record.error
    folder = tmp_path / "fault" / "aws_io" / "direct"
    log = (folder / "server.log").read_text()
    assert "could not" not in log, log
    with (folder / "resources.csv").open() as handle:
        pids = {row["pid"] for row in csv.DictReader(handle) if row["role"] == "server"}
    left = host_python(deps, STALE, direct, "list")
    # Other tests' live servers may hold collections of their own: only these two count.
    assert "objects_999999999" not in left
    assert pids and not {f"objects_{pid}" for pid in pids} & set(left)


def test_smoke_runs_a_unary_and_a_stream_aa_pair_each_judging_its_own_claims(deps, tmp_path):
    """Issue 26: aws_io's A/A cells, one pair per kind of call, run through the runner, and
    each kind's drift sets the margin of the claims on its own call."""
    from perflab.analysis.replication import replicate
    from perflab.analysis.run import read as read_folder
    from perflab.analysis.verdicts import MIN_MARGIN
    from perflab.cli import claim_frame_hooks
    from perflab.contract.cell import AA_PARAM
    from perflab.contract.matrix import expand
    from perflab.studies import get_study
    from tests.fixtures_live import GHZ_VERSION

    matrix, profiles = study_vars("aws_io")
    cells = expand(
        "aa-io", get_study("aws_io"), matrix, profiles, "smoke", set(discover(REPO / "servers"))
    )
    twins = [cell for cell in cells if AA_PARAM in cell.params]
    assert sorted((cell.scenario, cell.params[AA_PARAM]) for cell in twins) == [
        ("list_stream", "a"),
        ("list_stream", "b"),
        ("list_unary", "a"),
        ("list_unary", "b"),
    ]
    runner = CellRunner(deps, tmp_path)
    for cell in twins:
        cell.load.ghz_version = GHZ_VERSION  # this run has no calibration to pick it
        record = runner.run(cell)
        assert record is not None and record.status in ("ok", "bound"), record.error
    replication = replicate(
        read_folder(tmp_path / "aa-io", claim_frame_hooks()), REPO / "data" / "reference"
    )
    kinds = {kind.coordinates["scenario"]: kind for kind in replication.noise.kinds}
    assert set(kinds) == {"list_unary", "list_stream"}
    judged = [
        (verdict, kinds[str(verdict.claim.numerator.scenario)])
        for verdict in replication.verdicts
        # The claims file holds every study's claims; only aws_io's are judged on these cells.
        if verdict.claim.study == "aws_io" and verdict.claim.kind == "ratio"
    ]
    assert {own.coordinates["scenario"] for _, own in judged} == set(kinds)
    for verdict, own in judged:
        margin = max(MIN_MARGIN, own.per_metric[verdict.claim.metric])
        assert verdict.judging.margin == pytest.approx(margin)
    for kind in kinds.values():
        print(f"{kind.configuration}: {kind.per_metric}")
