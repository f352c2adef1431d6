"""pyclients study (seed 001): its matrix, and the analysis and findings on small frames."""

from __future__ import annotations

import pandas as pd
import pytest

from perflab.contract.matrix import MatrixError, expand
from perflab.studies import get_study
from perflab.studies.pyclients import analysis as pyclients
from tests.conftest import REPO, matrix_only, study_vars

KNOWN = {
    "cpp/numbers",
    "python/pyclient_grpc_aio",
    "python/pyclient_betterproto",
    "python/pyclient_betterproto2",
    "python/pyclient_grpcio_sync",
    "python/pyclient_grpc_aio_seed001",
    "python/pyclient_betterproto_seed001",
}


def cells(profile: str, **changes):
    matrix, profiles = study_vars("pyclients")
    matrix.update(changes)
    return matrix_only(expand("run1", get_study("pyclients"), matrix, profiles, profile, KNOWN))


def test_matrix_names_only_existing_folders():
    from perflab.host.impls import discover

    matrix, _ = study_vars("pyclients")
    known = set(discover(REPO / "servers"))
    named = {matrix["server"]["impl"]} | {c["impl"] for c in matrix["clients"].values()}
    named |= {impl for c in matrix["clients"].values() for impl in c.get("stacks", {}).values()}
    assert named <= known, f"matrix names folders without an impl.toml: {named - known}"
    impls = discover(REPO / "servers")
    for impl in named - {matrix["server"]["impl"]}:
        # Every option the study passes is one the client's impl.toml declares.
        assert {
            "scenario",
            "method",
            "loop",
            "seed_loops",
            "seed_repeats",
            "steady_calls",
            "warmup_calls",
        } <= set(impls[impl].options)


def test_quick_profile_runs_every_client_loop_scenario_and_method():
    quick = [c for c in cells("quick") if c.params["stack"] == "current"]
    # 7 client/loop pairs; seed on 2 scenarios, steady on 3; 3 repeats.
    assert len(quick) == 7 * (2 + 3) * 3
    assert len({c.cell_id for c in quick}) == len(quick)
    assert [c.repeat for c in quick] == sorted(c.repeat for c in quick)
    assert {c.scenario for c in quick if c.params["method"] == "steady"} == set(pyclients.SCENARIOS)
    assert {(c.client, c.params["loop"]) for c in quick} == {
        ("grpc_aio", "asyncio"),
        ("grpc_aio", "uvloop"),
        ("betterproto_grpclib", "asyncio"),
        ("betterproto_grpclib", "uvloop"),
        ("betterproto2_grpclib", "asyncio"),
        ("betterproto2_grpclib", "uvloop"),
        ("grpcio_sync", "none"),
    }
    cell = next(c for c in quick if c.cell_id == "grpc_aio-uvloop-request_reply-seed-r2")
    assert cell.load.kind == "client" and cell.load.client_impl == "python/pyclient_grpc_aio"
    assert cell.load.client_options == {
        "scenario": "request_reply",
        "method": "seed",
        "loop": "uvloop",
        "warmup_calls": 200,
        "seed_loops": 100,
        "seed_repeats": 5,
    }
    assert cell.server.impl == "cpp/numbers" and cell.implementation == "cpp_numbers"


def test_smoke_profile_is_one_short_cell_per_client_and_scenario():
    smoke = cells("smoke")
    # 4 clients on the current stack, the seed's 2 on its own stack (asyncio).
    assert len(smoke) == (4 + 2) * 2
    assert {(c.scenario, c.params["method"]) for c in smoke} == {
        ("request_reply", "seed"),
        ("stream_10", "steady"),
    }
    assert all(c.repeat == 1 for c in smoke)


def test_full_profile_expands():
    assert len(cells("full")) == (7 + 2) * 5 * 10


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"server": {"name": "x", "impl": "cpp/nope"}}, "perflab_matrix_pyclients.server.impl"),
        ({"server": "cpp/numbers"}, "perflab_matrix_pyclients.server"),
        (
            {"clients": {"x": {"impl": "python/nope", "loops": ["asyncio"]}}},
            "perflab_matrix_pyclients.clients.x.impl",
        ),
        (
            {"clients": {"x": {"impl": "python/pyclient_grpc_aio", "loops": ["trio"]}}},
            "perflab_matrix_pyclients.clients.x.loops",
        ),
        ({"run_clients": ["nope"]}, "perflab_matrix_pyclients.run_clients"),
        ({"run_loops": ["gevent"]}, "perflab_matrix_pyclients.run_loops"),
        ({"methods": {"fastest": ["request_reply"]}}, "perflab_matrix_pyclients.methods"),
        ({"methods": {"seed": ["stream_7"]}}, "perflab_matrix_pyclients.methods.seed"),
        (
            {"seed_loops": {"request_reply": 0, "stream_10": 100}},
            "perflab_matrix_pyclients.seed_loops.request_reply",
        ),
        (
            {"steady_calls": {"request_reply": 10, "stream_10": 10}},
            "perflab_matrix_pyclients.steady_calls.stream_100000",
        ),
        (
            {"warmup_calls": {"request_reply": -1, "stream_10": 0, "stream_100000": 0}},
            "perflab_matrix_pyclients.warmup_calls.request_reply",
        ),
        ({"seed_repeats": 0}, "perflab_matrix_pyclients.seed_repeats"),
        ({"repeats": 2.5}, "perflab_matrix_pyclients.repeats"),
        ({"timeout_s": "soon"}, "perflab_matrix_pyclients.timeout_s"),
        ({"run_loops": ["none"], "run_clients": ["grpc_aio"]}, "perflab_matrix_pyclients"),
        ({"stacks": ["seed002"]}, "perflab_matrix_pyclients.stacks"),
        ({"stack_loops": ["trio"]}, "perflab_matrix_pyclients.stack_loops"),
        (
            {
                "clients": {
                    "x": {
                        "impl": "python/pyclient_grpc_aio",
                        "loops": ["asyncio"],
                        "stacks": {"seed002": "python/pyclient_grpc_aio"},
                    }
                }
            },
            "perflab_matrix_pyclients.clients.x.stacks",
        ),
        (
            {
                "clients": {
                    "x": {
                        "impl": "python/pyclient_grpc_aio",
                        "loops": ["asyncio"],
                        "stacks": {"seed001": "python/nope"},
                    }
                }
            },
            "perflab_matrix_pyclients.clients.x.stacks.seed001",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_key(changes, key):
    with pytest.raises(MatrixError) as err:
        cells("quick", **changes)
    assert key in str(err.value)


# --- analysis on small frames -------------------------------------------------------------


def rows(client, loop, scenario, method, metric, values, unit="ms"):
    return [
        {
            "run_id": "r",
            "study": "pyclients",
            "scenario": scenario,
            "implementation": "cpp_numbers",
            "client": client,
            "loop": loop,
            "method": method,
            "repeat": i + 1,
            "metric": metric,
            "value": v,
            "unit": unit,
            "cell_id": f"{client}-{loop}-{scenario}-{method}-r{i + 1}",
            "status": "ok",
        }
        for i, v in enumerate(values)
    ]


def frame(*parts) -> pd.DataFrame:
    return pd.DataFrame([row for part in parts for row in part])


PUBLISHED = pd.read_csv(REPO / "data" / "reference" / "pyclients.csv")


def test_findings_rank_clients_and_call_out_the_method_flip():
    data = frame(
        rows("grpc_aio", "asyncio", "request_reply", "seed", "time_per_call", [3.0, 3.1, 2.9]),
        rows(
            "betterproto_grpclib",
            "asyncio",
            "request_reply",
            "seed",
            "time_per_call",
            [1.5, 1.4, 1.6],
        ),
        rows("grpc_aio", "asyncio", "request_reply", "steady", "time_per_call", [0.30, 0.31, 0.29]),
        rows(
            "betterproto_grpclib",
            "asyncio",
            "request_reply",
            "steady",
            "time_per_call",
            [0.80, 0.82, 0.78],
        ),
        rows("grpc_aio", "uvloop", "request_reply", "steady", "time_per_call", [0.36, 0.36, 0.36]),
    )
    text = pyclients.findings(pyclients.summarize(data))
    # Seed method: betterproto wins request-reply by 3.0 / 1.5 = 2.0x.
    assert "betterproto/grpclib is fastest" in text
    assert "2.0x faster than grpc.aio" in text
    # Steady state: grpc.aio wins by 0.8 / 0.3 = 2.7x, and the method flip is called out.
    assert "grpc.aio is fastest (grpc.aio 0.30 ms < betterproto/grpclib 0.80 ms" in text
    assert "2.7x faster than betterproto/grpclib" in text
    assert "the seed's method crowns betterproto/grpclib but steady state grpc.aio" in text
    assert "grpc.aio +20%" in text  # uvloop 0.36 vs 0.30 ms
    # What the verdict engine decides is not restated here.
    assert "seed's table" not in text and "README" not in text


def test_findings_say_when_the_intervals_overlap_and_when_a_single_repeat_differs():
    overlapping = frame(
        rows("grpc_aio", "asyncio", "stream_10", "steady", "time_per_call", [1.0, 1.3, 1.2]),
        rows(
            "betterproto_grpclib",
            "asyncio",
            "stream_10",
            "steady",
            "time_per_call",
            [1.1, 1.4, 1.3],
        ),
    )
    assert "(intervals overlap)" in pyclients.findings(pyclients.summarize(overlapping))
    single = frame(
        rows("grpc_aio", "asyncio", "stream_10", "steady", "time_per_call", [1.0]),
        rows("betterproto_grpclib", "asyncio", "stream_10", "steady", "time_per_call", [1.3]),
    )
    text = pyclients.findings(pyclients.summarize(single))
    assert "1.3x faster than betterproto/grpclib" in text and "overlap" not in text


def test_findings_on_an_empty_run_say_so():
    empty = pd.DataFrame(
        columns=[
            "study",
            "status",
            "metric",
            "value",
            "unit",
            "scenario",
            "method",
            "client",
            "loop",
        ]
    )
    assert "nothing to show" in pyclients.findings(pyclients.summarize(empty))


def test_failed_cells_and_other_studies_are_left_out():
    data = frame(
        rows("grpc_aio", "asyncio", "request_reply", "steady", "time_per_call", [1.0]),
        [
            {
                **rows("grpcio_sync", "none", "request_reply", "steady", "failed", [1.0], "cells")[
                    0
                ],
                "status": "failed",
            }
        ],
        [
            {
                **rows("grpc_aio", "asyncio", "request_reply", "steady", "time_per_call", [9.0])[0],
                "study": "hello",
            }
        ],
    )
    summary = pyclients.summarize(data)
    assert summary[["client", "metric", "median"]].values.tolist() == [
        ["grpc_aio", "time_per_call", 1.0]
    ]


def test_process_cpu_is_user_plus_system_from_gnu_time():
    data = frame(
        rows("grpc_aio", "asyncio", "stream_10", "seed", "client_cpu_user", [0.30], "s"),
        rows("grpc_aio", "asyncio", "stream_10", "seed", "client_cpu_system", [0.12], "s"),
        rows("grpc_aio", "asyncio", "stream_10", "seed", "client_max_rss", [40960], "KiB"),
    )
    table = pyclients.process_table(pyclients.summarize(data), "seed")
    assert table.loc[("stream_10", "grpc.aio"), "CPU (s)"] == pytest.approx(0.42)
    assert table.loc[("stream_10", "grpc.aio"), "max RSS (MiB)"] == 40.0


def test_published_numbers_are_matched_to_the_right_method():
    data = frame(
        rows("grpc_aio", "asyncio", "request_reply", "seed", "time_per_call", [1.49]),
        rows("grpc_aio", "asyncio", "request_reply", "steady", "time_per_call", [0.3]),
        rows("grpc_aio", "uvloop", "request_reply", "seed", "time_per_call", [9.0]),
        rows(
            "grpc_aio", "asyncio", "stream_100000", "steady", "numbers_per_s", [25000], "numbers/s"
        ),
        rows("grpc_aio", "asyncio", "request_reply", "seed", "client_max_rss", [40352], "KiB"),
    )
    table = pyclients.published_vs_measured(pyclients.summarize(data), PUBLISHED).set_index(
        ["scenario", "client", "metric"]
    )
    assert table.loc[("request_reply", "grpc_aio", "time_per_call"), "ratio"] == pytest.approx(0.5)
    assert table.loc[("request_reply", "grpc_aio", "max_rss"), "ratio"] == pytest.approx(1.0)
    row = table.loc[("stream_100000", "grpc_aio", "numbers_per_s")]
    assert row["our method"] == "steady" and row["ratio"] == pytest.approx(2.0)


def grpc_aio_seed(scenario: str, metric: str, values: list[float], unit: str) -> list[dict]:
    return rows("grpc_aio", "asyncio", scenario, "seed", metric, values, unit)


def test_process_counts_read_as_whole_numbers_and_memory_and_cpu_keep_decimals():
    data = frame(
        grpc_aio_seed("stream_10", "client_page_faults_minor", [6934.0], "count"),
        grpc_aio_seed("stream_10", "calls", [600.0], "calls"),
        grpc_aio_seed("stream_10", "client_max_rss", [40960.0], "KiB"),
        grpc_aio_seed("stream_10", "client_cpu_user", [1.0], "s"),
        grpc_aio_seed("stream_10", "client_cpu_system", [0.0], "s"),
    )
    shown = pyclients.process_table(pyclients.summarize(data), "seed").to_string()
    assert " 6934 " in shown and " 600" in shown and "6934.0" not in shown
    assert " 40.0 " in shown and " 1.0" in shown  # MiB and seconds: not counts


def test_published_table_shows_counts_whole_and_their_ratio_as_a_ratio():
    from perflab.analysis import tables

    switches = [5898.0, 5913.0, 5992.0]
    data = frame(
        grpc_aio_seed("request_reply", "time_per_call", [1.0, 1.2, 1.1], "ms"),
        grpc_aio_seed("request_reply", "client_ctx_switches_involuntary", switches, "count"),
        # Two repeats: the median 1.5 faults is no whole number and keeps its decimals.
        grpc_aio_seed("request_reply", "client_page_faults_major", [1.0, 2.0], "count"),
    )
    compared = pyclients.published_vs_measured(pyclients.summarize(data), PUBLISHED)
    table = pyclients.published_table(compared).set_index("metric")
    shown = tables.hide_index(table.loc[["ctx_switches_involuntary"]].reset_index()).to_html()
    # published 109, measured 5 913 [5 898 - 5 992]: whole numbers; their ratio 54.25 is not.
    for text in ("109", "5,913", "5,898", "5,992", "54.25"):
        assert f">{text}<" in shown, text
    assert ".00<" not in shown
    faults = table.loc["page_faults_major"]
    assert faults["measured"] == 1.5 and faults["published"] == 0
    assert table.loc["time_per_call", "measured"] == 1.1  # not a count: as it was
    assert compared["measured"].dtype == float  # the figures' numbers stay numbers
    # Each interval names its coverage and method; one repeat has none.
    assert table.loc["ctx_switches_involuntary", "interval"] == "75%, range of 3 repeats"
    assert table.loc["page_faults_major", "interval"].endswith("of 2 repeats")
    assert "ci_low" not in table.columns


def figure_calls(notebook: str) -> list[tuple[str, bool]]:
    """Every `plots.save` / `plots.show` call in a notebook's code cells, and whether it is
    the argument of `display` (the Agg backend shows nothing by itself)."""
    import ast
    import json

    cells = json.loads((REPO / "notebooks" / notebook).read_text())["cells"]
    found = []
    for cell in (c for c in cells if c["cell_type"] == "code"):
        tree = ast.parse("".join(cell["source"]))
        displayed = {
            id(arg)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "display"
            for arg in node.args
        }
        for node in ast.walk(tree):
            func = getattr(node, "func", None)
            if (
                isinstance(node, ast.Call)
                and isinstance(func, ast.Attribute)
                and getattr(func.value, "id", None) == "plots"
                and func.attr in ("save", "show")
            ):
                found.append((func.attr, id(node) in displayed))
    return found


def test_the_notebook_shows_every_figure_it_saves():
    """The published-vs-measured figures appear on the page, not only in figures/."""
    calls = figure_calls("pyclients.ipynb")
    assert calls, "the notebook makes no figure"
    assert calls == [("show", True)] * len(calls)


def test_a_small_ratio_keeps_two_significant_digits_and_a_large_one_two_decimals():
    from perflab.analysis import tables

    data = frame(
        grpc_aio_seed("request_reply", "time_per_call", [1.49], "ms"),
        # The seed's 53 936 voluntary switches against 63: 0.0012, which 2 decimals make 0.00.
        grpc_aio_seed("request_reply", "client_ctx_switches_voluntary", [63.0], "count"),
        grpc_aio_seed("request_reply", "client_ctx_switches_involuntary", [5913.0], "count"),
    )
    table = pyclients.published_table(
        pyclients.published_vs_measured(pyclients.summarize(data), PUBLISHED)
    )
    ratios = table.set_index("metric")["ratio"]
    assert ratios["ctx_switches_voluntary"] == "0.0012"
    assert ratios["time_per_call"] == "0.50"  # 1.49 / 2.98
    assert ratios["ctx_switches_involuntary"] == "54.25"  # 5 913 / 109
    shown = tables.hide_index(table).to_html()
    assert ">0.0012<" in shown and ">0.00<" not in shown
    assert [pyclients.ratio_text(r) for r in (0.05, 0.0996, 0.00038, 0.0, 1234.5)] == [
        "0.050",
        "0.10",
        "0.00038",
        "0.00",
        "1,234.50",
    ]
    assert pyclients.ratio_text(float("nan")) != pyclients.ratio_text(
        float("nan")
    )  # NaN stays NaN: "–"
