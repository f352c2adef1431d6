"""stats.compare_published: the one published-vs-measured join every study uses."""

from __future__ import annotations

import math

import pandas as pd

from perflab.analysis import stats


def summary(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    """A stats.summarize-shaped frame: (implementation, metric, median) per row."""
    return pd.DataFrame(
        [
            {
                "implementation": impl,
                "metric": metric,
                "unit": "calls",
                "median": value,
                "ci_low": value,
                "ci_high": value,
                "n": 1,
            }
            for impl, metric, value in rows
        ]
    )


def published(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"implementation": i, "metric": m, "value": v, "unit": "calls", "source": "seed"}
            for i, m, v in rows
        ]
    )


def test_a_published_zero_gives_an_undefined_ratio_not_an_error():
    # The seed's error counts are often 0; a measured table may be empty on one side.
    theirs = published([("a", "errors_Unavailable", 0.0), ("b", "errors_Unavailable", 0.0)])
    mine = summary([("a", "errors_Unavailable", 3.0)])
    table = stats.compare_published(mine, theirs, ["implementation"], "errors_Unavailable")
    ratios = table.set_index("implementation")["ratio"]
    assert math.isinf(ratios["a"]) and math.isnan(ratios["b"])
    empty = stats.compare_published(
        pd.DataFrame(), theirs, ["implementation"], "errors_Unavailable"
    )
    assert empty["measured"].isna().all() and empty["published"].tolist() == [0.0, 0.0]


def test_renamed_metrics_keep_the_published_name_and_the_seeds_order():
    theirs = published([("b", "max_rss", 20.0), ("a", "max_rss", 10.0), ("a", "calls", 5.0)])
    mine = summary([("a", "client_max_rss", 15.0), ("b", "client_max_rss", 30.0)])
    table = stats.compare_published(
        mine, theirs, ["implementation"], {"max_rss": "client_max_rss"}, how="left", sort=False
    )
    assert table[["implementation", "metric"]].values.tolist() == [
        ["b", "max_rss"],
        ["a", "max_rss"],
    ]
    assert table["ratio"].tolist() == [1.5, 1.5]


def test_an_outer_join_keeps_what_only_one_side_has():
    theirs = published([("a", "rps", 100.0)])
    mine = summary([("a", "rps", 150.0), ("c", "rps", 80.0)])
    table = stats.compare_published(mine, theirs, ["implementation"], "rps").set_index(
        "implementation"
    )
    assert set(table.index) == {"a", "c"}
    assert table.loc["a", "ratio"] == 1.5
    assert math.isnan(table.loc["c", "published"]) and table.loc["c", "metric"] == "rps"
    right = stats.compare_published(mine, theirs, ["implementation"], "rps", how="right")
    assert sorted(right["implementation"]) == ["a", "c"]
