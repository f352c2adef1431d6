"""Power per claim (issue 26 item 5): said before measuring, and borne out by simulated runs
judged by the real engine."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from perflab.analysis.claims import BAND, DIRECTION, NOT_WORSE, Bound
from perflab.analysis.power import claim_power, null_effect, rounds_for
from perflab.analysis.simulation import Case, ratio_claim, ratio_rows
from perflab.analysis.verdicts import HOLDS, Judging, judge

FASTER = Bound(DIRECTION, "greater", 1.0)


def test_power_grows_with_rounds_and_falls_with_noise():
    quiet = claim_power(FASTER, 1.5, sigma=0.05, rounds=3, margin=0.1)
    assert quiet.holds > 0.9 and quiet.refutes > 0.9
    noisy = claim_power(FASTER, 1.5, sigma=0.5, rounds=3, margin=0.1)
    assert noisy.holds < 0.5
    assert claim_power(FASTER, 1.5, sigma=0.5, rounds=12, margin=0.1).holds > noisy.holds
    assert "holds' at the seed's figure" in quiet.sentence()


def test_a_figure_inside_the_margin_is_undecidable_by_design():
    # The seed's 1.05 lies inside a 10% margin: no number of rounds makes it hold.
    assert rounds_for(FASTER, 1.05, sigma=0.05, margin=0.10) is None
    assert rounds_for(FASTER, 1.5, sigma=0.2, margin=0.10) is not None
    band = Bound(BAND, tolerance=0.1)
    assert claim_power(band, 1.0, sigma=0.03, rounds=5, margin=0.1).holds > 0.8


def test_simulated_runs_at_the_seeds_figure_hold_as_often_as_the_power_says():
    sigma, rounds, margin, trials = 0.15, 4, 0.10, 120
    stated = claim_power(FASTER, 1.4, sigma=sigma, rounds=rounds, margin=margin)
    # Per-round log ratio SD sigma: each group's cell SD is sigma / sqrt(2).
    case = Case("power", truth=1.4, sigma=sigma / math.sqrt(2), rounds=rounds)
    claim = ratio_claim(Case("limit", truth=1.0))
    rng = random.Random(5)
    judging = Judging(margin=margin, source="test")
    held = 0
    for _ in range(trials):
        frame = pd.DataFrame(ratio_rows(case, rng)).astype({"concurrency": "Int64"})
        held += judge(claim, frame, judging=judging).verdict == HOLDS
    error = 3 * math.sqrt(stated.holds * (1 - stated.holds) / trials) + 3 * stated.error
    assert held / trials >= stated.holds - error


def test_the_null_of_a_figure_near_its_limit_is_one_the_rule_can_refute():
    # hello-grpclib-uvloop-at-least-asyncio: "at least as fast", the seed's 1.11 under an
    # 18% margin. Mirrored across 1 the null was 0.90, above the edge 1 / 1.18 a "does not
    # hold" must fall short of: 0% refutes by construction.
    at_least = Bound(NOT_WORSE, "greater", 1.0)
    (edge,) = at_least.edges(0.18)
    null = null_effect(at_least, 1.11, 0.18)
    assert null == edge / 1.18
    assert claim_power(at_least, 1.11, sigma=0.05, rounds=5, margin=0.18).refutes > 0.9
    # A direction's figure inside the noise zone: its mirror, 0.95, was inside it too.
    assert math.isclose(null_effect(FASTER, 1.05, 0.10), 1 / 1.1**2)
    assert claim_power(FASTER, 1.05, sigma=0.03, rounds=5, margin=0.10).refutes > 0.9
    # A figure far past its limit keeps its mirror, already past the edge.
    assert null_effect(FASTER, 2.0, 0.10) == 0.5
    assert null_effect(Bound(DIRECTION, "less", 1.0), 0.5, 0.10) == 2.0


def test_a_band_narrower_than_the_noise_has_no_power_to_hold():
    band = Bound(BAND, tolerance=0.1)
    assert claim_power(band, 1.0, sigma=0.03, rounds=5, margin=0.1).holds > 0.8
    assert claim_power(band, 1.0, sigma=0.03, rounds=5, margin=0.93).holds == 0
    assert rounds_for(band, 1.0, sigma=0.03, margin=0.93) is None
    assert rounds_for(band, 1.0, sigma=0.03, margin=0.10) is not None


def test_the_batch_intervals_are_the_engines_paired_t_intervals():
    import numpy as np

    from perflab.analysis.intervals import paired_log_t_bounds, paired_log_t_interval

    rng = random.Random(7)
    for rounds in (2, 3, 5, 10):
        rows = [[rng.gauss(0.1, 0.3) for _ in range(rounds)] for _ in range(50)]
        lows, highs = paired_log_t_bounds(np.array(rows), 0.9)
        for row, low, high in zip(rows, lows, highs, strict=True):
            one = paired_log_t_interval([(math.exp(x), 1.0) for x in row], 0.9)
            assert one is not None
            assert low == pytest.approx(one.low, rel=1e-12)
            assert high == pytest.approx(one.high, rel=1e-12)
    # A wider target widens both ends, as the scalar interval does.
    wide_low, wide_high = paired_log_t_bounds(np.array(rows), 0.99)
    assert (wide_low < lows).all() and (wide_high > highs).all()
