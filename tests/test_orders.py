"""orders study (seed 003): its matrix, and the analysis on small frames."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from perflab.analysis.frames import read_reference, read_run
from perflab.analysis.report import render
from perflab.analysis.run import read as read_folder
from perflab.contract.matrix import MatrixError, expand
from perflab.studies import get_study
from perflab.studies.orders import analysis as orders
from tests.conftest import REPO, matrix_only, overclaimed_intervals, study_vars

KNOWN = {"python/orders_server", "python/orders_client"}
FIXTURE = REPO / "tests" / "data" / "runs" / "orders_fixture"
REFERENCE = REPO / "data" / "reference"


def cells(profile: str, **changes):
    matrix, profiles = study_vars("orders")
    # Ansible fills this from the inventory (perflab_topology).
    matrix.update(topology="localhost")
    matrix.update(changes)
    return matrix_only(expand("run1", get_study("orders"), matrix, profiles, profile, KNOWN))


def test_matrix_names_existing_folders_and_options_they_take():
    from perflab.host.impls import discover

    impls = discover(REPO / "servers")
    matrix, _ = study_vars("orders")
    assert {matrix["server"]["impl"], matrix["client"]["impl"]} <= set(impls)
    for cell in cells("quick", tls_dir="/x"):
        assert set(cell.server.options) <= set(impls[cell.server.impl].options)
        assert set(cell.load.client_options) <= set(impls[cell.load.client_impl].options)


def test_quick_profile_crosses_modes_clients_and_security():
    every = [c for c in cells("quick") if c.params["client_order"] == "parallel"]
    repeats = study_vars("orders")[0]["repeats"]
    assert len({c.cell_id for c in every}) == len(every)
    # The seed-scale cells: unary and bidi at 1 000 clients, each on 1 000 threads.
    scale = [c for c in every if c.params["clients"] == 1000 == c.params["workers"]]
    assert sorted({(c.params["mode"], c.params["orders"]) for c in scale}) == [
        ("bidi", 10000),
        ("unary", 10000),
    ]
    assert len(scale) == 2 * repeats
    assert {(c.params["security"], c.params["latency_profile"]) for c in scale} == {
        ("plaintext", "none")
    }
    # The seed-server unary cells: 10 workers whatever the client count.
    quick = [c for c in every if "-w10" not in c.cell_id and c.params["orders"] == 1000]
    seed_server = [c for c in every if c not in quick and c not in scale]
    assert sorted(
        {
            (c.params["latency_profile"], c.params["clients"], c.params["orders"])
            for c in seed_server
        }
    ) == [
        ("lan", 10, 10000),
        ("lan", 100, 1000),
        ("lan", 100, 10000),
        ("lan", 1000, 1000),
        ("lan", 1000, 10000),
        ("none", 10, 10000),
        ("none", 100, 1000),
        ("none", 100, 10000),
        ("none", 1000, 1000),
        ("none", 1000, 10000),
        ("proxy_0ms", 10, 10000),
        ("proxy_0ms", 100, 1000),
        ("proxy_0ms", 100, 10000),
        ("proxy_0ms", 1000, 1000),
        ("proxy_0ms", 1000, 10000),
    ]
    assert len(seed_server) == 15 * repeats
    for cell in seed_server:
        assert cell.params["mode"] == "unary" and cell.params["security"] == "plaintext"
        assert cell.params["workers"] == cell.server.options["workers"] == 10
    assert "unary-plaintext-c100-n1000-w10-lan-r2" in {c.cell_id for c in seed_server}
    # modes x security x repeats x (clients 1/10/100 direct and through the proxy at 0 ms,
    # then the lan delay at its own sizes, 10 and 100 clients)
    assert len(quick) == 3 * 2 * repeats * (3 * 2 + 2)
    assert {c.params["latency_profile"] for c in quick} == {"none", "proxy_0ms", "lan"}
    lan = [c for c in quick if c.params["latency_profile"] == "lan"]
    assert {(c.params["clients"], c.params["orders"]) for c in lan} == {(10, 1000), (100, 1000)}
    assert len({c.cell_id for c in quick}) == len(quick)
    assert [c.repeat for c in quick] == sorted(c.repeat for c in quick)
    assert {c.params["mode"] for c in quick} == {"unary", "bidi", "bidi_pipelined"}
    assert {c.params["security"] for c in quick} == {"plaintext", "tls"}
    assert {c.scenario for c in quick} == {
        "localhost_unary",
        "localhost_bidi",
        "localhost_bidi_pipelined",
    }
    for cell in quick:
        assert cell.load.kind == "client"
        assert cell.server.options["security"] == cell.load.client_options["security"]
        # A stream holds a server thread, so every mode gets one worker per client at
        # least: unary and bidi then compare on the same server.
        assert cell.server.options["workers"] == max(10, cell.params["clients"])
        assert cell.params["workers"] == cell.server.options["workers"]
    for n_clients in (1, 10, 100):
        same = {c.params["workers"] for c in quick if c.params["clients"] == n_clients}
        assert len(same) == 1, (n_clients, same)


def test_quick_runs_a_sample_of_sequential_clients_on_the_seed_server():
    every = cells("quick")
    repeats = study_vars("orders")[0]["repeats"]
    sequential = [
        c for c in every if c.params["client_order"] == "sequential" and c.params["mode"] == "unary"
    ]
    assert {c.params["client_order"] for c in every} == {"parallel", "sequential"}
    assert sorted(
        {(c.params["latency_profile"], c.params["clients"], c.params["orders"]) for c in sequential}
    ) == [(p, n, 1000 * n) for p in ("lan", "none", "proxy_0ms") for n in (1, 5)]
    assert len(sequential) == 3 * 2 * repeats
    # Lock-step bidi runs sequentially too, without delay: the bidi claim's sequential reading.
    bidi = [
        c for c in every if c.params["client_order"] == "sequential" and c.params["mode"] == "bidi"
    ]
    assert sorted({(c.params["latency_profile"], c.params["clients"]) for c in bidi}) == [
        ("none", 1),
        ("none", 5),
    ]
    assert len(bidi) == 2 * repeats
    for cell in sequential:
        assert cell.params["security"] == "plaintext"
        assert cell.params["workers"] == cell.server.options["workers"] == 10
        assert cell.load.client_options["client_order"] == "sequential"
        assert "-seq" in cell.cell_id
    assert "unary-plaintext-c5-n5000-seq-lan-r1" in {c.cell_id for c in sequential}
    # Every orders cell says how its clients ran.
    for cell in every:
        assert cell.load.client_options["client_order"] == cell.params["client_order"]


def test_sequential_bidi_cells_run_lock_step_bidi_one_client_after_another():
    some = cells("quick", sequential_bidi_profiles=["none"], sequential_clients=[2])
    bidi = [
        c for c in some if c.params["client_order"] == "sequential" and c.params["mode"] == "bidi"
    ]
    assert {(c.params["latency_profile"], c.params["orders"]) for c in bidi} == {("none", 2000)}


def test_smoke_is_short_and_full_reaches_the_seed_sizes():
    smoke = cells("smoke")
    parallel = [c for c in smoke if c.params["client_order"] == "parallel"]
    assert len(parallel) == 2 * 2 * 2 and {c.params["orders"] for c in parallel} == {200}
    assert len(smoke) == len(parallel) + 1
    full = cells("full")
    assert max(c.params["clients"] for c in full if c.params["client_order"] == "sequential") == 100
    assert max(c.params["clients"] for c in full) == 10_000
    # The seed's --count reached 100 000; 1 000 sequential clients send 1 000 orders each.
    assert max(c.params["orders"] for c in full if c.params["client_order"] == "parallel") == (
        100_000
    )
    # A cell never has fewer orders than clients.
    assert all(c.params["orders"] >= c.params["clients"] for c in full)


def test_warmup_is_capped_over_all_clients_but_warms_each_connection():
    by_clients = {c.params["clients"]: c.load.client_options["warmup"] for c in cells("quick")}
    assert by_clients[1] == by_clients[10] == by_clients[100] == 10
    # 1 000 clients x 10 would be 10 000 discarded orders: one each instead.
    assert by_clients[1000] == 1
    tight = {
        c.params["clients"]: c.load.client_options["warmup"]
        for c in cells("quick", warmup_max_total=50)
    }
    assert (tight[1], tight[10], tight[100]) == (10, 5, 1)
    assert {c.load.client_options["warmup"] for c in cells("quick", warmup=0)} == {0}


def test_kept_servers_are_off_by_default_and_gathered_per_server_configuration_when_on():
    assert not any(c.reuse_server for c in cells("quick"))
    matrix, profiles = study_vars("orders")
    matrix.update(topology="localhost", reuse_servers=True)
    shared = expand("run1", get_study("orders"), matrix, profiles, "quick", KNOWN)
    aa = [c for c in shared if "aa" in c.params]
    assert {c.params["aa"] for c in aa if not c.reuse_server} == {"a"}
    round_one = [c.server_key() for c in shared if c.repeat == 1 and c.reuse_server]
    blocks = [k for i, k in enumerate(round_one) if i == 0 or round_one[i - 1] != k]
    assert len(blocks) == len(set(round_one)) > 1
    # A delay sits between client and server, never in front of what the server calls.
    assert all(c.shares_server() for c in shared if c.reuse_server)


def test_tls_dir_and_latency_profiles_reach_the_cells():
    some = cells(
        "quick",
        tls_dir="/certs",
        latency_profiles=["none", "lan"],
        seed_unary_profiles=["none", "lan"],
        sequential_profiles=["lan"],
    )
    assert {c.params["latency_profile"] for c in some} == {"none", "lan"}
    # A delayed profile runs its own sizes; the runner puts the profile's proxy between the
    # client and the server (a latency_proxies entry for the load), the client knows nothing.
    lan = [c for c in some if c.params["latency_profile"] == "lan"]
    assert {c.params["clients"] for c in lan if c.params["client_order"] == "parallel"} == {
        10,
        100,
        1000,
    }
    assert all(c.latency_proxies == [{"caller": "load", "one_way_ms": 0.5}] for c in lan)
    assert all(c.latency_proxies == [] for c in some if c.params["latency_profile"] == "none")
    assert all("latency_profile" not in c.load.client_options for c in some)
    assert all(
        c.server.options["tls_dir"] == "/certs" == c.load.client_options["tls_dir"] for c in some
    )
    assert any(c.cell_id.endswith("-lan-r1") for c in some)


def test_netns_cells_are_named_for_their_topology():
    # Where the server runs is the runner's business (perflab.host.agent on the servers host);
    # the cells only carry the topology, so localhost and netns rows sit apart in the data.
    for cell in cells("smoke", topology="netns"):
        assert cell.scenario.startswith("netns_") and cell.params["topology"] == "netns"
        assert cell.server.host == "127.0.0.1" and cell.server.port == 0


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"modes": ["unary", "oneway"]}, "perflab_matrix_orders.modes"),
        ({"security": ["ssl"]}, "perflab_matrix_orders.security"),
        ({"clients": [0]}, "perflab_matrix_orders.clients"),
        ({"orders": [5], "clients": [10]}, "perflab_matrix_orders.orders"),
        ({"workers": 0}, "perflab_matrix_orders.workers"),
        ({"warmup": -1}, "perflab_matrix_orders.warmup"),
        ({"latency_profiles": ["moon"]}, "perflab_matrix_orders.latency_profiles"),
        ({"server": {"name": "x", "impl": "python/nope"}}, "perflab_matrix_orders.server"),
        ({"timeout_s": 0}, "perflab_matrix_orders.timeout_s"),
        ({"delayed_orders": [1], "delayed_clients": [10]}, "perflab_matrix_orders.delayed_orders"),
        ({"sequential_profiles": ["moon"]}, "perflab_matrix_orders.sequential_profiles"),
        ({"sequential_clients": [0]}, "perflab_matrix_orders.sequential_clients"),
        (
            {"sequential_orders_per_client": 0},
            "perflab_matrix_orders.sequential_orders_per_client",
        ),
        ({"sequential_bidi_profiles": ["x"]}, "perflab_matrix_orders.sequential_bidi_profiles"),
    ],
)
def test_bad_values_are_refused_naming_the_key(changes, key):
    with pytest.raises(MatrixError, match=key.replace(".", r"\.")):
        cells("quick", **changes)


def rows(values: dict[tuple[str, str, int], dict[str, float]]) -> pd.DataFrame:
    """A read_run()-shaped frame: (mode, security, clients) -> {metric: value}, one repeat."""
    out = []
    for (mode, security, clients), metrics in values.items():
        for metric, value in metrics.items():
            out.append(
                {
                    "run_id": "r",
                    "study": "orders",
                    "scenario": f"localhost_{mode}",
                    "implementation": "grpcio_python",
                    "client": "grpcio_python",
                    "mode": mode,
                    "security": security,
                    "clients": clients,
                    "orders": 1000,
                    "workers": 10,
                    "topology": "localhost",
                    "latency_profile": "none",
                    "repeat": 1,
                    "metric": metric,
                    "value": value,
                    "unit": "us" if metric.startswith("rtt") else "s",
                    "cell_id": f"{mode}-{security}-{clients}",
                    "status": "ok",
                }
            )
    return pd.DataFrame(out)


def test_slowdowns_pair_modes_only_on_the_same_workers():
    same = rows(
        {
            ("unary", "plaintext", 1): {"elapsed_per_1000_orders": 0.25},
            ("bidi", "plaintext", 1): {"elapsed_per_1000_orders": 0.6},
        }
    )
    table = orders.slowdowns(orders.summarize(same))
    assert table["bidi / unary"].tolist() == [pytest.approx(2.4)]
    # The old confounded pair (bidi on more workers than unary) is no pair at all.
    confounded = same.assign(workers=same["mode"].map({"unary": 10, "bidi": 100}))
    assert orders.slowdowns(orders.summarize(confounded)).empty


def test_study_rows_keep_orders_rows_beside_another_studys_empty_columns():
    """A whole run's frame has every study's parameters; orders rows have them empty
    (NaN), which must not drop the rows when the CPU per order is derived."""
    frame = rows({("unary", "plaintext", 10): {"server_cpu_seconds": 0.2, "orders_ok": 1000}})
    other = frame.iloc[:1].assign(study="hello", metric="rps", value=5.0, concurrency=2)
    run = pd.concat([frame, other], ignore_index=True)  # concurrency: NaN on orders rows
    assert run.loc[run["study"] == "orders", "concurrency"].isna().all()
    summary = orders.summarize(run)
    cpu = summary[summary["metric"] == "server_cpu_us_per_order"]
    assert cpu["median"].tolist() == [pytest.approx(200.0)]
    table = orders.metric_table(summary, "server_cpu_us_per_order")
    assert len(table) == 1


def test_latency_table_shows_only_percentiles_the_orders_support():
    few = rows(
        {("unary", "plaintext", 1): {"rtt_p99": 900.0, "rtt_p999": 950.0, "orders_ok": 1000}}
    )
    table = orders.latency_table(orders.summarize(few))
    assert "p99" in table and "p999" not in table
    assert orders.tail_table(orders.summarize(few)).empty  # p99.9 of 1 000 is the maximum
    many = few.assign(value=few["value"].where(few["metric"] != "orders_ok", 20_000.0))
    # p99.9 has its own table, of the configurations that support it, never a column here.
    assert "p999" not in orders.latency_table(orders.summarize(many))
    assert orders.tail_table(orders.summarize(many))["rtt"].tolist() == [950.0]
    too_few = few.assign(value=few["value"].where(few["metric"] != "orders_ok", 200.0))
    assert "p99" not in orders.latency_table(orders.summarize(too_few))


def test_server_cpu_per_order_and_tls_cost():
    frame = rows(
        {
            ("unary", "plaintext", 10): {
                "server_cpu_seconds": 0.2,
                "orders_ok": 1000,
                "rtt_p50": 100.0,
                "orders_per_s": 4000.0,
            },
            ("unary", "tls", 10): {
                "server_cpu_seconds": 0.3,
                "orders_ok": 1000,
                "rtt_p50": 150.0,
                "orders_per_s": 2000.0,
            },
        }
    )
    summary = orders.summarize(frame)
    cpu = summary[summary["metric"] == "server_cpu_us_per_order"].set_index("security")
    assert cpu.loc["plaintext", "median"] == pytest.approx(200.0)
    assert cpu.loc["tls", "median"] == pytest.approx(300.0)
    table = orders.tls_cost(summary)
    assert table.columns.name is None  # no stray header above the row index
    cost = table.reset_index().set_index("metric")["tls / plaintext"]
    assert cost["rtt p50 (us)"] == pytest.approx(1.5)
    assert cost["orders per second (1/s)"] == pytest.approx(0.5)


def test_failed_cells_and_other_studies_are_left_out():
    frame = rows({("unary", "plaintext", 1): {"elapsed_per_1000_orders": 0.25}})
    failed = frame.assign(status="failed", metric="failed", value=1.0)
    other = frame.assign(study="hello")
    assert len(orders.study_rows(pd.concat([frame, failed, other]))) == len(frame)


def test_published_runs_are_per_1000_orders():
    runs = orders.published_runs(read_reference(REFERENCE, "orders")).set_index(
        ["scenario", "clients", "orders"]
    )
    assert runs.loc[("localhost_unary", 1000, 100000), "per_1000_orders_s"] == pytest.approx(
        0.275429
    )
    assert runs.loc[("localhost_bidi", 10000, 1000), "runs"] == 13
    # The 100 000-client log counts once, at the furthest point the seed showed.
    assert runs.loc[("localhost_unary", 100000, 10000), "elapsed_s"] == pytest.approx(2.6195)
    assert orders.published_claims(read_reference(REFERENCE, "orders")) == {
        "unary": 0.25,
        "bidi": 0.6,
        "claim_slowdown_vs_unary": 2.0,
    }


def test_fixture_run_is_a_real_smoke_run_with_every_order_answered():
    frame = read_run(FIXTURE)
    assert set(frame["study"]) == {"orders"} and "failed" not in set(frame["metric"])
    ok = frame[frame["metric"] == "orders_ok"]
    assert (ok["value"] == ok["orders"]).all()
    assert (frame[frame["metric"] == "stamp_violations"]["value"] == 0).all()
    cdfs = orders.load_cdfs(read_folder(FIXTURE))
    assert set(cdfs["latency"]) == {"rtt", "oneway_request", "oneway_reply"}
    assert set(cdfs["mode"]) == {"unary", "bidi"} and set(cdfs["security"]) == {"plaintext", "tls"}
    client = json.loads(next(FIXTURE.glob("orders/*/client.json")).read_text())
    assert client["errors"] == {}


@pytest.mark.live
@pytest.mark.slow
def test_notebook_executes_on_the_fixture_run(tmp_path):
    params = {"run_dir": str(FIXTURE), "reference_dir": str(REFERENCE), "out_dir": str(tmp_path)}
    html = render(REPO / "notebooks" / "orders.ipynb", tmp_path, params, "orders")
    page = html.read_text()
    assert "bidi / unary" in page
    assert overclaimed_intervals(page) == []
    assert "Traceback" not in page
    for figure in (
        "orders_cdf_rtt_plaintext",
        "orders_rtt_p50_vs_clients",
        "orders_published_per_1000",
    ):
        assert (tmp_path / "figures" / f"{figure}.png").is_file()


def test_proxy_overhead_is_through_the_proxy_minus_direct():
    direct = rows({("unary", "plaintext", 1): {"rtt_p50": 300.0, "rtt_p99": 900.0}})
    proxied = direct.assign(latency_profile="proxy_0ms", value=direct["value"] + 150.0)
    table = orders.proxy_overhead(orders.summarize(pd.concat([direct, proxied]))).set_index(
        "metric"
    )
    assert table.loc["rtt_p50", "added by the proxy (us)"] == pytest.approx(150.0)
    assert table.loc["rtt_p99", "direct (us)"] == pytest.approx(900.0)
    assert orders.proxy_overhead(orders.summarize(direct)).empty


def test_cpu_note_says_what_server_cpu_per_order_shows_either_way():
    cheap_stream = rows(
        {
            ("unary", "plaintext", 1): {
                "elapsed_per_1000_orders": 0.3,
                "server_cpu_seconds": 0.2,
                "orders_ok": 1000,
            },
            ("bidi", "plaintext", 1): {
                "elapsed_per_1000_orders": 0.2,
                "server_cpu_seconds": 0.1,
                "orders_ok": 1000,
            },
        }
    )
    note = orders.cpu_per_order_note(orders.summarize(cheap_stream))
    assert "100 us of CPU per order in a lock-step stream and 200 us per unary call" in note
    assert "skips the per-call work" in note
    dear = cheap_stream.copy()
    dear.loc[dear["metric"] == "server_cpu_seconds", "value"] = [0.2, 0.4]
    assert "costs the server more" in orders.cpu_per_order_note(orders.summarize(dear))
    same = cheap_stream.copy()
    same.loc[same["metric"] == "server_cpu_seconds", "value"] = 0.2
    assert "does not explain" in orders.cpu_per_order_note(orders.summarize(same))
    only_unary = cheap_stream[cheap_stream["mode"] == "unary"]
    assert orders.cpu_per_order_note(orders.summarize(only_unary)) == ""


def test_proxy_overhead_note_says_when_noise_exceeds_the_proxys_cost():
    direct = rows(
        {
            ("unary", "tls", 100): {"rtt_p50": 10_000.0, "rtt_p99": 150_694.0},
            ("unary", "plaintext", 1): {"rtt_p50": 400.0, "rtt_p99": 1_000.0},
        }
    )
    slower = direct.assign(latency_profile="proxy_0ms", value=direct["value"] + 100.0)
    table = orders.proxy_overhead(orders.summarize(pd.concat([direct, slower])))
    assert orders.proxy_overhead_note(table) == ""
    # The far tail of one configuration came out faster through the proxy than direct.
    faster = slower.copy()
    tail = (faster["metric"] == "rtt_p99") & (faster["clients"] == 100)
    faster.loc[tail, "value"] = 44_907.0
    table = orders.proxy_overhead(orders.summarize(pd.concat([direct, faster])))
    note = orders.proxy_overhead_note(table)
    assert note.startswith(
        "1 of 4 differences are negative (rtt_p50: 0 of 2; rtt_p99: 1 of 2), down to "
        "-106,000 us (unary tls 100 clients 10 workers rtt_p99: 151,000 direct, 44,900 "
        "through the proxy)."
    )
    assert "the noise between runs exceeds the proxy's cost" in note
    assert orders.proxy_overhead_note(orders.proxy_overhead(orders.summarize(direct))) == ""


def test_cpu_note_names_the_latency_profile_it_is_about_and_those_it_leaves_to_the_table():
    cells = {
        ("unary", "plaintext", 1): {"server_cpu_seconds": 0.2, "orders_ok": 1000},
        ("bidi", "plaintext", 1): {"server_cpu_seconds": 0.1, "orders_ok": 1000},
    }
    direct = rows(cells)
    note = orders.cpu_per_order_note(orders.summarize(direct))
    assert note.startswith(
        "In the cells of latency profile none (direct, no proxy), the server spent a median "
        "100 us of CPU per order in a lock-step stream and 200 us per unary call"
    )
    lan = direct.assign(latency_profile="lan")
    lan.loc[lan["metric"] == "server_cpu_seconds", "value"] = [0.3, 0.6]
    both = orders.summarize(pd.concat([direct, lan]))
    # The direct numbers still, and the table's other profile named, not mixed in.
    note = orders.cpu_per_order_note(both)
    assert note.startswith(
        "In the cells of latency profile none (direct, no proxy), not those of lan in the "
        "table above, the server spent a median 100 us"
    )
    note = orders.cpu_per_order_note(both, "lan")
    assert note.startswith(
        "In the cells of latency profile lan (through Toxiproxy, 0.5 ms each way), not those "
        "of none in the table above, the server spent a median 600 us"
    )


def test_clients_and_cdf_figures_name_their_latency_profile_in_the_title():
    summary = orders.summarize(rows({("unary", "plaintext", 1): {"rtt_p50": 400.0}}))
    lan = summary.assign(latency_profile="lan", median=summary["median"] * 3)
    both = pd.concat([summary, lan], ignore_index=True)
    assert orders.latency_vs_clients(both, "rtt_p50")["median"].tolist() == [400.0]
    assert orders.latency_vs_clients(both, "rtt_p50", "lan")["median"].tolist() == [1200.0]
    assert orders.vs_clients_title("rtt_p50") == (
        "orders: rtt_p50 vs clients\nlatency profile none (direct, no proxy)"
    )
    assert orders.vs_clients_title("rtt_p50", "proxy_0ms").endswith(
        "latency profile proxy_0ms (through Toxiproxy, no delay)"
    )
    cdfs = orders.load_cdfs(read_folder(FIXTURE))
    title = orders.cdf_figure(cdfs, "rtt", "plaintext").axes[0].get_title()
    assert title == "Latency CDF per order (rtt, plaintext, repeat 1)\n" + orders.profile_words(
        "none"
    )
    assert orders.profile_words("none") == "latency profile none (direct, no proxy)"
