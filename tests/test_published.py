"""perflab.analysis.published and the claim fields it reads, on small made-up tables: each
check is shown catching a bad case, not only passing the committed claims file."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from perflab.analysis.claims import ClaimsError, parse_claim, read_claims
from perflab.analysis.frames import DIVIDED_BY_CELL
from perflab.analysis.published import (
    error_counts,
    published_figure,
    published_problems,
    read_reference_tables,
    seed_configurations,
)
from perflab.cli import claim_frame_hooks
from perflab.studies.throughput.analysis import tls_over_none

HEADER = (
    "study,scenario,implementation,client,concurrency,params,repeat,metric,value,unit,source,note"
)


def write_tables(folder: Path) -> Path:
    """A hello table where server b failed half its calls, and a watch table."""
    rows = [HEADER]
    for concurrency in (2, 10):
        for server, ok, total in (("a", 200, 0.1), ("b", 100, 0.05)):
            cell = f"hello,seed_n200,{server},ghz,{concurrency},{{}},"
            measured = {"count": 200, "ok": ok, "total": total, "rps": 200 / total}
            measured["errors_Unavailable"] = 200 - ok
            rows += [f"{cell},{metric},{value},x,s," for metric, value in measured.items()]
    # watch: one phase at 10% for 0.5 min; the other cell's duration is '...' (no row).
    rows += [
        "watch,mono_small,js,go,,{},,cpu_percent_peak,10,percent,s,",
        "watch,mono_small,js,go,,{},,cpu_phase_minutes,0.5,min,s,",
        "watch,separated_small,js,go,,{},,cpu_percent_peak,20,percent,s,",
    ]
    (folder / "hello.csv").write_text("\n".join(rows) + "\n")
    return folder


# The keys every made-up claim shares.
BASE = {
    "seed": "s.txt",
    "study": "hello",
    "says": "a vs b",
    "source": "prose",
    "metric": "rps",
    "numerator": {"implementation": "a"},
    "denominator": {"implementation": "b"},
    "direction": "greater",
}


def claim(**changes):
    raw = {
        **BASE,
        "id": "a-beats-b",
        "pair_by": ["concurrency"],
        "published": 1.0,
        "published_from": {
            "metric": "ok_rps",
            "numerator": {"implementation": "a"},
            "denominator": {"implementation": "b"},
        },
    }
    raw.update(changes)
    return parse_claim(0, {key: value for key, value in raw.items() if value is not None})


@pytest.fixture
def tables(tmp_path: Path) -> pd.DataFrame:
    return read_reference_tables(write_tables(tmp_path), seed_rows_hooks())


def seed_rows_hooks() -> dict:
    """Each study's hook on its rows of the seeds' tables, as a report hands them in."""
    hooks = claim_frame_hooks()
    return {study: each.seed_rows for study, each in hooks.items() if each.seed_rows}


def test_successful_calls_per_second_leave_failed_calls_out(tables):
    # a: 2000 ok/s; b: 100 ok in 0.05 s = 2000 ok/s, though ghz's rps says 4000 for b.
    assert published_figure(claim(), tables) == pytest.approx(1.0)
    ghz = claim(metric="rps_ghz", published_from={**claim_source("rps")})
    assert published_figure(ghz, tables) == pytest.approx(0.5)


def claim_source(metric: str) -> dict:
    return {
        "metric": metric,
        "numerator": {"implementation": "a"},
        "denominator": {"implementation": "b"},
    }


def test_a_wrong_figure_a_wrong_metric_and_a_figure_without_source_are_flagged(tables):
    good = claim()
    wrong_figure = replace(good, id="wrong-figure", published=2.0)
    wrong_metric = claim(id="wrong-metric", published_from=claim_source("rps"), published=0.5)
    no_source = replace(good, id="no-source", published_from=None)
    problems = published_problems([good, wrong_figure, wrong_metric, no_source], tables)
    assert [p.split(":")[0] for p in problems] == ["wrong-figure", "wrong-metric", "no-source"]


def test_a_study_s_own_metric_is_on_its_seed_metric_for_its_claims_only(tables):
    # Both servers made 200 calls: the figure is right, only the metric is in question.
    counted = claim(id="counted", metric="count", published_from=claim_source("count"))
    assert published_figure(counted, tables) == pytest.approx(1.0)
    wrong = ["counted: published on count, the run on count"]
    assert published_problems([counted], tables) == wrong
    assert published_problems([counted], tables, {"hello": (("count", "count"),)}) == []
    # Another study's own metric says nothing of this study's claims.
    assert published_problems([counted], tables, {"watch": (("count", "count"),)}) == wrong


def test_a_list_selects_any_of_its_values_and_names_the_seeds_configurations(tables):
    both = {"implementation": "a", "params": {"concurrency": [2, 10]}}
    one = claim(
        published_from={
            "metric": "ok_rps",
            "numerator": both,
            "denominator": {"implementation": "b"},
        }
    )
    assert seed_configurations(one, tables) == [{"concurrency": "10"}, {"concurrency": "2"}]
    nothing = claim(published_from={**claim_source("ok_rps"), "numerator": {"implementation": "z"}})
    with pytest.raises(ClaimsError):
        published_figure(nothing, tables)


def test_error_rates_count_errors_over_calls(tables):
    rate = claim(
        kind="error_rate",
        metric="errors_Unavailable",
        denominator=None,
        threshold=0.25,
        published=0.5,
        published_from={"metric": "errors_Unavailable", "numerator": {"implementation": "b"}},
    )
    assert published_figure(rate, tables) == pytest.approx(0.5)
    assert error_counts(rate, tables) == {("10",): (100, 200), ("2",): (100, 200)}


def test_watch_cpu_is_core_seconds_and_missing_durations_drop_out(tables):
    cpu = tables[tables["metric"] == "core_seconds"]
    assert cpu["value"].tolist() == pytest.approx([3.0])  # 10% of a core for 30 s
    assert set(cpu["folder"]) == {"small"} and set(cpu["message"]) == {"mono"}
    assert not math.isnan(cpu["value"].iloc[0])


def test_siblings_must_name_each_other_on_different_methods(tmp_path: Path):
    def write(first: dict, second: dict) -> Path:
        import yaml

        path = tmp_path / "claims.yml"
        path.write_text(yaml.safe_dump({"claims": [{**BASE, **first}, {**BASE, **second}]}))
        return path

    good = write(
        {"id": "x", "method": "steady", "sibling": "x-seed-method"},
        {"id": "x-seed-method", "method": "seed", "sibling": "x"},
    )
    assert [c.sibling for c in read_claims(good)] == ["x-seed-method", "x"]
    one_way = write({"id": "x", "method": "steady", "sibling": "y"}, {"id": "y", "method": "seed"})
    with pytest.raises(ClaimsError, match="does not name it back"):
        read_claims(one_way)
    same = write(
        {"id": "x", "method": "seed", "sibling": "y"}, {"id": "y", "method": "seed", "sibling": "x"}
    )
    with pytest.raises(ClaimsError, match="different methods"):
        read_claims(same)
    with pytest.raises(ClaimsError, match="method"):
        claim(method="fast")


def throughput_row(scenario: str, repeat: int, value: float, status: str = "ok") -> dict:
    return {
        "run_id": "r",
        "study": "throughput",
        "scenario": scenario,
        "implementation": "cpp",
        "client": "cpp",
        "pair": "own",
        "payload_bytes": 1,
        "chunk_bytes": 1,
        "repeat": repeat,
        "metric": "throughput",
        "value": value,
        "unit": "GiB/s",
        "cell_id": f"{scenario}-r{repeat}",
        "status": status,
    }


def test_tls_over_none_pairs_each_round_and_carries_a_bound_side():
    frame = pd.DataFrame(
        [
            throughput_row("none", 1, 4.0),
            throughput_row("tls", 1, 2.0),
            throughput_row("none", 2, 2.0, "bound"),
            throughput_row("tls", 2, 1.5),
            throughput_row("none", 3, 4.0, "failed"),
            throughput_row("tls", 3, 1.0),
        ]
    )
    ratios = tls_over_none(frame).sort_values("repeat")
    assert ratios["value"].tolist() == [0.5, 0.75]  # round 3's no-TLS cell failed
    assert ratios["status"].tolist() == ["ok", "bound"]
    assert set(ratios["metric"]) == {"tls_over_none"} and set(ratios["scenario"]) == {"tls"}
    # Each row is the TLS cell's and names the no-TLS cell it divides by: it rests on both.
    assert ratios["cell_id"].tolist() == ["tls-r1", "tls-r2"]
    assert ratios[DIVIDED_BY_CELL].tolist() == ["none-r1", "none-r2"]
    assert tls_over_none(frame.iloc[0:0]).empty


def test_a_column_only_a_study_hook_derives_is_refused_by_name_without_the_hook(tmp_path):
    claim = parse_claim(
        0,
        {
            **BASE,
            "id": "mono-cpu",
            "study": "watch",
            "metric": "server_cpu_seconds",
            "numerator": {"scenario": "mono_small"},
            "denominator": {"scenario": "separated_small"},
            "pair_by": ["folder"],
            "published": 3.0,
            "published_from": {"metric": "core_seconds", "numerator": {"scenario": "mono_small"}},
        },
    )
    rows = read_reference_tables(write_tables(tmp_path))
    with pytest.raises(ClaimsError, match="no column folder"):
        published_figure(claim, rows)
    with_hooks = read_reference_tables(write_tables(tmp_path), seed_rows_hooks())
    assert published_figure(claim, with_hooks) == pytest.approx(3.0)  # 10% x 0.5 min x 60 s
