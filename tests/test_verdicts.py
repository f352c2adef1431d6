"""The verdict engine on small constructed runs: every verdict, and each one turned around."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perflab.analysis.claims import DIRECTION, Bound, ClaimsError, parse_claim
from perflab.analysis.decisions import DECIDING_COVERAGE
from perflab.analysis.intervals import (
    CellCount,
    Interval,
    clopper_pearson,
    clustered_error_interval,
    clustered_rate_interval,
    highest_ratio_coverage,
    hodges_lehmann_ratio,
    mann_whitney_counts,
    median_interval,
    paired_log_t_interval,
    paired_ratio_effect,
    paired_ratio_interval,
    ratio_interval,
)
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    Judging,
    decide,
    judge,
    judging_from_noise_floor,
    lower_bounds,
    percent,
    refutation_alone,
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


def unpaired(a: list[float], b: list[float], concurrency: int = 2) -> list[tuple]:
    """a and b in rounds that do not meet (b from round 11): judged unpaired."""
    return [("a", concurrency, r + 1, v) for r, v in enumerate(a)] + [
        ("b", concurrency, r + 11, v) for r, v in enumerate(b)
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
    assert "reaches across the threshold" in verdict.reason


def test_a_factor_just_past_the_threshold_is_at_its_threshold():
    # Every ratio of the two groups exceeds 1, but by less than the 10% margin: a finding.
    close = judge(claim(), cells(three_repeats([104, 105, 106], [100, 100.5, 101])))
    assert close.interval.low > 1.0
    assert close.verdict == AT_THRESHOLD
    assert "within the 10% noise zone around the threshold" in close.reason
    assert close.sentence().startswith("At its threshold: rps of a over b")
    clear = judge(claim(), cells(three_repeats([114, 115, 116], [100, 100.5, 101])))
    assert clear.verdict == HOLDS
    # The same centre with repeats spread past the zone: more repeats may still decide.
    spread = judge(claim(), cells(three_repeats([90, 105, 120], [100, 100.5, 101])))
    assert spread.verdict == INCONCLUSIVE


def test_two_repeats_cannot_decide_even_a_large_effect():
    verdict = judge(claim(), cells(three_repeats([300, 310], [100, 101])))
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.reason.startswith("undecidable by this design (needs 3 rounds")
    assert "2 vs 2 repeats cannot reach (at most 66.6%)" in verdict.reason
    # Turned around: a third round decides the same effect.
    assert judge(claim(), cells(three_repeats([300, 310, 305], [100, 101, 99]))).verdict == HOLDS


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


def test_one_failing_configuration_of_two_is_said_and_refutes_when_past_alone():
    rows = three_repeats([200, 210, 220], [100, 105, 110], concurrency=2) + three_repeats(
        [90, 95, 92], [200, 205, 210], concurrency=50
    )
    verdict = judge(claim(), cells(rows))
    # Paired over 3 rounds, concurrency 50's 97.5% interval stays below 1 / 1.1: it refutes alone.
    assert verdict.verdict == FAILS
    assert verdict.deciding.key == {"concurrency": "50"}
    assert len(verdict.pairs) == 2
    assert "(it does not hold in 1 of 2 configurations)" in verdict.sentence()
    assert "lies past too" in verdict.reason
    only_good = judge(claim(), cells(rows[:6]))
    assert only_good.verdict == HOLDS
    only_bad = judge(claim(), cells(rows[6:]))
    assert only_bad.verdict == FAILS


def test_holds_rests_on_the_configuration_closest_to_the_threshold():
    rows = three_repeats([300, 310, 320], [100, 105, 110], concurrency=2) + three_repeats(
        [150, 155, 160], [100, 105, 110], concurrency=10
    )
    verdict = judge(claim(), cells(rows))
    assert verdict.verdict == HOLDS
    assert verdict.deciding.key == {"concurrency": "10"}
    # The one shown is chosen by its interval, and the sentence says so.
    said = "(it holds in 2 of 2 configurations; shown: the one whose interval comes nearest"
    assert said in verdict.sentence()
    assert "weakest" not in verdict.sentence()


def test_an_equivalence_over_configurations_names_no_nearest_one():
    # Equivalence shows the first configuration that holds, not one chosen by its interval.
    rows = three_repeats([100, 101, 102], [99, 100, 101], concurrency=2) + three_repeats(
        [100, 102, 101], [100, 101, 99], concurrency=10
    )
    verdict = judge(claim(direction="within", threshold=0.3), cells(rows))
    assert verdict.verdict == HOLDS
    assert "(it holds in 2 of 2 configurations)" in verdict.sentence()


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
        claim(direction="within", threshold=0.3),
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
    faster = Bound(DIRECTION, "greater", 1.0)
    interval = ratio_interval([5, 5.1, 5.2], [1, 1, 1])
    assert decide(interval, faster, 0.1, floors=(False, True))[0] == INCONCLUSIVE
    assert decide(interval, faster, 0.1, floors=(True, False))[0] == HOLDS


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


def rate_claim(threshold: float, direction: str = "greater"):
    return claim(
        study="aws_io",
        kind="error_rate",
        metric="errors_Unavailable",
        numerator={"implementation": "grpclib", "scenario": "stream"},
        denominator=None,
        pair_by=[],
        direction=direction,
        threshold=threshold,
        published=0.7,
    )


def test_error_rate_claim_is_decided_over_calls_allowing_for_clusters():
    # Issue 26: no failure in 9 cells of about 50 calls refutes "most calls fail" (> 50%)...
    rate = rate_claim(0.5)
    clean = judge(rate, error_cells([0] * 9, 50))
    assert clean.verdict == FAILS
    assert clean.interval.high < 0.05
    assert "the claim needs error rate > 50.0%" in clean.sentence()
    assert "errors in 0 of 9 cells (0 of 450 calls)" in clean.reason
    assert "clustered Clopper-Pearson interval over 450 calls in 9 cells" in clean.measured()
    assert claim().expectation() == "ratio > 1"
    # ... and the seed's own counts (145 of 200 calls, one cell) hold it.
    assert judge(rate, error_cells([145], 200)).verdict == HOLDS
    # Whole cells failing together count as cells: 2 of 4 cells failing cannot decide > 50%.
    assert judge(rate, error_cells([50, 50, 0, 0], 50)).verdict == INCONCLUSIVE
    # Spread evenly over the same calls, 100 of 200 calls cannot decide it either; 150 can.
    assert judge(rate, error_cells([25, 25, 25, 25], 50)).verdict == INCONCLUSIVE
    assert judge(rate, error_cells([38, 37, 38, 37], 50)).verdict == HOLDS


def test_the_design_effect_comes_from_the_spread_between_cells():
    clustered = clustered_error_interval([CellCount(50, 50)] + [CellCount(0, 50)] * 5)
    even = clustered_error_interval([CellCount(8, 50)] * 5 + [CellCount(10, 50)])
    assert "design effect" in clustered.method and "design effect" not in even.method
    # Both near 1/6 overall; clustered in one cell, the interval is far wider.
    assert clustered.high - clustered.low > 3 * (even.high - even.low)
    naive = clustered_error_interval([CellCount(50, 50)] + [CellCount(0, 50)] * 5, correct=False)
    assert naive.high - naive.low < clustered.high - clustered.low


def test_failures_clustered_in_one_cell_give_a_wide_interval():
    clustered = clustered_rate_interval([1.0, 0, 0, 0, 0, 0])
    spread = clustered_rate_interval([1 / 6] * 6)
    assert clustered.high > 0.65
    assert clustered.high == pytest.approx(spread.high)
    # Pooled over 6 x 400 calls as independent trials the same errors look far tighter.
    pooled = clopper_pearson(400, 2400)
    assert pooled.high - pooled.low < 0.04 < clustered.high - clustered.low
    verdict = judge(rate_claim(0.01, "less"), error_cells([400, 0, 0, 0, 0, 0], 400))
    assert verdict.verdict == INCONCLUSIVE
    assert "errors in 1 of 6 cells" in verdict.reason


def test_claims_file_entries_are_checked_by_key():
    with pytest.raises(ClaimsError, match=r"direction: 'bigger'"):
        claim(direction="bigger")
    with pytest.raises(ClaimsError, match="needs a denominator"):
        claim(denominator=None)
    with pytest.raises(ClaimsError, match="unknown key"):
        claim(colour="red")


# --- issue 18: how the data decide -----------------------------------------------------------


def test_the_effect_is_the_hodges_lehmann_factor_inside_its_interval():
    # Ratio of medians 10/1 = 10 would sit on the interval's edge; the pairwise median is 1.
    xs, ys = [1.0, 10.0, 10.0], [1.0, 1.0, 10.0]
    assert hodges_lehmann_ratio(xs, ys) == pytest.approx(1.0)
    assert hodges_lehmann_ratio([2.0, 4.0], [1.0, 1.0]) == pytest.approx(math.sqrt(8))
    verdict = judge(claim(), cells(unpaired([200, 210, 260], [100, 105, 110])))
    assert not verdict.deciding.paired
    assert verdict.interval.low <= verdict.effect <= verdict.interval.high
    assert verdict.effect == pytest.approx(hodges_lehmann_ratio([200, 210, 260], [100, 105, 110]))


def test_a_band_is_widened_by_the_noise_only_to_refute():
    # Issue 26 item 1: a 10% band with a 10% margin could never hold. Now the whole interval
    # inside the band holds where the margin is no wider than the band.
    central = cells(three_repeats([100, 101, 102], [99, 100, 101]))
    narrow = judge(claim(direction="within", threshold=0.1), central)
    assert narrow.verdict == HOLDS
    assert "widened" not in narrow.reason
    # A 5% band under the 10% margin: the same data cannot confirm it.
    tight = judge(claim(direction=None, threshold=None, bound={"within": 0.05}), central)
    assert tight.verdict == INCONCLUSIVE
    assert tight.reason == (
        "undecidable by this design (the run's 10% noise for rps exceeds the claim's 5% band: "
        "this run cannot confirm equivalence)"
    )
    near_edge = cells(three_repeats([125, 126, 127], [99, 100, 101]))
    inside_band = judge(claim(direction="within", threshold=0.3), near_edge)
    assert inside_band.interval.high < 1.3
    assert inside_band.verdict == HOLDS
    # Turned around: the same data against a 20% band lie wholly outside it.
    assert judge(claim(direction="within", threshold=0.2), near_edge).verdict == FAILS
    # Outside the 5% band widened to the 10% noise: a difference beyond the noise refutes.
    widened = judge(claim(direction=None, threshold=None, bound={"within": 0.05}), near_edge)
    assert widened.verdict == FAILS
    assert "its tolerance, 5%, widened to the run's 10% noise margin" in widened.reason


def test_a_band_reaching_across_its_edge_is_open_not_at_its_threshold():
    # 1.10x against a 10% band: the interval reaches across the edge 1.1 and lies within
    # the 10% noise zone around it. More rounds would settle it on one side (the edge is
    # where holding meets failing), so it stays open for the looks.
    edge = judge(
        claim(direction="within", threshold=0.1),
        cells(three_repeats([108, 110, 112], [99, 100, 101])),
    )
    assert edge.interval.low < 1.1 < edge.interval.high
    assert edge.verdict == INCONCLUSIVE
    assert edge.reason.startswith("the interval reaches across an edge of the band [0.909, 1.1]")
    # The same interval against "faster" at 1.1 sits in its noise zone: at its threshold.
    faster = judge(claim(threshold=1.1), cells(three_repeats([108, 110, 112], [99, 100, 101])))
    assert faster.verdict == AT_THRESHOLD


def test_noise_wider_than_the_band_cannot_confirm_equivalence():
    # throughput-mtls-about-tls-*: a 10% band under a 93% margin read "holds" for 1.18x,
    # inside the band widened to [0.519, 1.93].
    mtls = claim(direction="within", threshold=0.1, metric="rps")
    ratio_118 = cells(three_repeats([117, 118, 119], [99, 100, 101]))
    noisy = Judging(margin=0.93, source="test")
    verdict = judge(mtls, ratio_118, judging=noisy)
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.reason.startswith("undecidable by this design (the run's 93% noise for rps")
    assert "exceeds the claim's 10% band: this run cannot confirm equivalence" in verdict.reason
    # No difference at all cannot confirm it either under that noise...
    level = cells(three_repeats([100, 101, 102], [99, 100, 101]))
    assert judge(mtls, level, judging=noisy).verdict == INCONCLUSIVE
    # ...and does under a margin no wider than the band.
    assert judge(mtls, level, judging=Judging(margin=0.10, source="test")).verdict == HOLDS
    # A difference beyond the noise still refutes: 2.5x lies past 1.93.
    far = cells(three_repeats([249, 250, 251], [99, 100, 101]))
    assert judge(mtls, far, judging=noisy).verdict == FAILS
    # "About N" takes its stated tolerance the same way.
    about = claim(
        direction=None, threshold=None, bound={"about": 1.18, "tolerance": 0.1}, published=1.2
    )
    assert judge(about, ratio_118, judging=Judging(margin=0.10, source="test")).verdict == HOLDS
    assert judge(about, ratio_118, judging=Judging(margin=0.25, source="test")).verdict == (
        INCONCLUSIVE
    )


def test_not_worse_holds_past_its_stated_edge_never_the_noises():
    at_least = claim(direction=None, threshold=None, bound={"at_least": 1, "tolerance": 0.1})
    level = cells(three_repeats([100, 101, 102], [99, 100, 101]))
    quiet = Judging(margin=0.10, source="test")
    assert judge(at_least, level, judging=quiet).verdict == HOLDS
    # A numerator 0.6 as fast: inside the edge 1 / 1.93 a 93% margin would set, not 1 / 1.1.
    slow = cells(three_repeats([59, 60, 61], [99, 100, 101]))
    noisy = Judging(margin=0.93, source="test")
    verdict = judge(at_least, slow, judging=noisy)
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.reason == (
        "undecidable by this design (the run's 93% noise for rps exceeds the shortfall the "
        "claim allows (10%): this run confirms 'not slower' only by an interval wholly at or "
        "past 1.75)"
    )
    # Under the quiet margin the same data lie short of 1 / 1.1: they refute it.
    assert judge(at_least, slow, judging=quiet).verdict == FAILS
    # A lead clear of the stated edge by the noise confirms it even under that noise.
    ahead = cells(three_repeats([199, 200, 201], [99, 100, 101]))
    clear = judge(at_least, ahead, judging=noisy)
    assert clear.verdict == HOLDS
    assert "the claim's edge 0.909 cleared by the run's 93% noise" in clear.reason
    # "At least as fast" with no tolerance: level data sit inside the noise, a 20% lead not.
    as_fast = claim(direction=None, threshold=None, bound={"at_least": 1})
    assert judge(as_fast, level, judging=quiet).verdict == INCONCLUSIVE
    lead = cells(three_repeats([119, 120, 121], [99, 100, 101]))
    assert judge(as_fast, lead, judging=quiet).verdict == HOLDS


def four_configurations(last: list[float], repeats: int = 3) -> list[tuple]:
    """Three configurations where a clearly beats b, and a fourth where a's values are `last`."""
    base = [100.0 + i for i in range(repeats)]
    rows = []
    for concurrency in (2, 10, 25):
        rows += [("a", concurrency, r + 1, 2 * v) for r, v in enumerate(base)]
        rows += [("b", concurrency, r + 1, v) for r, v in enumerate(base)]
    rows += [("a", 50, r + 1, v) for r, v in enumerate(last)]
    rows += [("b", 50, r + 1, v) for r, v in enumerate(base)]
    return rows


def test_one_marginal_failure_of_four_configurations_does_not_refute_alone():
    # Per-round ratios 0.69, 0.74, 0.79: below 1 / 1.1 at 95%, not at the 97.5% alone.
    verdict = judge(claim(), cells(four_configurations([69.14, 74.82, 80.96])))
    assert [pair.verdict for pair in verdict.pairs] == [HOLDS, HOLDS, HOLDS, FAILS]
    assert verdict.verdict == INCONCLUSIVE
    assert "1 of 4 configurations do not hold at 90%" in verdict.reason
    assert "reaches back (one of 4 configurations needs a 97.5% interval alone" in verdict.reason
    assert highest_ratio_coverage(3, 3) == pytest.approx(0.9)


def test_one_decisive_failure_of_four_configurations_still_refutes():
    # Five repeats a side reach 98%, past the 97.5% one of four configurations needs alone.
    verdict = judge(claim(), cells(four_configurations([40, 41, 42, 43, 44], repeats=5)))
    assert verdict.verdict == FAILS
    assert verdict.deciding.key == {"concurrency": "50"}
    assert "lies past too (one of 4 configurations needs a 97.5% interval alone" in verdict.reason
    # And every configuration failing refutes whatever their number.
    # Unpaired 3 vs 3 reach 90%, not the 95% alone: every configuration failing refutes.
    rows = unpaired([60, 61, 62], [100, 101, 102], 2) + unpaired([60, 61, 62], [100, 101, 102], 10)
    every = judge(claim(), cells(rows))
    assert every.verdict == FAILS
    assert "and so does every one of 2 configurations" in every.reason
    assert "and so does every one" not in verdict.reason


def test_a_refutation_alone_needs_its_wider_interval_to_stay_past():
    wide = Interval(0.5, 0.95, 0.98, "exact Mann-Whitney interval")
    past = Interval(0.5, 0.8, 0.98, "exact Mann-Whitney interval")
    short = Interval(0.5, 0.8, 0.90, "exact Mann-Whitney interval")
    refutes, why = refutation_alone(claim(), lambda target: wide, 4, Judging(), "")
    assert not refutes and "reaches back" in why
    refutes, why = refutation_alone(claim(), lambda target: past, 4, Judging(), "")
    assert refutes and "lies past too" in why
    refutes, why = refutation_alone(claim(), lambda target: short, 4, Judging(), "out of reach")
    assert not refutes and why.endswith("(Bonferroni), out of reach")
    assert refutation_alone(claim(), lambda target: short, 1, Judging(), "") == (True, "")


def test_a_lower_bound_keeps_a_result_at_its_threshold_undecided():
    close = three_repeats([104, 105, 106], [100, 100.5, 101])
    bound = [(i, c, r, v, "bound") if i == "a" else (i, c, r, v) for i, c, r, v in close]
    verdict = judge(claim(), cells(bound))
    assert verdict.verdict == INCONCLUSIVE
    assert "but a side is a lower bound" in verdict.reason
    assert judge(claim(), cells(close)).verdict == AT_THRESHOLD


def test_the_margin_is_a_parameter_never_below_ten_percent():
    lead = cells(three_repeats([130, 131, 132], [99, 100, 101]))
    assert judge(claim(), lead).verdict == HOLDS
    drifty = judging_from_noise_floor(0.35, "A/A cells of hello")
    assert drifty.margin == pytest.approx(0.35)
    assert "noise floor, measured on A/A cells of hello" in drifty.sentence()
    assert judge(claim(), lead, judging=drifty).verdict == AT_THRESHOLD
    quiet = judging_from_noise_floor(0.04)
    assert quiet.margin == pytest.approx(0.10)
    assert "4% measured on its A/A cells, is below it" in quiet.source
    assert "no A/A cells" in Judging().sentence()
    with pytest.raises(ValueError, match="below 10%"):
        Judging(margin=0.05)


def test_only_floored_metrics_of_bound_cells_are_lower_bounds():
    rows = cells(three_repeats([50, 52, 55], [100, 105, 110])).assign(status="bound")
    assert lower_bounds(rows)
    assert not lower_bounds(rows.assign(metric="latency_p50"))
    # The effective ceiling (mark_lower_bounds) overrules the status recorded at run time.
    assert not lower_bounds(rows.assign(lower_bound=False))
    assert lower_bounds(rows.assign(lower_bound=True, status="ok"))
    latency = claim(metric="latency_p50", direction="less")
    assert judge(latency, rows.assign(metric="latency_p50")).verdict == HOLDS
    assert judge(claim(direction="less"), rows).verdict == INCONCLUSIVE


def test_failed_cells_are_said_and_never_silently_dropped():
    rows = cells(three_repeats([200, 210, 220], [100, 105, 110]))
    failed = cells([("a", 2, 4, 1.0, "failed")]).assign(metric="failed")
    verdict = judge(claim(), pd.concat([rows, failed]))
    assert verdict.verdict == INCONCLUSIVE
    assert verdict.deciding.failed_cells == 1
    assert "1 of its cells failed" in verdict.reason
    assert "1 failed cell(s)" in verdict.configurations()[0]
    assert judge(claim(), rows).verdict == HOLDS
    # A configuration whose every numerator cell failed stays, with no interval.
    lost = cells([("a", 10, r, 1.0, "failed") for r in (1, 2, 3)]).assign(metric="failed")
    others = cells([("b", 10, r, 100.0 + r) for r in (1, 2, 3)])
    both = judge(claim(), pd.concat([rows, lost, others]))
    assert [pair.where() for pair in both.pairs] == ["concurrency=2", "concurrency=10"]
    assert both.pairs[1].interval is None and both.pairs[1].failed_cells == 3


def test_configurations_and_the_seeds_coverage_are_listed():
    rows = three_repeats([200, 210, 220], [100, 105, 110], 2) + three_repeats(
        [300, 310, 320], [100, 105, 110], 10
    )
    stated = claim(seed_configurations={"concurrency": [2, 10, 25, 50]})
    verdict = judge(stated, cells(rows))
    assert verdict.coverage() == "The run covers concurrency 2, 10 of the seed's 2, 10, 25, 50."
    lines = verdict.configurations()
    assert lines[0].startswith("concurrency=2: 2.00x [") and lines[0].endswith("holds (decides)")
    assert lines[1].startswith("concurrency=10: ") and "decides" not in lines[1]
    # The deciding interval's label is said once, beside the verdict; a different one is kept.
    assert "paired t" not in lines[0] and "paired t" in verdict.measured()
    fewer = [row for row in rows if not (row[1] == 10 and row[2] == 3)]
    mixed = judge(stated, cells(fewer)).configurations()
    # 2 vs 3 repeats at concurrency 10 (80%) now decide; concurrency 2's interval, at the
    # coverage its decision needs, is labelled.
    assert mixed[0].endswith(f"({percent(DECIDING_COVERAGE)} paired t interval of 3 rounds), holds")
    assert "Mann-Whitney" not in mixed[1] and mixed[1].endswith("inconclusive (decides)")
    assert judge(claim(), cells(rows)).coverage() == ""
    with pytest.raises(ClaimsError, match="seed_configurations"):
        claim(seed_configurations={"concurrency": 2})


def test_a_list_of_values_selects_any_of_them_and_the_coverage_says_which():
    rows = (
        three_repeats([200, 210, 220], [100, 105, 110], 2)
        + three_repeats([300, 310, 320], [100, 105, 110], 10)
        + three_repeats([300, 310, 320], [100, 105, 110], 25)
    )
    listed = {"implementation": "a", "scenario": "steady", "params": {"concurrency": [10, 25]}}
    against = {"implementation": "b", "scenario": "steady", "params": {"concurrency": [10, 25]}}
    stated = claim(
        numerator=listed,
        denominator=against,
        seed_configurations={"concurrency": [10, 25, 50]},
    )
    verdict = judge(stated, cells(rows))
    assert [pair.where() for pair in verdict.pairs] == ["concurrency=10", "concurrency=25"]
    assert verdict.coverage() == "The run covers concurrency 10, 25 of the seed's 10, 25, 50."
    one = judge(
        claim(numerator={**listed, "params": {"concurrency": 2}}, denominator=against), cells(rows)
    )
    assert one.verdict == NOT_MEASURED


def test_coverages_are_stated_as_what_they_are():
    assert percent(0.9) == "90%"
    assert percent(0.975) == "97.5%"
    assert percent(1 - 0.1 / 3) == "96.6%"


# --- pairing within rounds ------------------------------------------------------------------

# The host slows down round after round (each round twice as slow as the last): both groups
# of a round feel it alike.
DRIFT = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
# a is 1.5x b in every round, give or take 1%.
JITTER = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0]


def drifting_rounds(a_rounds: list[int], b_rounds: list[int]) -> list[tuple]:
    return [("a", 2, r, 150 * JITTER[r - 1] / DRIFT[r - 1]) for r in a_rounds] + [
        ("b", 2, r, 100 / DRIFT[r - 1]) for r in b_rounds
    ]


def test_a_drift_between_rounds_cancels_when_the_rounds_pair():
    rounds = [1, 2, 3, 4, 5, 6]
    verdict = judge(claim(threshold=1.2), cells(drifting_rounds(rounds, rounds)))
    assert verdict.verdict == HOLDS
    assert verdict.deciding.paired
    assert "paired t interval of 6 rounds" in verdict.interval.method
    assert verdict.effect == pytest.approx(1.5, rel=0.01)
    assert 1.45 < verdict.interval.low <= verdict.interval.high < 1.55
    # Unpaired, the same values spread over the whole drift and decide nothing.
    xs = [v for impl, _, _, v in drifting_rounds(rounds, rounds) if impl == "a"]
    ys = [v for impl, _, _, v in drifting_rounds(rounds, rounds) if impl == "b"]
    unpaired = ratio_interval(xs, ys)
    assert unpaired.low < 1.2 < unpaired.high


def test_rounds_that_do_not_pair_fall_back_to_the_unpaired_interval():
    # a ran in rounds 1-3, b in 4-6: no round holds both, so nothing cancels.
    verdict = judge(claim(threshold=1.2), cells(drifting_rounds([1, 2, 3], [4, 5, 6])))
    assert not verdict.deciding.paired
    assert "Mann-Whitney" in verdict.interval.method
    assert verdict.effect == pytest.approx(
        hodges_lehmann_ratio(
            [150 * JITTER[r - 1] / DRIFT[r - 1] for r in (1, 2, 3)],
            [100 / DRIFT[r - 1] for r in (4, 5, 6)],
        )
    )
    # A round with one group only is left out: the rest pair (a look that repeated one
    # side for another claim must not cost this one its pairing).
    uneven = judge(
        claim(threshold=1.2), cells(drifting_rounds([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5]))
    )
    assert uneven.deciding.paired
    assert (uneven.deciding.n_numerator, uneven.deciding.n_denominator) == (5, 5)
    # Fewer than 3 shared rounds pair no more than before: unpaired over every cell.
    scant = judge(claim(threshold=1.2), cells(drifting_rounds([1, 2, 3, 4], [3, 4, 5, 6])))
    assert not scant.deciding.paired
    assert (scant.deciding.n_numerator, scant.deciding.n_denominator) == (4, 4)


def test_three_paired_rounds_decide_with_the_paired_t_interval():
    # Issue 26 item 7: a sign interval of 3 rounds covers 75% at most, so pairing was never
    # used at the base look. Student's t on the log ratios reaches any coverage at 3 rounds.
    verdict = judge(claim(), cells(three_repeats([150, 151, 152], [100, 101, 102])))
    assert verdict.verdict == HOLDS
    assert verdict.deciding.paired and "paired t interval of 3 rounds" in verdict.interval.method
    interval = paired_log_t_interval([(150, 100), (151, 101), (152, 102)], 0.9)
    assert interval.coverage == 0.9 and interval.low < 1.5 < interval.high
    # Two rounds are not paired (one degree of freedom): 2 vs 2 unpaired cannot decide.
    two = judge(claim(), cells(three_repeats([150, 151], [100, 101])))
    assert not two.deciding.paired and two.verdict == INCONCLUSIVE


def test_paired_sign_interval_has_the_order_statistic_coverage():
    pairs = [(x, 1.0) for x in (1.1, 1.2, 1.3, 1.4, 1.5, 1.6)]
    interval = paired_ratio_interval(pairs, 0.95)
    assert interval.coverage == pytest.approx(1 - 2 / 64)  # [min, max] of 6: 96.9%
    assert (interval.low, interval.high) == (1.1, 1.6)
    assert paired_ratio_effect(pairs) == pytest.approx(math.sqrt(1.3 * 1.4))
    assert paired_ratio_interval([(1.0, 0.0), (1.0, 1.0)]) is None


def test_the_coverage_says_the_scale_of_a_scaled_value_it_names_as_covered():
    scaled = "quick: the large folder is 150 of the seed's 1 000 pairs (0.15x its 50 MB)"
    listed = {"implementation": "a", "scenario": "steady", "params": {"folder": "large"}}
    against = {"implementation": "b", "scenario": "steady", "params": {"folder": "large"}}
    rows = cells(three_repeats([200, 210, 220], [100, 105, 110]))
    large = rows.assign(folder="large")
    stated = dict(
        numerator=listed,
        denominator=against,
        pair_by=[],
        seed_configurations={"folder": ["small", "medium", "large"]},
    )
    said = judge(claim(**stated, scaled=scaled), large).coverage()
    assert said == (
        "The run covers folder large of the seed's small, medium, large"
        ' (large scaled down: see "Scaled folder").'
    )
    # No `scaled`, or a scaled value the run does not cover: the coverage says no scale.
    assert "scaled" not in judge(claim(**stated), large).coverage()
    small = {**stated, "numerator": {**listed, "params": {"folder": "small"}}}
    small["denominator"] = {**against, "params": {"folder": "small"}}
    assert judge(claim(**small, scaled=scaled), rows.assign(folder="small")).coverage() == (
        "The run covers folder small of the seed's small, medium, large."
    )
