import math

import pandas as pd

from perflab import stats


def test_median_ci_brackets_the_median_and_is_repeatable():
    values = [10.0, 11.0, 9.5, 10.5, 30.0]
    first = stats.median_ci(values)
    assert first.median == 10.5
    assert first.low <= first.median <= first.high
    assert first.n == 5
    assert stats.median_ci(values) == first  # fixed seed: same data, same interval


def test_median_ci_of_one_value_is_that_value_and_nan_is_dropped():
    one = stats.median_ci([4.0, float("nan")])
    assert (one.median, one.low, one.high, one.n) == (4.0, 4.0, 4.0, 1)
    assert math.isnan(stats.median_ci([]).median)


def test_interval_narrows_with_agreeing_repeats():
    tight = stats.median_ci([100.0, 100.5, 99.5, 100.2, 99.8, 100.1])
    loose = stats.median_ci([50.0, 150.0, 80.0, 120.0, 100.0, 60.0])
    assert tight.high - tight.low < loose.high - loose.low


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
