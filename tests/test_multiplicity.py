"""The false-discovery control across readings (perflab.analysis.multiplicity)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from perflab.analysis.decisions import FAILS, HOLDS, decide
from perflab.analysis.multiplicity import (
    benjamini_yekutieli,
    discoveries,
    paired_interval,
    reading_p,
)
from perflab.analysis.verdicts import judge
from tests.test_verdicts import cells, claim, three_repeats, unpaired


def test_the_step_up_keeps_the_smallest_p_values_under_its_line():
    # 4 tested, harmonic sum 1 + 1/2 + 1/3 + 1/4 = 25/12: rank k kept if p <= k 0.1 / (4 25/12).
    line = [k * 0.1 / (4 * 25 / 12) for k in (1, 2, 3, 4)]
    p = {"a": line[0] / 2, "b": line[1] * 0.99, "c": line[2] * 1.01, "d": 0.5}
    assert benjamini_yekutieli(p, 4) == {"a", "b"}
    # A fourth p under its own line keeps every smaller one too (step-up, not step-down).
    assert benjamini_yekutieli({**p, "d": line[3]}, 4) == {"a", "b", "c", "d"}
    # Untested ids count: the same p-values among 40 readings keep none.
    assert benjamini_yekutieli(p, 40) == set()


def test_a_paired_readings_p_is_where_its_verdict_stops_standing():
    verdict = judge(claim(), cells(three_repeats([150, 160, 140], [100, 101, 99])))
    assert verdict.verdict == HOLDS and verdict.deciding.paired
    p = reading_p(verdict, family_alpha=0.10)  # no look: the base look spends the whole 10%
    assert 0 < p < 0.10
    margin = verdict.judging.margin
    pair = verdict.deciding

    def stands(coverage: float) -> bool:
        found, _ = decide(paired_interval(pair, coverage), verdict.claim.bound, margin, coverage)
        return found == HOLDS

    assert stands(1 - p * 1.01) and not stands(1 - p * 0.99)
    # The same interval at the deciding coverage: what the engine itself computed.
    again = paired_interval(pair, verdict.judging.coverage)
    assert again.low == pytest.approx(pair.interval.low)
    assert again.high == pytest.approx(pair.interval.high)


def test_a_look_weights_the_p_value_by_its_share_of_the_family_error():
    verdict = judge(claim(), cells(three_repeats([150, 160, 140], [100, 101, 99])))
    alone = reading_p(verdict, family_alpha=0.10)
    # Over quick's looks (10% + 4%) a base-look verdict's p counts 1.4 times.
    assert reading_p(verdict, family_alpha=0.14) == pytest.approx(alone * 1.4)


def test_an_unpaired_reading_counts_at_the_level_it_was_decided():
    verdict = judge(claim(), cells(unpaired([150, 151, 152, 153], [100, 101, 102, 103])))
    assert verdict.verdict == HOLDS and not verdict.deciding.paired
    assert reading_p(verdict, family_alpha=0.10) == pytest.approx(0.10)


def test_a_refutation_is_tested_on_its_own_side():
    behind = judge(claim(), cells(three_repeats([60, 62, 61], [100, 101, 99])))
    assert behind.verdict == FAILS
    p = reading_p(behind, family_alpha=0.10)
    assert 0 < p < 0.10
    # Read as "holds" it has no p of its own below the level: it does not hold.
    assert reading_p(replace(behind, verdict=HOLDS), 0.10) == pytest.approx(0.10)


def test_the_sentence_says_how_many_decided_readings_the_control_keeps():
    clear = [
        judge(claim(id=f"clear-{k}"), cells(three_repeats([150, 151, 149], [100, 100.5, 99.5])))
        for k in range(3)
    ]
    kept = discoveries(clear, family_alpha=0.10)
    assert (kept.measured, kept.decided, len(kept.kept)) == (3, 3, 3)
    assert "keeps 3 of the 3 decided readings; the other 0" in kept.sentence()
    # Turned around: readings that only just clear their line at 90% are not kept once
    # there are many of them.
    close = [
        judge(claim(id=f"close-{k}"), cells(three_repeats([150, 125, 175], [100, 100, 100])))
        for k in range(3)
    ]
    assert all(v.verdict == HOLDS for v in close)
    weak = discoveries(close, family_alpha=0.10)
    assert len(weak.kept) == 0
    assert "keeps 0 of the 3 decided readings; the other 3 stand at their own coverage only" in (
        weak.sentence()
    )


def test_the_index_headline_says_how_many_decided_readings_survive_the_correction():
    from perflab.analysis.replication import Replication, headline_html

    clear = [
        judge(claim(id=f"clear-{k}"), cells(three_repeats([150, 151, 149], [100, 100.5, 99.5])))
        for k in range(3)
    ]
    (lead, _) = headline_html(Replication("run-a", clear))
    assert (
        "at a 10% false-discovery rate across the readings, 3 of the 3 decided ones stand" in lead
    )
    close = [
        judge(claim(id=f"close-{k}"), cells(three_repeats([150, 125, 175], [100, 100, 100])))
        for k in range(3)
    ]
    (lead, _) = headline_html(Replication("run-a", close))
    assert "0 of the 3 decided ones stand (" in lead
    (lead, _) = headline_html(Replication("run-a", [clear[0], *close]))
    assert "1 of the 4 decided ones stands (" in lead
