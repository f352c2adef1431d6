"""aws_io study (seed 000, S3 + MongoDB): its matrix, perflab.host.services, and the analysis."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pandas as pd
import pytest

from perflab.analysis.run import read as read_folder
from perflab.contract.matrix import MatrixError, expand
from perflab.contract.parsers import parse_resources
from perflab.host import services
from perflab.host.net import free_port
from perflab.studies import get_study
from perflab.studies.aws_io import analysis as aws_io
from tests.conftest import REPO, matrix_only, study_vars

KNOWN = {"python/aws_io_grpcio", "python/aws_io_grpcio_seed000", "python/aws_io_grpclib"}


def cells(profile: str, **changes):
    matrix, profiles = study_vars("aws_io")
    matrix.update(changes)
    return matrix_only(expand("run1", get_study("aws_io"), matrix, profiles, profile, KNOWN))


def test_matrix_names_only_existing_folders_and_options():
    from perflab.host.impls import discover

    matrix, _ = study_vars("aws_io")
    impls = discover(REPO / "servers")
    for entry in matrix["implementations"].values():
        assert entry["impl"] in impls
        # Every option a cell passes (its own and the endpoints) is declared by impl.toml.
        assert {*entry.get("options", {}), "s3_endpoint", "bucket", "mongo_uri"} <= set(
            impls[entry["impl"]].options
        )


def test_quick_profile_shows_local_s3_once_and_judges_far_s3_with_three_repeats():
    everything = cells("quick")
    assert len({c.cell_id for c in everything}) == len(everything)
    assert [c.repeat for c in everything] == sorted(c.repeat for c in everything)
    # The current stack's cells here; seed 000's: the next test.
    quick = [c for c in everything if "stack" not in c.params]
    near = [c for c in quick if c.params["latency_profile"] == "none"]
    far = [c for c in quick if c.params["latency_profile"] == "seed_far_s3"]
    assert len(near) + len(far) == len(quick)
    # Local S3: every server and call once, steady, no proxy.
    assert len(near) == 4 * 3
    assert {c.load.concurrency for c in near} == {2}
    assert all(c.latency_proxies == [] and c.repeat == 1 for c in near)
    steady = next(c for c in near if c.cell_id == "grpcio_sync_w1-list_save-steady-c2-r1")
    assert steady.load.duration_s == 3 and steady.load.warmup_s == 1 and steady.load.total is None
    assert steady.server.options["workers"] == 1
    assert steady.server.options["s3_endpoint"] == "http://127.0.0.1:17070"
    assert steady.dependencies == ["s3", "mongo"]
    # Far S3: the RPCs the claims name, 3 repeats each, its own durations, both proxies; the
    # seed's concurrencies 2/10/25/50, the 1-worker and uvloop servers at 2 and 10 only.
    assert len(far) == (2 * 4 + 2 * 2) * 2 * 3
    assert {c.scenario for c in far} == {"list_unary", "list_stream"}
    by_server = {
        name: sorted({c.load.concurrency for c in far if c.implementation == name})
        for name in {c.implementation for c in far}
    }
    assert by_server == {
        "grpcio_sync_w1": [2, 10],
        "grpclib_uvloop": [2, 10],
        "grpcio_sync_w10": [2, 10, 25, 50],
        "grpclib_asyncio": [2, 10, 25, 50],
    }
    cell = next(
        c for c in far if c.cell_id == "grpclib_uvloop-list_stream-steady-c10-seed_far_s3-r3"
    )
    assert cell.load.call == "objects.Objects.ListObjectsStream"
    assert (cell.load.duration_s, cell.load.concurrency) == (4, 10)
    # One warm-up call per worker (data/experiments/20261128-aws-io-warmup-ab).
    assert (cell.load.warmup_s, cell.load.warmup_total) == (None, 10)
    assert cell.params == {
        "shape": "steady",
        "concurrency": 10,
        "connections": 1,
        "objects": 893,
        "latency_profile": "seed_far_s3",
        "duration_s": 4,
    }
    assert {p["option"] for p in cell.latency_proxies} == {"s3_endpoint", "mongo_uri"}
    assert {p["one_way_ms"] for p in cell.latency_proxies} == {250.0}
    assert cell.server.options["loop"] == "uvloop"


def test_warm_up_runs_no_more_calls_at_once_than_the_server_has_workers():
    far = [c for c in cells("quick") if c.params["latency_profile"] == "seed_far_s3"]
    capped = {
        (c.implementation, c.load.concurrency): c.load.warmup_concurrency
        for c in far
        if "aa" not in c.params
    }
    assert capped[("grpcio_sync_w1", 2)] == capped[("grpcio_sync_w1", 10)] == 1
    assert capped[("grpcio_sync_w10", 50)] == capped[("grpcio_sync_w10", 25)] == 10
    # At or under its workers, and on servers without a worker pool: the window's own.
    assert capped[("grpcio_sync_w10", 10)] == capped[("grpcio_sync_w10", 2)] == 0
    assert capped[("grpclib_asyncio", 50)] == 0


def far_cells_with(calls_per_worker: int) -> dict[str, object]:
    matrix, profiles = study_vars("aws_io")
    profiles["quick"]["latency_overrides"]["seed_far_s3"]["warmup_calls_per_worker"] = (
        calls_per_worker
    )
    return {
        c.cell_id: c
        for c in expand("run1", get_study("aws_io"), matrix, profiles, "quick", KNOWN)
        if c.params["latency_profile"] == "seed_far_s3"
    }


def test_a_warm_up_by_calls_sends_that_many_per_warm_up_worker_instead_of_a_duration():
    timed, by_calls = far_cells_with(0), far_cells_with(2)
    assert timed.keys() == by_calls.keys()
    for cell_id, cell in by_calls.items():
        before = timed[cell_id]
        assert (before.load.warmup_s, before.load.warmup_total) == (1, None)
        workers = cell.load.warmup_concurrency or cell.load.concurrency
        assert (cell.load.warmup_s, cell.load.warmup_total) == (None, 2 * workers)
        # Nothing else of the cell changes: the window, its id, what it records.
        assert cell.load.duration_s == before.load.duration_s
        assert cell.params == before.params
    assert by_calls["grpcio_sync_w1-list_unary-steady-c10-seed_far_s3-r1"].load.warmup_total == 2
    assert by_calls["grpclib_asyncio-list_unary-steady-c50-seed_far_s3-r1"].load.warmup_total == 100
    # Near S3 keeps its timed warm-up.
    near = [c for c in cells("quick") if c.params["latency_profile"] == "none"]
    assert near and all(c.load.warmup_total is None for c in near)
    with pytest.raises(MatrixError, match="warmup_calls_per_worker"):
        cells("quick", warmup_calls_per_worker=-1)


def test_seed_stack_runs_the_grpcio_servers_far_at_the_quick_concurrencies_only():
    quick = cells("quick")
    seed = [c for c in quick if c.params.get("stack") == "seed000"]
    # The two grpcio sync servers, both claim RPCs, far S3, concurrency 2 and 10, 3 repeats.
    assert len(seed) == 2 * 2 * 2 * 3
    assert {c.implementation for c in seed} == {"grpcio_sync_w1", "grpcio_sync_w10"}
    assert {c.server.impl for c in seed} == {"python/aws_io_grpcio_seed000"}
    assert {c.params["latency_profile"] for c in seed} == {"seed_far_s3"}
    assert {c.load.concurrency for c in seed} == {2, 10}
    assert all(c.cell_id.endswith(f"-seed_far_s3-seed000-r{c.repeat}") for c in seed)
    # Same options, endpoints and proxies as the current stack's twin.
    twin = {c.cell_id: c for c in quick}
    for c in seed:
        other = twin[c.cell_id.replace("-seed000", "")]
        assert c.server.options == other.server.options
        assert c.latency_proxies == other.latency_proxies
        assert c.load == other.load
    # The current stack's cells keep their ids and params (a missing `stack` reads as current).
    assert all("seed000" not in c.cell_id for c in quick if c not in seed)
    # The other way: all four concurrencies where no profile restricts them (full), none on
    # current only, none near S3 (smoke), none where the stack is not in stack_latency_profiles.
    full = [c for c in cells("full") if c.params.get("stack")]
    assert sorted({c.load.concurrency for c in full}) == [2, 10, 25, 50]
    assert not any("stack" in c.params for c in cells("quick", stacks=["current"]))
    assert not any("stack" in c.params for c in cells("smoke"))
    assert not any(
        "stack" in c.params
        for c in cells("quick", stack_latency_profiles=["none"])
        if c.params["latency_profile"] == "seed_far_s3"
    )
    near = cells("quick", stack_latency_profiles=["none"])
    assert {c.params["latency_profile"] for c in near if c.params.get("stack")} == {"none"}


def test_a_latency_override_changes_only_its_profiles_cells():
    base = cells("full", latency_profiles=["none", "region"])
    changed = cells(
        "full",
        latency_profiles=["none", "region"],
        latency_overrides={"region": {"shapes": ["steady"], "repeats": 2}},
    )
    # The same cells (their order within a round is a shuffle of the whole round).
    assert sorted(
        (c for c in changed if c.params["latency_profile"] == "none"), key=lambda c: c.cell_id
    ) == sorted((c for c in base if c.params["latency_profile"] == "none"), key=lambda c: c.cell_id)
    region = [c for c in changed if c.params["latency_profile"] == "region"]
    assert {c.params["shape"] for c in region} == {"steady"}
    assert {c.repeat for c in region} == {1, 2}


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ("far", "perflab_matrix_aws_io.latency_overrides"),
        ({"moon": {"repeats": 3}}, "perflab_matrix_aws_io.latency_overrides"),
        ({"region": {"objects": 5}}, "perflab_matrix_aws_io.latency_overrides.region"),
        ({"region": {"repeats": 0}}, "perflab_matrix_aws_io.latency_overrides.region.repeats"),
        ({"region": {"shapes": ["n1"]}}, "perflab_matrix_aws_io.latency_overrides.region.shapes"),
        (
            {"region": {"concurrency_by_implementation": {"nope": [2]}}},
            "perflab_matrix_aws_io.latency_overrides.region.concurrency_by_implementation",
        ),
        (
            {"region": {"concurrency_by_implementation": {"grpcio_sync_w1": [3]}}},
            "perflab_matrix_aws_io.latency_overrides.region.concurrency_by_implementation",
        ),
    ],
)
def test_a_bad_latency_override_is_refused_naming_its_key(overrides, key):
    with pytest.raises(MatrixError, match=key.replace(".", r"\.")):
        cells("full", latency_overrides=overrides)


def test_smoke_is_one_cell_per_server_and_scenario_and_full_has_ten_repeats():
    smoke = cells("smoke")
    assert sorted((c.implementation, c.scenario) for c in smoke) == sorted(
        (i, s) for i in aws_io.IMPLEMENTATIONS for s in aws_io.SCENARIOS
    )
    assert {c.repeat for c in cells("full")} == set(range(1, 11))


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"scenarios": ["list_all"]}, "perflab_matrix_aws_io.scenarios"),
        ({"shapes": []}, "perflab_matrix_aws_io.shapes"),
        ({"concurrency": [0]}, "perflab_matrix_aws_io.concurrency"),
        ({"s3_endpoint": "ftp://x"}, "perflab_matrix_aws_io.s3_endpoint"),
        ({"mongo_uri": "mongodb://u:secret@127.0.0.1:1/"}, "perflab_matrix_aws_io.mongo_uri"),
        ({"bucket": ""}, "perflab_matrix_aws_io.bucket"),
        ({"dependencies": ["redis"]}, "perflab_matrix_aws_io.dependencies"),
        ({"latency_profiles": ["moon"]}, "perflab_matrix_aws_io.latency_profiles"),
        (
            {"latency_profiles": ["region"], "s3_endpoint": "https://s3.amazonaws.com"},
            "perflab_matrix_aws_io.latency_profiles",
        ),
        ({"objects": -1}, "perflab_matrix_aws_io.objects"),
        ({"stacks": ["seed999"]}, "perflab_matrix_aws_io.stacks"),
        ({"stack_latency_profiles": ["moon"]}, "perflab_matrix_aws_io.stack_latency_profiles"),
        ({"stack_concurrency": [0]}, "perflab_matrix_aws_io.stack_concurrency"),
        (
            {"implementations": {"x": {"impl": "python/aws_io_grpcio", "stacks": {"s": "no"}}}},
            "perflab_matrix_aws_io.implementations",
        ),
        (
            {"implementations": {"x": {"impl": "python/nope"}}},
            "perflab_matrix_aws_io.implementations",
        ),
    ],
)
def test_matrix_refuses_a_bad_value_naming_its_key(change, key):
    with pytest.raises(MatrixError, match=key.replace(".", r"\.")):
        # A profile that does not override the changed key.
        _, profiles = study_vars("aws_io")
        untouched = next(
            p for p in ("quick", "full", "smoke") if not set(change) & set(profiles[p])
        )
        cells(untouched, **change)


def test_a_password_in_the_mongo_uri_never_reaches_the_message():
    with pytest.raises(MatrixError) as refused:
        cells("quick", mongo_uri="mongodb://user:hunter2@127.0.0.1:1/")
    assert "hunter2" not in str(refused.value)


def test_safe_endpoint_drops_credentials_and_probe_names_the_endpoint():
    assert services.safe_endpoint("mongodb://u:pw@10.1.2.3:27018/db?x=1") == "10.1.2.3:27018"
    assert services.safe_endpoint("http://127.0.0.1:17070") == "127.0.0.1:17070"
    assert services.safe_endpoint("https://s3.amazonaws.com") == "s3.amazonaws.com:443"
    port = free_port("127.0.0.1")
    problems = services.probe({"S3": f"http://127.0.0.1:{port}"}, timeout_s=0.5)
    assert problems == [f"S3 unreachable at 127.0.0.1:{port}: nothing accepts connections there"]


@pytest.mark.live
def test_a_service_is_started_found_restarted_after_a_kill_and_stopped(tmp_path):
    port = free_port("127.0.0.1")
    folder = tmp_path / "services"
    folder.mkdir()
    definition = {
        "argv": [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        "host": "127.0.0.1",
        "port": port,
    }
    (folder / "web.json").write_text(json.dumps(definition))
    service = services.load(tmp_path, "web")
    try:
        assert services.start(service) is True
        first = services.pid(service)
        assert first and services.port_open("127.0.0.1", port)
        assert services.ensure(tmp_path, "web") == (first, "")  # running: left alone
        subprocess.run(["kill", "-9", str(first)], check=True)
        deadline = time.monotonic() + 5
        while services.pid(service) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        second, note = services.ensure(tmp_path, "web")
        assert second != first
        assert note == f"dependency web (127.0.0.1:{port}) was down and has been restarted"
    finally:
        services.stop(service)
    assert services.pid(service) is None and not service.pid_file.exists()


def test_a_service_whose_port_is_taken_is_refused_naming_it(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        (tmp_path / "services").mkdir()
        (tmp_path / "services" / "s3.json").write_text(
            f'{{"argv": ["/bin/true"], "host": "127.0.0.1", "port": {port}}}'
        )
        with pytest.raises(services.ServiceError, match=f"127.0.0.1:{port} is taken"):
            services.start(services.load(tmp_path, "s3"))


def test_dependency_samples_keep_their_own_metric_names():
    csv = (
        "t,pid,role,phase,cpu_percent,rss_bytes,cpu_seconds\n"
        "0.0,1,dependency_s3,warmup,10,1048576,1.0\n"
        "0.1,1,dependency_s3,measure,50,2097152,1.05\n"
        "0.3,1,dependency_s3,measure,70,2097152,1.17\n"
    )
    metrics = {m.metric: m.value for m in parse_resources(csv)}
    # Between the phase's first and last samples: 0.12 s of CPU in 0.2 s.
    assert metrics["dependency_s3_cpu_seconds"] == pytest.approx(0.12)
    assert metrics["dependency_s3_cpu_percent_mean"] == pytest.approx(60)
    assert metrics["dependency_s3_rss_peak"] == pytest.approx(2.0)


def rows(cell_id, impl, scenario, metrics, concurrency=2, shape="seed_n200"):
    return [
        {
            "study": "aws_io",
            "scenario": scenario,
            "implementation": impl,
            "shape": shape,
            "concurrency": concurrency,
            "latency_profile": "none",
            "cell_id": cell_id,
            "repeat": 1,
            "status": "ok",
            "metric": metric,
            "value": value,
            "unit": "x",
        }
        for metric, value in metrics.items()
    ]


def test_seed_table_puts_published_next_to_measured_and_fills_missing_error_counts():
    frame = pd.DataFrame(
        rows("a", "grpclib_uvloop", "list_stream", {"count": 200, "ok": 109, "rps": 4.0})
        + rows("b", "grpclib_uvloop", "list_stream", {"count": 200, "ok": 200, "rps": 6.0}, 10)
    )
    published = pd.read_csv(REPO / "data" / "reference" / "aws_io.csv")
    table = aws_io.seed_table(frame, published, "list_stream", 2)
    assert table.loc["ok (calls)", ("grpclib_uvloop", "published")] == 109
    assert table.loc["ok (calls)", ("grpclib_uvloop", "measured")] == 109
    assert table.loc["errors_Unavailable (calls)", ("grpclib_uvloop", "published")] == 91
    # The cell reported no Unavailable: that is a measured zero, not a gap.
    assert table.loc["errors_Unavailable (calls)", ("grpclib_uvloop", "measured")] == 0
    assert table.loc["rps (req/s)", ("grpclib_uvloop", "measured")] == 4.0
    assert pd.isna(table.loc["rps (req/s)", ("grpcio_sync_w1", "measured")])
    assert table.attrs["shape"] == "seed_n200"


def test_seed_tables_answer_one_connection_and_varied_connections_stay_apart():
    one = rows("a", "grpclib_uvloop", "list_stream", {"count": 200, "ok": 109, "rps": 4.0})
    four = rows("b", "grpclib_uvloop", "list_stream", {"count": 200, "ok": 200, "rps": 9.0})
    frame = pd.DataFrame(
        [{**r, "connections": 1} for r in one] + [{**r, "connections": 4} for r in four]
    )
    published = pd.read_csv(REPO / "data" / "reference" / "aws_io.csv")
    # The seed ran one connection: its tables pair with those cells only.
    table = aws_io.seed_table(frame, published, "list_stream", 2)
    assert table.loc["rps (req/s)", ("grpclib_uvloop", "measured")] == 4.0
    compared = aws_io.rps_published_vs_measured(frame, published, "list_stream")
    mine = compared[
        (compared["implementation"] == "grpclib_uvloop") & (compared["concurrency"] == 2)
    ]
    assert mine["measured"].tolist() == [4.0]
    # Elsewhere each connection count is a server label of its own, never merged.
    rates = aws_io.rate_summary(frame)
    assert dict(zip(rates["implementation"], rates["median"], strict=True)) == {
        "grpclib_uvloop (1 conn)": 4.0,
        "grpclib_uvloop (4 conn)": 9.0,
    }
    # Cells recorded before connections was a key ran one: they read as 1, labels unchanged.
    old = aws_io.rate_summary(pd.DataFrame(one))
    assert old["implementation"].tolist() == ["grpclib_uvloop"]
    assert old["connections"].tolist() == [1]


def test_unavailable_answer_says_per_latency_profile_whether_the_seed_failure_reproduced():
    errors = pd.DataFrame(
        [
            {
                "scenario": "list_stream",
                "implementation": "grpclib_asyncio",
                "shape": "seed_n200",
                "concurrency": 10,
                "latency_profile": "none",
                "cell_id": "a",
                "message": "rpc error: code = Unavailable desc = S3: EndpointConnectionError",
                "calls": 7,
            }
        ]
    )
    counts = {"count": 200, "ok": 193, "errors_Unavailable": 7}
    failing = pd.DataFrame(rows("a", "grpclib_asyncio", "list_stream", counts))
    answer = aws_io.unavailable_answer(errors, failing)
    assert answer.startswith(
        "**S3 and MongoDB on this host (latency profile none): reproduced.** "
        "7 of 200 calls in 1 grpclib stream cells"
    )
    assert "EndpointConnectionError" in answer
    # Only local S3 was measured: the answer says the seed's regime was not.
    assert "this run put no delay on the S3 path" in answer
    clean = pd.DataFrame(rows("a", "grpclib_asyncio", "list_stream", {"count": 200, "ok": 200}))
    answer = aws_io.unavailable_answer(errors.iloc[0:0], clean)
    assert "did not reproduce.** 1 grpclib stream cells made 200 calls" in answer
    assert "It saw no error of any kind." in answer
    # Far S3 and local S3 answered apart; no "no delay" sentence once a delay was measured.
    far = [
        {**r, "latency_profile": "seed_far_s3"}
        for r in rows("b", "grpclib_uvloop", "list_stream", {"count": 30, "ok": 30})
    ]
    both = aws_io.unavailable_answer(errors, pd.concat([failing, pd.DataFrame(far)]))
    first, second = both.split("\n\n")
    assert first.startswith("**S3 and MongoDB on this host (latency profile none): reproduced.")
    assert second.startswith(
        "**S3 and MongoDB 250 ms away each way (Toxiproxy) (latency profile seed_far_s3): "
        "did not reproduce.** 1 grpclib stream cells made 30 calls"
    )
    none = pd.DataFrame(rows("a", "grpcio_sync_w1", "list_unary", {"count": 200, "ok": 200}))
    assert "no grpclib stream cell" in aws_io.unavailable_answer(errors.iloc[0:0], none)


def test_per_call_cpu_divides_each_process_cpu_by_successful_calls():
    frame = pd.DataFrame(
        rows(
            "a",
            "grpcio_sync_w10",
            "list_save",
            {
                "ok": 100,
                "server_cpu_seconds": 2.0,
                "dependency_s3_cpu_seconds": 0.5,
                "dependency_mongo_cpu_seconds": 1.0,
            },
        )
    )
    cpu = aws_io.per_call_cpu(frame).set_index("metric")["median"]
    assert cpu["gRPC server"] == pytest.approx(20.0)
    assert cpu["S3 (versitygw)"] == pytest.approx(5.0)
    assert cpu["MongoDB (FerretDB)"] == pytest.approx(10.0)


def test_a_latency_profile_puts_a_proxy_in_front_of_s3_and_mongo():
    region = cells("smoke", latency_profiles=["none", "region"])
    assert len(region) == 2 * 4 * 3
    plain = next(c for c in region if c.cell_id == "grpclib_asyncio-list_save-steady-c10-r1")
    far = next(c for c in region if c.cell_id == "grpclib_asyncio-list_save-steady-c10-region-r1")
    assert plain.latency_proxies == [] and plain.params["latency_profile"] == "none"
    assert far.params["latency_profile"] == "region"
    assert far.latency_proxies == [
        {
            "option": "s3_endpoint",
            "upstream": "127.0.0.1:17070",
            "one_way_ms": 10.0,
            "url": "http://{listen}",
        },
        {
            "option": "mongo_uri",
            "upstream": "127.0.0.1:27117",
            "one_way_ms": 10.0,
            "url": "mongodb://{listen}/",
        },
    ]


def test_seed_table_shows_calls_as_whole_numbers_and_the_rest_with_decimals():
    frame = pd.DataFrame(
        rows(
            "a",
            "grpclib_uvloop",
            "list_stream",
            {"count": 200.0, "ok": 109.0, "errors_Unavailable": 91.0, "rps": 4.25, "total": 30.0},
        )
    )
    published = pd.read_csv(REPO / "data" / "reference" / "aws_io.csv")
    page = aws_io.seed_table(frame, published, "list_stream", 2).to_html()
    for calls in ("200", "109", "91"):
        assert f"<td>{calls}</td>" in page and f"<td>{calls}.0</td>" not in page
    # Not counts: a rate and a time keep their decimals, even a whole 30 s.
    assert "<td>4.25</td>" in page and "<td>30.0</td>" in page


def test_stream_messages_count_calls_and_messages_in_whole_numbers():
    from perflab.analysis import tables
    from perflab.analysis.frames import read_run

    fixture = REPO / "tests" / "data" / "runs" / "aws_io_fixture"
    streams = aws_io.stream_messages(read_folder(fixture), read_run(fixture))
    shown = tables.hide_index(streams).to_html()
    ok = streams["ghz OK calls (measured)"].tolist()
    assert ok and all(isinstance(n, int) for n in ok)
    assert f">{ok[0]}<" in shown and f">{ok[0]}.00<" not in shown
    assert ">893.00<" in shown  # messages per call: a mean, with its decimals


def test_measured_regimes_lists_each_latency_profile_with_its_own_sizes():
    near = rows("a", "grpcio_sync_w1", "list_save", {"count": 9}, shape="steady")
    far = [
        {**r, "latency_profile": "seed_far_s3", "repeat": repeat}
        for repeat in (1, 2, 3)
        for r in rows(
            f"f{repeat}", "grpclib_asyncio", "list_unary", {"count": 9}, 10, shape="steady"
        )
    ]
    text = aws_io.measured_regimes(pd.DataFrame(near + far))
    assert text.splitlines() == [
        "- **none** (S3 and MongoDB on this host): `list_save`; `steady` cells at "
        "concurrency 2; 1 repeat (1 cells).",
        "- **seed_far_s3** (S3 and MongoDB 250 ms away each way (Toxiproxy)): `list_unary`; "
        "`steady` cells at concurrency 10; 3 repeats (3 cells).",
    ]
    assert aws_io.measured_regimes(pd.DataFrame(near[:0], columns=list(near[0]))) == (
        "This run has no aws_io cell."
    )


def test_seed_table_marks_a_measured_rate_that_rests_on_a_bound_repeat():
    from perflab.analysis import tables

    metrics = {"count": 200.0, "ok": 200.0, "rps": 4.25}
    bound = [{**r, "status": "bound"} for r in rows("a", "grpclib_uvloop", "list_stream", metrics)]
    calm = rows("b", "grpcio_sync_w1", "list_stream", metrics)
    published = pd.read_csv(REPO / "data" / "reference" / "aws_io.csv")
    table = aws_io.seed_table(pd.DataFrame(bound + calm), published, "list_stream", 2)
    # Only the bound server's rate is a floor: its call counts, and the other server, are not.
    assert table.loc["rps (req/s)", ("grpclib_uvloop", "measured")] == "≥ 4.25"
    assert table.loc["ok (calls)", ("grpclib_uvloop", "measured")] == 200
    assert table.loc["rps (req/s)", ("grpcio_sync_w1", "measured")] == 4.25
    assert tables.floor_note(table).startswith("≥: this figure rests")
    assert (
        tables.floor_note(aws_io.seed_table(pd.DataFrame(calm), published, "list_stream", 2)) == ""
    )


def far_repeats(impl: str, calls: list[float], p50: list[float], p99: float = 900.0):
    """One far-S3 list_unary configuration, a cell per repeat with its calls and p50."""
    return [
        {**r, "latency_profile": "seed_far_s3", "repeat": repeat}
        for repeat, (n, median) in enumerate(zip(calls, p50, strict=True), start=1)
        for r in rows(
            f"{impl}-r{repeat}",
            impl,
            "list_unary",
            {"ok": n, "latency_p50": median, "latency_p99": p99},
            shape="steady",
        )
    ]


def test_latency_p50_keeps_every_repeat_of_ten_calls_or_more():
    # The slow repeat made 12 calls: its median counts, else the shown one leans low.
    frame = pd.DataFrame(far_repeats("grpcio_sync_w10", [25, 12, 30], [624.7, 655.9, 641.8]))
    summary, note = aws_io.latency_summary(frame, "p50")
    assert summary["n"].tolist() == [3]
    assert summary["median"].tolist() == [641.8]
    assert (summary["ci_low"].iloc[0], summary["ci_high"].iloc[0]) == (624.7, 655.9)
    assert note == ""
    # Below ten calls a median is one or two calls: that cell is left out, and said so.
    frame = pd.DataFrame(far_repeats("grpcio_sync_w10", [25, 9, 30], [624.7, 655.9, 641.8]))
    summary, note = aws_io.latency_summary(frame, "p50")
    assert summary["n"].tolist() == [2]
    assert note.startswith("p50 is left out of 1 of 3 cells, which made at most 9 successful")
    assert "grpcio_sync_w10 list_unary c2 (steady, seed_far_s3): 2 of 3" in note


def test_latency_p99_is_left_out_below_its_calls_naming_configurations_and_repeats():
    from perflab.analysis.stats import interval_sentence

    few = far_repeats("grpcio_sync_w1", [61, 40, 50], [600.0, 610.0, 620.0])
    summary, note = aws_io.latency_summary(pd.DataFrame(few), "p99")
    assert summary.empty
    assert note.startswith("p99 is left out of 3 of 3 cells, which made at most 61 successful")
    assert "below 100 calls a p99 is the slowest call" in note
    assert "No configuration has a p99 (all 1 are left out)." in note
    # One configuration keeps 2 of its 3 repeats, another keeps all, a third none.
    mixed = far_repeats("grpclib_uvloop", [1500, 500, 2000], [600.0, 610.0, 620.0])
    full = far_repeats("grpclib_asyncio", [1500, 1200, 2000], [600.0, 610.0, 620.0])
    summary, note = aws_io.latency_summary(pd.DataFrame(few + mixed + full), "p99")
    assert dict(zip(summary["implementation"], summary["n"], strict=True)) == {
        "grpclib_asyncio": 3,
        "grpclib_uvloop": 2,
    }
    assert "1 of 3 configurations have no p99: grpcio_sync_w1 list_unary c2" in note
    assert "grpclib_uvloop list_unary c2 (steady, seed_far_s3): 2 of 3" in note
    assert "grpclib_asyncio" not in note
    # The intervals are named by their own repeats: the range of 2 is not that of 3.
    assert interval_sentence(summary) in note and "the range of the 2 repeats" in note


def test_stream_messages_name_each_rows_latency_profile_direct_first(tmp_path):
    cells_made = [("none", 2, 28), ("seed_far_s3", 2, 13), ("seed_far_s3", 10, 30)]
    frame = []
    for latency, concurrency, calls in cells_made:
        suffix = "" if latency == "none" else f"-{latency}"
        cell_id = f"grpcio_sync_w1-list_stream-steady-c{concurrency}{suffix}-r1"
        folder = tmp_path / "aws_io" / cell_id
        folder.mkdir(parents=True)
        params = {"shape": "steady", "concurrency": concurrency, "latency_profile": latency}
        cell = {
            "study": "aws_io",
            "cell_id": cell_id,
            "scenario": "list_stream",
            "implementation": "grpcio_sync_w1",
            "status": "ok",
            "params": params,
            "repeat": 1,
        }
        (folder / "cell.json").write_text(json.dumps(cell))
        stats = {
            "calls": {"ListObjectsStream": calls},
            "messages_sent": {"ListObjectsStream": calls * 893},
        }
        (folder / "server.log").write_text(f"STATS {json.dumps(stats)}\n")
        frame += [
            {**r, "latency_profile": latency}
            for r in rows(cell_id, "grpcio_sync_w1", "list_stream", {"ok": calls - 5}, concurrency)
        ]
    table = aws_io.stream_messages(read_folder(tmp_path), pd.DataFrame(frame))
    # The same server, shape, concurrency and repeat twice: the profile tells them apart,
    # and the direct cells come first (the folders list far c10 first).
    shown = table[["latency_profile", "concurrency", "server calls (incl. warm-up)"]]
    assert shown.values.tolist() == [
        ["none", 2, 28],
        ["seed_far_s3", 2, 13],
        ["seed_far_s3", 10, 30],
    ]
    assert table.columns[0] == "latency_profile"


def test_its_servers_check_reads_what_to_check_from_its_matrix():
    """The record's servers_check gets perflab_matrix_aws_io on stdin and the host prefix:
    the check's endpoints, bucket and count are the matrix's, the credentials the roles'."""
    import argparse

    from perflab.studies import get_study
    from perflab.studies.aws_io.objstore import ready_args

    assert get_study("aws_io").servers_check == ("perflab.studies.aws_io.objstore", "ready")
    matrix, _ = study_vars("aws_io")
    args = ready_args(argparse.Namespace(home="/h/.perflab"), matrix)
    assert (args.endpoint, args.bucket, args.objects, args.mongo_uri) == (
        matrix["s3_endpoint"],
        matrix["bucket"],
        matrix["objects"],
        matrix["mongo_uri"],
    )
    assert args.env_file == "/h/.perflab/aws_io/client.env"


def test_servers_prepare_through_a_mongo_uri_no_latency_proxy_replaces():
    """The far-S3 cells proxy mongo_uri (250 ms each way); the server lists and drops old
    collections through admin_mongo_uri, which stays the direct one."""
    matrix = study_vars("aws_io")[0]
    far = [c for c in cells("quick") if c.params.get("latency_profile") == "seed_far_s3"]
    assert far
    for cell in far:
        assert cell.server.options["admin_mongo_uri"] == matrix["mongo_uri"]
        assert "admin_mongo_uri" not in {p["option"] for p in cell.latency_proxies}


def stack_frame(stacks: dict[str, list[str]]) -> pd.DataFrame:
    """One row per (implementation, stack) far-S3 cell; stack "current" leaves it unrecorded."""
    rows = []
    for impl, on in stacks.items():
        for stack in on:
            row = {"study": "aws_io", "implementation": impl, "metric": "rps", "value": 1.0}
            row |= {"latency_profile": "seed_far_s3", "cell_id": f"{impl}-{stack}"}
            if stack != "current":
                row["stack"] = stack
            rows.append(row)
    return pd.DataFrame(rows)


def test_stack_note_names_the_servers_on_the_seed_stack_and_those_that_stayed():
    installed = {"installed": True, "python": "3.8.18"}
    both = stack_frame(
        {
            "grpcio_sync_w10": ["current", "seed000"],
            "grpclib_asyncio": ["current"],
        }
    )
    said = aws_io.stack_note(both, "seed000", installed)
    assert said.startswith("On seed000 on Python 3.8.18: grpcio_sync_w10 ran again (seed_far_s3)")
    assert "grpclib_asyncio did not" in said
    # Every server on it: nobody left out.
    all_on = stack_frame({"grpcio_sync_w10": ["current", "seed000"]})
    assert "did not" not in aws_io.stack_note(all_on, "seed000", installed)
    # The other way: a host without a Python for grpcio 1.28.1 says so, and why.
    missing = {"installed": False, "looked_for": ["python3.8"], "wheels_for": ["3.7", "3.8"]}
    current = stack_frame({"grpcio_sync_w10": ["current"], "grpclib_asyncio": ["current"]})
    said = aws_io.stack_note(current, "seed000", missing)
    assert said.startswith("No server ran on seed000: its grpcio has wheels for Python 3.7, 3.8")
    assert "(looked for python3.8)" in said and "not measured" in said
    # Installed, but the matrix ran no cell on it.
    assert "not in the matrix" in aws_io.stack_note(current, "seed000", installed)


def test_tables_keep_the_current_stack_and_label_the_seed_stacks_cells():
    frame = stack_frame({"grpcio_sync_w10": ["current", "seed000"]})
    frame["scenario"], frame["connections"] = "list_unary", 1
    kept = aws_io.study_frame(frame)
    assert list(kept["cell_id"]) == ["grpcio_sync_w10-current"]
    assert aws_io.on_stack({"implementation": "w10", "params": {"stack": "seed000"}}) == (
        "w10 (seed000)"
    )
    assert aws_io.on_stack({"implementation": "w10", "params": {}}) == "w10"
