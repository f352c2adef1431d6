"""hello study analysis (perflab.studies.hello.analysis) on a real smoke run of every server."""

from __future__ import annotations

import pandas as pd
import pytest

from perflab.analysis import frames
from perflab.analysis.ceilings import ghz_rates
from perflab.analysis.run import read as read_folder
from perflab.studies.hello import analysis as hello
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"
REFERENCE = REPO / "data" / "reference"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return frames.read_run(FIXTURE)


@pytest.fixture(scope="module")
def servers(frame) -> set[str]:
    """The hello servers the fixture ran (the run also holds its calibration cells)."""
    return set(frame[frame["study"] == hello.STUDY]["implementation"])


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return frames.read_reference(REFERENCE, hello.STUDY)


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
    manifest = frames.read_manifest(FIXTURE)
    note = hello.load_generator_note(manifest)
    assert f"ghz {manifest['calibration']['ghz_version']}" in note
    assert manifest["run_id"] in note


def test_a_cell_faster_than_the_calibration_raises_the_ceiling():
    from perflab.contract.bounds import effective_ceiling

    rates = {
        "hello/cpp-c50-r1": ("0.93.0", 54_000.0),
        "hello/py-c50-r1": ("0.93.0", 9_000.0),
        "calibration/ghz-0.120.0-c50-r1": ("0.120.0", 60_000.0),  # another ghz: not counted
    }
    raised = effective_ceiling("0.93.0", 50_000.0, rates)
    assert (raised.effective_rps, raised.fastest_cell) == (54_000.0, "hello/cpp-c50-r1")
    assert raised.bound_rps == pytest.approx(0.7 * 54_000)
    kept = effective_ceiling("0.93.0", 60_000.0, rates)
    assert (kept.effective_rps, kept.fastest_cell) == (60_000.0, "")


def rate_rows(medians: dict[tuple[str, int], float], bound: tuple = ()) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "implementation": i,
                "concurrency": c,
                "metric": "rps",
                "median": m,
                "bound": (i, c) in bound,
            }
            for (i, c), m in medians.items()
        ]
    )


def test_bound_sentence_lists_what_the_tables_mark_and_names_where_the_ceiling_differs():
    from perflab.contract.bounds import effective_ceiling

    medians = {("cpp", 50): 54_000.0, ("cpp", 10): 36_000.0, ("go", 50): 40_000.0}
    raised = effective_ceiling("0.93.0", 50_000.0, {"hello/cpp": ("0.93.0", 54_000.0)})
    # The cells recorded bound (the tables' ≥) and the medians above the effective ceiling
    # (37,800 req/s) differ: cpp 10 is marked but below it.
    rates = rate_rows(medians, bound=(("cpp", 50), ("cpp", 10), ("go", 50)))
    text = hello.bound_sentence(rates, raised, ["implementation", "concurrency"])
    assert "108% of its calibrated ceiling" in text and "37,800 req/s" in text
    assert "the rule the verdicts use): cpp 50, cpp 10, go 50." in text
    assert "By the effective ceiling alone the medians above it are: cpp 50, go 50." in text
    # The same set by both rules: one list, no second sentence.
    agreeing = rate_rows(medians, bound=(("cpp", 50), ("go", 50)))
    text = hello.bound_sentence(agreeing, raised, ["implementation", "concurrency"])
    assert "the rule the verdicts use): cpp 50, go 50." in text
    assert "By the effective ceiling alone" not in text
    # Nothing recorded bound, yet medians above the effective ceiling: said, not marked.
    unmarked = hello.bound_sentence(rate_rows(medians), raised, ["implementation", "concurrency"])
    assert "no figure is marked ≥" in unmarked and unmarked.endswith("cpp 50, go 50.")
    # The other way: no cell beyond the calibration, and every rate below 70% of it.
    slow = rate_rows({("py", 50): 9_000.0})
    kept = effective_ceiling("0.93.0", 50_000.0, {"hello/py": ("0.93.0", 9_000.0)})
    text = hello.bound_sentence(slow, kept, ["implementation", "concurrency"])
    assert text.startswith("No cell ran faster than ghz 0.93.0's calibrated ceiling")
    assert text.endswith("every rate is the server's.")
    assert "no calibration" in hello.bound_sentence(slow, None, ["implementation"])


def test_the_fixture_runs_ghz_rates_carry_each_cells_version(frame):
    rates = ghz_rates(frame, read_folder(FIXTURE).cells_of())
    versions = {version for version, _ in rates.values()}
    calibration = {k for k in rates if k.startswith("calibration/")}
    assert calibration and len(versions) >= 1
    assert any(k.startswith("hello/") for k in rates)
    ceiling = read_folder(FIXTURE).ceiling
    assert ceiling is not None and ceiling.effective_rps >= ceiling.calibrated_rps


def repeats(scenario: str, server: str, metric: str, n: int) -> list[dict]:
    return [
        {
            "study": hello.STUDY,
            "scenario": scenario,
            "implementation": server,
            "concurrency": 10,
            "repeat": r,
            "metric": metric,
            "value": 100.0 + r,
            "unit": "x",
            "cell_id": f"{server}-{scenario}-r{r}",
            "status": "ok",
        }
        for r in range(1, n + 1)
    ]


def test_interval_sentence_describes_the_metrics_the_tables_show():
    from perflab.analysis.stats import interval_sentence

    rows = [
        *repeats("steady", "go", "rps", 3),
        *repeats("steady", "go", "latency_p50", 3),
        # No table shows these: a short cell's sampled RSS, the other scenario's latency.
        *repeats("steady", "go", "client_sampled_rss_peak", 2),
        *repeats("seed_n200", "go", "rps", 3),
        *repeats("seed_n200", "go", "latency_p50", 1),
    ]
    sentence = interval_sentence(hello.shown(hello.summarize(pd.DataFrame(rows))))
    assert sentence == (
        "Intervals: the range of the 3 repeats, which covers the median with 75% probability."
    )
    # Where a shown metric has 2 repeats or 1, the sentence says so.
    rows += [*repeats("steady", "cpp", "rps", 2), *repeats("steady", "cpp", "latency_p50", 1)]
    sentence = interval_sentence(hello.shown(hello.summarize(pd.DataFrame(rows))))
    assert "range of the 2 repeats" in sentence and "range of the 3 repeats" in sentence
    assert "one repeat" in sentence
    # Without steady cells the seed's shape is the main scenario: its latency is shown.
    seed_only = [r for r in rows if r["scenario"] == "seed_n200"]
    sentence = interval_sentence(hello.shown(hello.summarize(pd.DataFrame(seed_only))))
    assert "Cells with one repeat show their value alone" in sentence
    assert hello.shown(pd.DataFrame()).empty  # nothing measured: nothing shown
