"""hello study analysis (perflab.studies.hello.analysis) on a real smoke run of every server."""

from __future__ import annotations

import pandas as pd
import pytest

import perflab
from perflab.studies.hello import analysis as hello
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"
REFERENCE = REPO / "data" / "reference"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return perflab.load(FIXTURE)


@pytest.fixture(scope="module")
def servers(frame) -> set[str]:
    """The hello servers the fixture ran (the run also holds its calibration cells)."""
    return set(frame[frame["study"] == hello.STUDY]["implementation"])


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return perflab.load_reference(REFERENCE, hello.STUDY)


def as_seed_shape(frame: pd.DataFrame) -> pd.DataFrame:
    """The fixture's rows relabelled as the seed's shape: real numbers in the rows the
    published table answers (the smoke run has steady cells only)."""
    return frame.assign(scenario="seed_n200")


def test_cells_recorded_without_connections_read_as_one(frame, servers):
    assert "connections" not in frame.columns  # recorded before connections was a key
    summary = hello.summarize(frame)
    assert set(summary["connections"]) == {1}
    # One connection count: labels stay the implementations' own names.
    assert set(summary["implementation"]) == servers
    rps = hello.rates(summary, "steady")
    assert len(rps) == len(servers)


def test_varied_connections_are_kept_apart_and_labelled(frame):
    varied = pd.concat([frame.assign(connections=1), frame.assign(connections=4)])
    summary = hello.summarize(varied)
    assert set(summary["connections"]) == {1, 4}
    assert "cpp (4 conn)" in set(summary["implementation"])
    assert "cpp (1 conn)" in set(summary["implementation"])
    # Each label is one server at one connection count: no group mixes the two.
    rps = hello.rates(summary, "steady")
    assert rps["implementation"].is_unique


def test_published_rows_pair_with_the_seed_shape_on_one_connection(frame, published, servers):
    seed = as_seed_shape(frame)
    varied = pd.concat([seed.assign(connections=1), seed.assign(connections=4)])
    table = hello.published_vs_measured(hello.summarize(varied), published)
    seed_rows = published[(published["scenario"] == "seed_n200") & (published["metric"] == "rps")]
    assert len(table) == len(seed_rows)
    assert table["published"].notna().all()
    measured = table.dropna(subset=["measured"])
    # The fixture ran concurrency 10: exactly the seed's servers at 10 are measured, and the
    # number is the 1-connection median of that server, not the 4-connection one.
    assert set(measured["concurrency"]) == {10}
    assert set(measured["implementation"]) == set(seed_rows["implementation"]) & servers
    one = hello.summarize(seed)
    for row in measured.itertuples():
        mine = one[(one["metric"] == "rps") & (one["implementation"] == row.implementation)][
            "median"
        ].iloc[0]
        assert row.measured == mine
        assert row.ratio == pytest.approx(row.measured / row.published)
    assert all(label.endswith(" c10") for label in measured["label"])


def test_latency_and_cpu_tables_show_every_server(frame, servers):
    summary = hello.summarize(frame)
    latency = hello.latency_table(summary, hello.main_scenario(summary))
    assert list(latency.columns) == hello.LATENCY_METRICS
    assert len(latency) == len(servers)
    cpu = dict(hello.cpu_tables(summary, "steady"))
    assert set(cpu) == set(hello.CPU_METRICS)
    assert all(len(table) == len(servers) for table in cpu.values())


def test_seed_servers_are_the_published_python_servers(frame, published, servers):
    summary = hello.summarize(frame)
    python = hello.seed_servers(hello.rates(summary, "steady"), published)
    assert set(python["implementation"]) == set(published["implementation"]) & servers
    assert not {"cpp", "go"} & set(python["implementation"])


def test_ranking_compares_the_orders_per_concurrency(frame, published):
    table = hello.published_vs_measured(hello.summarize(as_seed_shape(frame)), published)
    ranking = hello.ranking(table)
    assert list(ranking.index) == [10]
    assert ranking["same order"].dtype == bool


def test_load_generator_note_names_the_calibrated_ghz():
    manifest = perflab.load_manifest(FIXTURE)
    note = hello.load_generator_note(manifest)
    assert f"ghz {manifest['calibration']['ghz_version']}" in note
    assert manifest["run_id"] in note
