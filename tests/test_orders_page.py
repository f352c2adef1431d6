"""The orders page's tables, figures and generated sentences (perflab.studies.orders.analysis):
each sentence is checked on a case where it must come out the other way too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perflab.analysis import frames
from perflab.studies.orders import analysis as orders
from tests.conftest import REPO


def cell(
    metrics: dict[str, float],
    repeats: int = 5,
    mode: str = "unary",
    security: str = "plaintext",
    clients: int = 10,
    orders_: int = 1000,
    workers: int = 10,
    latency_profile: str = "none",
    client_order: str = orders.PARALLEL,
) -> pd.DataFrame:
    """A read_run()-shaped frame of one configuration: `repeats` repeats of `metrics`, each
    repeat 1% above the last around the given value, their median (so the repeats have an
    interval); the orders counted are the same in every repeat."""
    rows = []
    for repeat in range(1, repeats + 1):
        for metric, value in metrics.items():
            rows.append(
                {
                    "study": "orders",
                    "mode": mode,
                    "security": security,
                    "clients": clients,
                    "orders": orders_,
                    "workers": workers,
                    "topology": "localhost",
                    "latency_profile": latency_profile,
                    "client_order": client_order,
                    "repeat": repeat,
                    "metric": metric,
                    "value": value
                    if metric == "orders_ok"
                    else value * (1 + 0.01 * (repeat - (repeats + 1) / 2)),
                    "unit": "us" if metric.startswith(("rtt", "oneway")) else "s",
                    "cell_id": f"{mode}-{security}-c{clients}-w{workers}-r{repeat}",
                    "status": "ok",
                }
            )
    return pd.DataFrame(rows)


def summary_of(*cells: pd.DataFrame, order: str = orders.PARALLEL) -> pd.DataFrame:
    return orders.summarize(pd.concat(cells, ignore_index=True), order)


ELAPSED = {"elapsed_per_1000_orders": 0.4}


def test_the_sequential_cells_get_their_own_interval_label_not_the_parallel_ones():
    parallel = summary_of(cell(ELAPSED))
    seq = [
        cell(ELAPSED, 10, clients=1, client_order=orders.SEQUENTIAL),
        cell(ELAPSED, 5, mode="bidi", clients=1, client_order=orders.SEQUENTIAL),
    ]
    sequential = summary_of(*seq, order=orders.SEQUENTIAL)
    sentence = orders.run_interval_sentence(parallel, sequential)
    assert sentence.startswith(
        "Intervals of the parallel cells: the range of the 5 repeats, which covers the median "
        "with 93% probability. Of the sequential cells: the range of the 5 repeats"
    )
    assert "from 10 repeats, which covers the median with 97% probability" in sentence
    assert sentence.endswith("Their table names each row's.")
    # Sequential cells all of ten repeats: one label is true of every row.
    uniform = summary_of(seq[0], order=orders.SEQUENTIAL)
    sentence = orders.run_interval_sentence(parallel, uniform)
    assert "93%" in sentence.split(". Of")[0] and "Their table" not in sentence
    assert orders.run_interval_sentence(parallel, uniform.iloc[0:0]).count("Intervals") == 1


def test_a_table_mixing_repeat_counts_labels_each_row():
    mixed = summary_of(
        cell(ELAPSED, 10, clients=1, client_order=orders.SEQUENTIAL),
        cell(ELAPSED, 5, mode="bidi", clients=1, client_order=orders.SEQUENTIAL),
        order=orders.SEQUENTIAL,
    )
    table = orders.metric_table(mixed, "elapsed_per_1000_orders", 3)
    labels = table["interval"].reset_index().set_index("mode")["interval"]
    assert labels.to_dict() == {
        "bidi": "93%, range of 5 repeats",
        "unary": "97%, order statistics of 10 repeats",
    }
    note = orders.metric_note(mixed, "elapsed_per_1000_orders")
    assert note.endswith("the `interval` column names each row's.")
    uniform = summary_of(cell(ELAPSED), cell(ELAPSED, mode="bidi"))
    assert "interval" not in orders.metric_table(uniform, "elapsed_per_1000_orders")
    note = orders.metric_note(uniform, "elapsed_per_1000_orders")
    assert note == (
        "Intervals in this table: the range of the 5 repeats, which covers the median with "
        "93% probability."
    )


def test_a_row_whose_security_modes_differ_names_each():
    summary = summary_of(cell(ELAPSED), cell(ELAPSED, 3, security="tls"))
    table = orders.metric_table(summary, "elapsed_per_1000_orders")
    assert table["interval"].tolist() == [
        "plaintext: 93%, range of 5 repeats; tls: 75%, range of 3 repeats"
    ]


TLS_METRICS = {"rtt_p50": 910995.707, "rtt_p99": 2_000_000.0, "orders_per_s": 3000.0}


def test_tls_cost_leaves_out_configurations_run_one_way_and_says_how_many():
    both = [cell(TLS_METRICS), cell(TLS_METRICS, security="tls")]
    plain_only = [cell(TLS_METRICS, clients=1000), cell(TLS_METRICS, clients=100)]
    summary = summary_of(*both, *plain_only)
    table = orders.tls_cost(summary)
    assert len(table) == 3 and not table.isna().any().any()
    assert orders.tls_unpaired_sentence(summary) == (
        "Of the 3 configurations, 2 ran in plaintext only: these have no TLS counterpart and "
        "are left out of the table."
    )
    assert orders.tls_unpaired_sentence(summary_of(*both)) == ""
    one_tls = summary_of(*both, cell(TLS_METRICS, security="tls", clients=5))
    assert orders.tls_unpaired_sentence(one_tls) == (
        "Of the 2 configurations, 1 ran in TLS only: it has no plaintext counterpart and is "
        "left out of the table."
    )
    shown = orders.shown(table)
    assert shown["plaintext"].tolist()[1] == "911,000"  # rtt p50, three figures


def test_pipelined_round_trips_are_said_to_measure_the_queue_not_tls():
    fast_plain = {**TLS_METRICS, "rtt_p50": 14300.0}
    queued_less = {**TLS_METRICS, "rtt_p50": 394.0}
    pipelined = summary_of(
        cell(fast_plain, mode="bidi_pipelined"),
        cell(queued_less, mode="bidi_pipelined", security="tls"),
    )
    said = orders.tls_pipelined_sentence(orders.tls_cost(pipelined))
    assert "measure that queue, not what TLS costs an order" in said
    assert "(0.0276 to 1 here)" in said  # rtt p50 394/14300, rtt p99 equal
    # Turned around: without pipelined rows there is nothing to explain.
    lock_step = summary_of(
        cell(TLS_METRICS, mode="bidi"), cell(TLS_METRICS, mode="bidi", security="tls")
    )
    assert orders.tls_pipelined_sentence(orders.tls_cost(lock_step)) == ""


def test_tls_cost_keeps_configurations_of_other_workers_apart():
    summary = summary_of(
        cell(TLS_METRICS, clients=100, workers=10),
        cell(TLS_METRICS, clients=100, workers=10, security="tls"),
        cell({**TLS_METRICS, "rtt_p50": 5.0}, clients=100, workers=100),
        cell({**TLS_METRICS, "rtt_p50": 5.0}, clients=100, workers=100, security="tls"),
    )
    rtt = orders.tls_cost(summary).xs("rtt p50 (us)", level="metric")
    assert sorted(rtt["plaintext"]) == [pytest.approx(5.0), pytest.approx(910995.707)]


def test_slowdowns_say_not_run_where_a_mode_did_not_run():
    summary = summary_of(
        cell(ELAPSED, clients=1000, workers=1000),
        cell(ELAPSED, mode="bidi", clients=1000, workers=1000),
        cell(ELAPSED),
        cell(ELAPSED, mode="bidi"),
        cell(ELAPSED, mode="bidi_pipelined"),
    )
    shown = orders.slowdowns_shown(summary).reset_index().set_index("clients")
    assert shown.loc[1000, "bidi_pipelined / unary"] == "not run"
    assert shown.loc[1000, "bidi_pipelined (s per 1000 orders)"] == "not run"
    assert shown.loc[10, "bidi_pipelined / unary"] == "1.00"
    assert "NaN" not in shown.to_string()


LATENCIES = {
    f"{name}_{q}": 100.0 * (i + 1)
    for name in orders.LATENCY_METRICS
    for i, q in enumerate(("p50", "p90", "p99", "p999", "max"))
} | {"orders_per_s": 4000.0}


def test_latency_tables_leave_p999_to_a_table_of_the_cells_that_support_it():
    few = cell({**LATENCIES, "orders_ok": 1000})
    many = cell({**LATENCIES, "orders_ok": 10_000}, orders_=10_000)
    proxied = cell({**LATENCIES, "orders_ok": 10_000}, orders_=10_000, latency_profile="lan")
    summary = summary_of(few, many, proxied)
    for name in orders.LATENCY_METRICS:
        heading, table = orders.latency_section(summary, name)
        assert list(table.columns) == ["p50", "p90", "p99", "max", "orders/s"]
        assert len(table) == (3 if name == "rtt" else 2)  # one-way: direct cells only
        assert ("direct cells only" in heading) == (name != "rtt")
    tail = orders.tail_table(summary)
    assert list(tail.index.get_level_values("orders")) == [10_000, 10_000]
    assert tail.xs("lan", level="latency_profile")["oneway_request"].isna().all()
    heading, shown = orders.tail_section(summary)
    assert "every row: topology localhost" in heading and "orders 10000" in heading
    assert "orders" not in shown.index.names  # the same in every row: said once, above


def test_percentile_sentence_says_where_p999_is_shown_or_that_it_is_not():
    few = cell({**LATENCIES, "orders_ok": 1000})
    many = cell({**LATENCIES, "orders_ok": 10_000}, orders_=10_000)
    sentence = orders.percentile_sentence(summary_of(few, many))
    assert "needs 10,000 orders in a cell" in sentence
    assert "shows it for the 1 of 2 configurations that timed that many." in sentence
    assert "p99 needs" not in sentence
    none = orders.percentile_sentence(summary_of(few))
    assert "no configuration here timed that many (at most 1,000)" in none
    tiny = orders.percentile_sentence(summary_of(cell({**LATENCIES, "orders_ok": 200})))
    assert tiny.endswith("p99 needs 1,000: it shows as – for the 1 configuration that timed fewer.")


def test_compact_drops_only_the_levels_every_row_shares():
    table = pd.DataFrame(
        {"v": [1.0, 2.0]},
        index=pd.MultiIndex.from_tuples([("a", 1), ("a", 2)], names=["topology", "clients"]),
    )
    compacted, fixed = orders.compact(table)
    assert list(compacted.index) == [1, 2] and fixed == {"topology": "a"}
    assert orders.fixed_words(fixed) == "every row: topology a"
    one_row, nothing = orders.compact(table.iloc[:1])
    assert one_row.index.nlevels == 2 and nothing == {}


def test_published_rows_that_differ_only_in_workers_are_told_apart():
    published = frames.read_reference(REPO / "data" / "reference", "orders")
    summary = summary_of(
        cell(ELAPSED, clients=100, workers=10),
        cell(ELAPSED, clients=100, workers=100),
        cell(ELAPSED, 10, mode="bidi", clients=100, workers=100),
    )
    compared = orders.published_vs_measured(summary, published)
    assert compared["workers"].tolist() == [100, 10, 100]
    assert compared["label"].tolist() == [
        "bidi stream, lock-step, 100 clients x 1000 orders, 100 workers",
        "unary, 100 clients x 1000 orders, 10 workers",
        "unary, 100 clients x 1000 orders, 100 workers",
    ]
    shown = orders.published_shown(compared)
    assert shown.index.names == orders.PUBLISHED_KEYS and shown.index.is_unique
    assert shown["interval"].tolist()[0] == "97%, order statistics of 10 repeats"
    uniform = orders.published_vs_measured(summary_of(cell(ELAPSED)), published)
    assert "interval" not in orders.published_shown(uniform)


def cdf_points(**params) -> list[dict]:
    """A cell's CDF points, shuffled: the figure must sort them itself."""
    quantiles = np.linspace(0, 1, 21)
    latencies = 100 * (1 + quantiles) * params.get("workers", 10)
    order = np.random.default_rng(0).permutation(len(quantiles))
    base = {
        "client_order": orders.PARALLEL,
        "latency_profile": "none",
        "security": "plaintext",
        "topology": "localhost",
        "orders": 1000,
        "workers": 10,
        "repeat": 1,
        "latency": "rtt",
    } | params
    return [base | {"quantile": quantiles[i], "us": latencies[i]} for i in order]


def test_cdf_draws_one_sorted_line_per_configuration_in_distinct_styles():
    points = []
    for clients in (1, 5, 10, 100, 1000):
        for workers in (10, 1000):
            for mode in orders.MODE_STYLES:
                points += cdf_points(mode=mode, clients=clients, workers=workers)
    points += cdf_points(mode="unary", clients=1, client_order=orders.SEQUENTIAL)
    cdfs = pd.DataFrame(points)
    fig = orders.cdf_figure(cdfs)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 30  # the sequential cell is not one of them
    for line in lines:  # a CDF rises: no zig-zag between two cells' points
        assert (np.diff(line.get_xdata()) >= 0).all() and (np.diff(line.get_ydata()) >= 0).all()
    styles = {(line.get_color(), line.get_linestyle()) for line in lines}
    assert len(styles) == len(lines)
    assert len({line.get_color() for line in lines}) == len(lines)
    legend = ax.get_legend()
    assert legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1  # beside the axes
    caption = orders.cdf_caption(cdfs)
    assert "(30 in plaintext)" in caption and "dashed bidi stream, lock-step" in caption
    assert orders.cdf_caption(cdfs.iloc[0:0]) == "No cell kept its latency CDF."


def test_clients_figure_has_one_point_per_series_and_clients():
    summary = summary_of(
        cell({"rtt_p50": 1.0}, clients=1000, orders_=1000, workers=10),
        cell({"rtt_p50": 2.0}, clients=1000, orders_=10_000, workers=10),
        cell({"rtt_p50": 3.0}, clients=1000, orders_=10_000, workers=1000),
        cell({"rtt_p50": 4.0}, clients=10, orders_=1000, workers=10),
        cell({"rtt_p50": 5.0}, clients=10, orders_=1000, workers=100),
    )
    rows = orders.latency_vs_clients(summary, "rtt_p50")
    assert not rows.duplicated(["series", "clients"]).any()
    fig = orders.vs_clients_figure(rows, "rtt_p50", "us")
    ax = fig.axes[0]
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1
    note = orders.vs_clients_note(summary)
    assert note.endswith(
        "error bars: the range of the 5 repeats, which covers the median with 93% probability."
    )
    one = orders.vs_clients_note(summary_of(cell({"rtt_p50": 1.0}, 1)))
    assert "error bars: none, one repeat per cell" in one


def test_workers_sentence_says_which_cells_run_fewer_workers_than_clients():
    seed_server = summary_of(
        cell(ELAPSED, clients=1000, workers=10),
        cell(ELAPSED, clients=100, workers=100),
        cell(ELAPSED, mode="bidi", clients=100, workers=100),
    )
    sentence = orders.workers_sentence(seed_server)
    assert "the 1 bidi configuration runs at least one worker per client" in sentence
    assert (
        "1 of the 2 unary configurations run fewer workers than clients (1,000 clients on 10 "
        "workers: the seed's own server), the rest at least one per client"
    ) in sentence
    per_client = summary_of(
        cell(ELAPSED, clients=100, workers=100),
        cell(ELAPSED, mode="bidi", clients=100, workers=10),
    )
    sentence = orders.workers_sentence(per_client)
    assert "the 1 unary configuration runs at least one worker per client" in sentence
    assert "1 of the 1 bidi configurations run fewer workers than clients" in sentence
    assert "so their streams wait for a thread" in sentence
    other_server = summary_of(cell(ELAPSED, clients=1000, workers=50))
    sentence = orders.workers_sentence(other_server)
    assert "(1,000 clients on 50 workers), the rest" in sentence and "seed" not in sentence
    assert "bidi" not in sentence.split(". The")[0]  # no bidi cell, nothing said of them
    assert orders.workers_sentence(seed_server.iloc[0:0]) == ""


def test_sequential_sentence_names_what_the_sequential_cells_ran():
    sequential = summary_of(
        cell(ELAPSED, clients=1, client_order=orders.SEQUENTIAL),
        cell(ELAPSED, mode="bidi", clients=5, client_order=orders.SEQUENTIAL),
        order=orders.SEQUENTIAL,
    )
    assert orders.sequential_sentence(sequential) == (
        "The sequential cells (2 configurations) ran bidi stream, lock-step and unary, "
        "plaintext, on a server of 10 workers, with 1 and 5 clients one after another, at "
        "latency profiles none."
    )
    assert orders.sequential_sentence(sequential.iloc[0:0]) == "This run has no sequential cells."


def test_profile_and_proxy_tables_keep_configurations_of_other_workers_apart():
    rtt = {"rtt_p50": 100.0, "rtt_p99": 200.0}
    summary = summary_of(
        cell(rtt, clients=100, workers=10),
        cell({k: v * 3 for k, v in rtt.items()}, clients=100, workers=100),
        cell(rtt, clients=100, workers=10, latency_profile="proxy_0ms"),
    )
    profiles = orders.profile_table(summary)
    assert list(profiles.index.get_level_values("workers")) == [10, 100]
    overhead = orders.proxy_overhead(summary)
    assert len(overhead) == 2 and overhead["workers"].eq(10).all()  # w100: no proxied cell
