import math

import pandas as pd
import pytest

from perflab.analysis import stats


def test_median_ci_of_three_repeats_is_their_range_at_75_percent():
    estimate = stats.median_ci([10.0, 12.0, 11.0])
    assert (estimate.median, estimate.low, estimate.high, estimate.n) == (11.0, 10.0, 12.0, 3)
    assert estimate.coverage == 0.75  # 1 - 2 / 2**3: the range misses the median 1 time in 4
    assert estimate.interval == "range of the repeats"


def test_median_ci_of_one_value_has_no_interval_and_nan_is_dropped():
    one = stats.median_ci([4.0, float("nan")])
    assert (one.median, one.n, one.interval) == (4.0, 1, "")
    assert math.isnan(one.low) and math.isnan(one.high) and math.isnan(one.coverage)
    assert math.isnan(stats.median_ci([]).median)


def test_median_ci_of_many_repeats_drops_the_extremes_and_reaches_95_percent():
    values = [float(v) for v in range(1, 12)]  # 11 repeats
    estimate = stats.median_ci(values)
    assert estimate.coverage >= 0.95 and estimate.interval == "exact order-statistic interval"
    assert 1.0 < estimate.low < estimate.median < estimate.high < 11.0


def summary_of(repeats: dict[str, int]) -> pd.DataFrame:
    rows = [
        {"server": name, "metric": "rps", "unit": "req/s", "value": 100.0 + i}
        for name, n in repeats.items()
        for i in range(n)
    ]
    return stats.summarize(pd.DataFrame(rows), ["server"])


def test_summary_carries_coverage_and_the_sentence_says_it():
    summary = summary_of({"a": 3, "b": 3})
    assert summary["coverage"].tolist() == [0.75, 0.75]
    sentence = stats.interval_sentence(summary)
    assert "range of the 3 repeats" in sentence and "75% probability" in sentence
    assert "95" not in sentence
    assert stats.interval_header(summary) == "75% interval"


def test_interval_sentence_names_each_repeat_count_and_single_repeats():
    mixed = stats.interval_sentence(summary_of({"a": 5, "b": 1}))
    assert "range of the 5 repeats" in mixed and "93% probability" in mixed
    assert "one repeat" in mixed
    single = stats.interval_sentence(summary_of({"a": 1}))
    assert single.startswith("One repeat per cell") and "%" not in single
    assert stats.interval_header(summary_of({"a": 3, "b": 5})) == "interval (75%–93%)"


def test_compare_published_puts_ratio_beside_both():
    measured = pd.DataFrame(
        {
            "implementation": ["a", "b"],
            "concurrency": [2, 2],
            "metric": ["rps", "rps"],
            "median": [200.0, 50.0],
            "ci_low": [190.0, 45.0],
            "ci_high": [210.0, 55.0],
            "unit": ["req/s", "req/s"],
        }
    )
    published = pd.DataFrame(
        {
            "implementation": ["a", "b"],
            "concurrency": [2, 2],
            "metric": ["rps", "rps"],
            "value": [100.0, 100.0],
            "source": ["000", "000"],
        }
    )
    table = stats.compare_published(measured, published, ["implementation", "concurrency"], "rps")
    assert table.set_index("implementation")["ratio"].to_dict() == {"a": 2.0, "b": 0.5}


def test_ranking_agreement_detects_a_swap():
    published = pd.Series({"x": 3.0, "y": 2.0, "z": 1.0})
    same = stats.ranking_agreement(published, pd.Series({"x": 30.0, "y": 20.0, "z": 10.0}))
    swapped = stats.ranking_agreement(published, pd.Series({"x": 10.0, "y": 20.0, "z": 30.0}))
    assert same["same_order"] and same["kendall_tau"] == 1.0
    assert not swapped["same_order"] and swapped["kendall_tau"] == -1.0


def test_figures_take_a_log_axis_only_where_values_span_decades():
    from perflab.analysis import plots

    wide = summary_of({"a": 3}).assign(clients=1)
    wide = pd.concat([wide, wide.assign(clients=100, median=60_000.0, ci_low=5e4, ci_high=7e4)])
    narrow = pd.concat([summary_of({"a": 3}).assign(clients=c) for c in (1, 100)])
    for frame, scale in ((wide, "log"), (narrow, "linear")):
        fig = plots.lines_with_intervals(frame, "clients", "server", "t", "us")
        assert fig.axes[0].get_yscale() == scale
    one_repeat = summary_of({"a": 1}).assign(clients=1)  # no interval: drawn without error bars
    assert plots.lines_with_intervals(one_repeat, "clients", "server", "t", "us").axes


def test_percentiles_are_kept_only_where_the_samples_support_them():
    assert stats.percentile_supported(0.999, 10_000) and not stats.percentile_supported(
        0.999, 9_999
    )
    assert stats.percentile_supported(0.99, 1_000) and not stats.percentile_supported(0.99, 200)
    rows = []
    for config, calls in (("few", 200.0), ("many", 20_000.0)):
        for metric, value in (("calls", calls), ("p50", 1.0), ("p99", 2.0), ("p999", 3.0)):
            rows.append({"config": config, "metric": metric, "unit": "x", "value": value})
    summary = stats.summarize(pd.DataFrame(rows), ["config"])
    fractions = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
    kept = stats.drop_unsupported_percentiles(summary, ["config"], "calls", fractions)
    shown = set(zip(kept["config"], kept["metric"], strict=True))
    assert ("few", "p50") in shown and ("few", "p99") not in shown
    assert {("many", "p99"), ("many", "p999")} <= shown
    assert "p99 (1,000 samples)" in stats.percentile_note(200)
    assert stats.percentile_note(20_000) == ""


def test_published_table_shows_measured_rows_with_their_coverage_and_no_inf():
    from perflab.analysis import tables

    measured = summary_of({"a": 3, "b": 3, "c": 3})
    published = pd.DataFrame(
        {
            "server": ["a", "b", "z"],
            "metric": ["rps"] * 3,
            "value": [50.0, 0.0, 7.0],  # b: a published zero; z: never measured here
            "unit": ["req/s"] * 3,
            "source": ["seed"] * 3,
        }
    )
    compared = stats.compare_published(measured, published, ["server"], "rps")
    shown = tables.published_table(compared, ["server"], "req/s")
    assert list(shown.index) == ["a", "b"]  # c: not published; z: not measured
    assert "75% interval low" in shown.columns
    assert shown.loc["b", "measured / published"] == "–"  # 101 / 0 is no ratio
    assert shown.loc["a", "measured / published"] == pytest.approx(2.02)
    single = stats.compare_published(summary_of({"a": 1}), published, ["server"], "rps")
    assert not any("interval" in c for c in tables.published_table(single, ["server"], "x"))


def test_interval_sentence_names_whose_intervals_and_keeps_its_default_words():
    summary = summary_of({"a": 5})
    assert stats.interval_sentence(summary).startswith("Intervals: the range of the 5 repeats")
    named = stats.interval_sentence(summary, "Intervals of the sequential cells")
    assert named.startswith("Intervals of the sequential cells: the range of the 5 repeats")
    alone = stats.interval_sentence(summary_of({"a": 1}), "Error bars")
    assert alone.startswith("Error bars: none, one repeat per cell") and "%" not in alone


def test_ten_repeats_are_labelled_with_their_own_interval_not_five_repeats_one():
    summary = summary_of({"five": 5, "ten": 10}).set_index("server")
    assert stats.interval_label(*summary.loc["five", ["n", "coverage", "interval"]]) == (
        "93%, range of 5 repeats"
    )
    # 10 repeats: [x(2), x(9)], 1 - 2 * 11 / 1024 = 97.9%, not the range's 99.8%.
    assert stats.interval_label(*summary.loc["ten", ["n", "coverage", "interval"]]) == (
        "97%, order statistics of 10 repeats"
    )
    assert stats.interval_label(1, float("nan"), "") == "none (1 repeat)"
    sentence = stats.interval_sentence(summary_of({"five": 5, "ten": 10}))
    assert "from 10 repeats, which covers the median with 97% probability" in sentence


def test_mixed_intervals_are_told_apart_from_one_kind():
    assert stats.mixes_intervals(summary_of({"a": 5, "b": 10}))
    assert stats.mixes_intervals(summary_of({"a": 5, "b": 1}))
    assert not stats.mixes_intervals(summary_of({"a": 5, "b": 5}))
    labels = stats.interval_labels(summary_of({"a": 5, "b": 10}))
    assert labels.tolist() == ["93%, range of 5 repeats", "97%, order statistics of 10 repeats"]


def test_significant_keeps_three_figures_with_separators():
    assert stats.significant(910995.707) == "911,000"
    assert stats.significant(0.99412) == "0.994"
    assert stats.significant(85.34) == "85.3"
    assert stats.significant(1.5) == "1.50"
    assert stats.significant(-795213.0) == "-795,000"
    assert stats.significant(float("nan")) == "–"
    assert stats.significant(0.0) == "0"
