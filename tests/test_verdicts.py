"""The verdict engine on small constructed runs: every verdict, and each one turned around."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perflab.analysis.claims import ClaimsError, parse_claim
from perflab.analysis.intervals import (
    clopper_pearson,
    mann_whitney_counts,
    median_interval,
    ratio_interval,
)
from perflab.analysis.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    decide,
    judge,
)


def cells(rows: list[tuple]) -> pd.DataFrame:
    """(implementation, concurrency, repeat, value[, status]) -> tidy rows of metric rps."""
    records = []
    for row in rows:
        impl, concurrency, repeat, value, *status = row
        records.append(
            {
                "study": "hello",
                "scenario": "steady",
                "implementation": impl,
                "client": "ghz",
                "concurrency": concurrency,
                "repeat": repeat,
                "cell_id": f"{impl}-c{concurrency}-r{repeat}",
                "status": status[0] if status else "ok",
                "metric": "rps",
                "value": value,
                "unit": "req/s",
            }
        )
    frame = pd.DataFrame(records)
    frame["concurrency"] = frame["concurrency"].astype("Int64")
    return frame


def claim(**overrides):
    raw = {
        "id": "a-beats-b",
        "seed": "000_x.txt",
        "study": "hello",
        "says": "a is faster than b",
        "source": "prose",
        "metric": "rps",
        "numerator": {"implementation": "a", "scenario": "steady"},
        "denominator": {"implementation": "b", "scenario": "steady"},
        "pair_by": ["concurrency"],
        "direction": "greater",
        "threshold": 1.0,
        "published": 1.5,
    }
    raw.update(overrides)
    return parse_claim(0, {key: value for key, value in raw.items() if value is not None})


def three_repeats(a: list[float], b: list[float], concurrency: int = 2) -> list[tuple]:
    return [("a", concurrency, r + 1, v) for r, v in enumerate(a)] + [
        ("b", concurrency, r + 1, v) for r, v in enumerate(b)
    ]


# --- intervals -------------------------------------------------------------------------------


def test_range_of_three_repeats_is_labelled_with_its_true_coverage():
    interval = median_interval([3.0, 1.0, 2.0])
    assert (interval.low, interval.high) == (1.0, 3.0)
    assert interval.coverage == pytest.approx(0.75)
    assert interval.label() == "75% range of the repeats"


def test_order_statistic_interval_reaches_95_percent_with_enough_repeats():
    interval = median_interval(list(range(1, 11)))
    # k = 2 of 10: 1 - 2 * P(Bin(10, 1/2) <= 1) = 1 - 2 * 11/1024
    assert (interval.low, interval.high) == (2, 9)
    assert interval.coverage == pytest.approx(1 - 22 / 1024)
    assert median_interval([5.0]) is None


def test_mann_whitney_null_distribution_counts_every_ordering():
    counts = mann_whitney_counts(3, 3)
    assert sum(counts) == math.comb(6, 3)
    assert counts == (1, 1, 2, 3, 3, 3, 3, 2, 1, 1)


def test_ratio_interval_of_three_vs_three_is_the_extreme_ratios_at_90_percent():
    interval = ratio_interval([2.0, 2.2, 2.4], [1.0, 1.1, 1.2])
    assert interval.low == pytest.approx(2.0 / 1.2)
    assert interval.high == pytest.approx(2.4 / 1.0)
    assert interval.coverage == pytest.approx(0.9)
    assert ratio_interval([2.0], [1.0]).coverage == 0.0
    assert ratio_interval([2.0, 0.0], [1.0, 1.0]) is None


def test_clopper_pearson_matches_the_textbook_values():
    interval = clopper_pearson(5, 100)
    assert interval.low == pytest.approx(0.01643, abs=1e-4)
    assert interval.high == pytest.approx(0.11284, abs=1e-4)
    # No error in 984 calls: the rule of three, exactly.
    assert clopper_pearson(0, 984).high == pytest.approx(1 - 0.025 ** (1 / 984), rel=1e-6)


# --- verdicts --------------------------------------------------------------------------------


def test_clear_lead_holds_and_reversed_lead_does_not():
    ahead = judge(claim(), cells(three_repeats([200, 210, 220], [100, 105, 110])))
    assert ahead.verdict == HOLDS
    assert ahead.effect == pytest.approx(2.0)
    assert ahead.sentence().startswith("Holds: rps of a over b (steady) is 2.00x")
    behind = judge(claim(), cells(three_repeats([100, 105, 110], [200, 210, 220])))
    assert behind.verdict == FAILS
    assert behind.sentence().startswith("Does not hold: ")


def test_overlapping_groups_are_inconclusive():
    verdict = judge(claim(), cells(three_repeats([100, 130, 90], [110, 95, 120])))
    assert verdict.verdict == INCONCLUSIVE
    assert "reaches the threshold" in verdict.reason


def test_a_factor_just_past_the_threshold_is_too_close_to_call():
    # Every ratio of the two groups exceeds 1, but by less than the 10% margin.
    close = judge(claim(), cells(three_repeats([104, 105, 106], [100, 100.5, 101])))
    assert close.interval.low > 1.0
    assert close.verdict == INCONCLUSIVE
    assert "within 10% of it" in close.reason
    clear = judge(claim(), cells(three_repeats([114, 115, 116], [100, 100.5, 101])))
    assert clear.verdict == HOLDS


def test_two_repeats_cannot_decide_even_a_large_effect():
    verdict = judge(claim(), cells(three_repeats([300, 310], [100, 101])))
    assert verdict.verdict == INCONCLUSIVE
    assert "below the 90% needed" in verdict.reason


def test_missing_cells_are_not_measured():
    frame = cells(three_repeats([200, 210, 220], [100, 105, 110]))
    absent = judge(claim(numerator={"implementation": "c"}), frame)
    assert absent.verdict == NOT_MEASURED
    assert absent.sentence().startswith("Not measured: the run's profile has no hello cells")
    elsewhere = judge(claim(topology="netns"), frame)
    assert elsewhere.verdict == NOT_MEASURED
    assert "needs a netns run" in elsewhere.reason
    anywhere = judge(claim(topology="any"), frame, "netns")
    assert anywhere.verdict != NOT_MEASURED


def test_one_failing_configuration_is_enough_to_refute():
    rows = three_repeats([200, 210, 220], [100, 105, 110], concurrency=2) + three_repeats(
        [90, 95, 92], [200, 205, 210], concurrency=50
    )
    verdict = judge(claim(), cells(rows))
    assert verdict.verdict == FAILS
    assert verdict.deciding.key == {"concurrency": "50"}
    assert len(verdict.pairs) == 2
    only_good = judge(claim(), cells(rows[:6]))
    assert only_good.verdict == HOLDS


def test_holds_rests_on_the_configuration_closest_to_the_threshold():
    rows = three_repeats([300, 310, 320], [100, 105, 110], concurrency=2) + three_repeats(
        [150, 155, 160], [100, 105, 110], concurrency=10
    )
    verdict = judge(claim(), cells(rows))
    assert verdict.verdict == HOLDS
    assert verdict.deciding.key == {"concurrency": "10"}
    assert "the weakest of 2 configurations" in verdict.sentence()


def test_inconclusive_rests_on_the_configuration_reaching_furthest_past_the_threshold():
    # Both undecided: concurrency 2's interval reaches down to 0.9, concurrency 10's to 0.6.
    rows = three_repeats([100, 115, 125], [100, 105, 110], concurrency=2) + three_repeats(
        [60, 110, 130], [95, 100, 105], concurrency=10
    )
    verdict = judge(claim(), cells(rows))
    assert verdict.verdict == INCONCLUSIVE
    assert {pair.verdict for pair in verdict.pairs} == {INCONCLUSIVE}
    assert verdict.deciding.key == {"concurrency": "10"}
    # Swap which one is wider: the verdict follows it.
    swapped = three_repeats([60, 110, 130], [95, 100, 105], concurrency=2) + three_repeats(
        [100, 115, 125], [100, 105, 110], concurrency=10
    )
    assert judge(claim(), cells(swapped)).deciding.key == {"concurrency": "2"}


def test_within_band_holds_inside_and_fails_outside():
    same = judge(
        claim(direction="within", threshold=0.1),
        cells(three_repeats([100, 101, 102], [99, 100, 101])),
    )
    assert same.verdict == HOLDS
    apart = judge(
        claim(direction="within", threshold=0.1),
        cells(three_repeats([150, 151, 152], [99, 100, 101])),
    )
    assert apart.verdict == FAILS


def test_less_direction_mirrors_greater():
    frame = cells(three_repeats([50, 52, 55], [100, 105, 110]))
    assert judge(claim(direction="less", threshold=1.0), frame).verdict == HOLDS
    assert judge(claim(direction="less", threshold=0.2), frame).verdict == FAILS


def test_a_bound_side_keeps_only_the_decision_it_cannot_overturn():
    # The numerator hit the load generator's ceiling: its true rate may be higher still.
    rows = [
        (i, c, r, v, "bound") if i == "a" else (i, c, r, v)
        for i, c, r, v in three_repeats([200, 210, 220], [100, 105, 110])
    ]
    assert judge(claim(), cells(rows)).verdict == HOLDS
    low = [
        (i, c, r, v, "bound") if i == "a" else (i, c, r, v)
        for i, c, r, v in three_repeats([50, 52, 55], [100, 105, 110])
    ]
    assert judge(claim(), cells(low)).verdict == INCONCLUSIVE
    assert (
        decide(ratio_interval([5, 5.1, 5.2], [1, 1, 1]), "greater", 1.0, denominator_floor=True)[0]
        == INCONCLUSIVE
    )


def test_failed_cells_do_not_count_as_measurements():
    rows = three_repeats([200, 210, 220], [100, 105, 110])
    rows = [(i, c, r, v, "failed") if (i, r) == ("a", 3) else (i, c, r, v) for i, c, r, v in rows]
    verdict = judge(claim(), cells(rows))
    assert verdict.deciding.n_numerator == 2
    assert verdict.verdict == INCONCLUSIVE


def test_ambiguous_selector_is_refused_by_name():
    rows = three_repeats([200, 210, 220], [100, 105, 110], 2) + three_repeats(
        [200, 210, 220], [100, 105, 110], 10
    )
    with pytest.raises(ClaimsError, match="a-beats-b.*several configurations"):
        judge(claim(pair_by=[]), cells(rows))


def error_cells(errors: list[int], calls: int) -> pd.DataFrame:
    records = []
    for repeat, count in enumerate(errors, start=1):
        base = {
            "study": "aws_io",
            "scenario": "stream",
            "implementation": "grpclib",
            "client": "ghz",
            "repeat": repeat,
            "cell_id": f"grpclib-r{repeat}",
            "status": "ok",
        }
        records.append({**base, "metric": "count", "value": calls, "unit": "calls"})
        if count:
            records.append(
                {**base, "metric": "errors_Unavailable", "value": count, "unit": "calls"}
            )
    return pd.DataFrame(records)


def test_error_rate_claim_refuted_by_many_clean_calls_and_upheld_by_errors():
    rate = claim(
        study="aws_io",
        kind="error_rate",
        metric="errors_Unavailable",
        numerator={"implementation": "grpclib", "scenario": "stream"},
        denominator=None,
        pair_by=[],
        direction="greater",
        threshold=0.01,
        published=0.1,
    )
    clean = judge(rate, error_cells([0, 0, 0], 400))
    assert clean.verdict == FAILS
    assert "the claim needs error rate > 1.0%" in clean.sentence()
    assert claim().expectation() == "ratio > 1"
    assert "0 of 1200 calls" in clean.reason
    failing = judge(rate, error_cells([40, 55, 38], 400))
    assert failing.verdict == HOLDS
    assert failing.effect == pytest.approx(133 / 1200)
    few = judge(rate, error_cells([0], 50))
    assert few.verdict == INCONCLUSIVE
    # Without pair_by a rate pools every cell it selects, two per repeat here: the 50 clean
    # calls that could not decide alone decide once the second cell's 400 join them.
    second = error_cells([0], 400).assign(cell_id="grpclib-c10-r1")
    pooled = judge(rate, pd.concat([error_cells([0], 50), second]))
    assert pooled.verdict == FAILS
    assert "0 of 450 calls" in pooled.reason


def test_claims_file_entries_are_checked_by_key():
    with pytest.raises(ClaimsError, match=r"direction: 'bigger'"):
        claim(direction="bigger")
    with pytest.raises(ClaimsError, match="needs a denominator"):
        claim(denominator=None)
    with pytest.raises(ClaimsError, match="unknown key"):
        claim(colour="red")
