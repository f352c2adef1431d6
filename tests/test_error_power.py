"""Error-rate claims' power on the index (issue 26): the batch interval is the engine's, and
the power it states is what judging simulated runs with the real verdict code gives, at the
seed's rate and at the null, each case beside one where it must come out the other way."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from perflab.analysis.claims import DIRECTION, Bound
from perflab.analysis.design_power import design_power, powers_sentence
from perflab.analysis.error_power import error_null, error_power
from perflab.analysis.intervals import (
    CellCount,
    clustered_error_bounds,
    clustered_error_interval,
    intraclass_correlation,
)
from perflab.analysis.simulation import Case, rate_claim, rate_rows
from perflab.analysis.verdicts import FAILS, HOLDS, Judging, judge

# Error rates are judged with no margin (verdicts.margin_for), at the base look's 90%.
JUDGING = Judging()


@pytest.mark.parametrize(
    "errors, calls",
    [
        ([0, 0, 0], [50, 50, 50]),
        ([50, 50, 50], [50, 50, 50]),
        ([8, 9, 10, 12], [50, 50, 50, 50]),
        ([50, 0, 0, 0, 0, 0], [50] * 6),
        ([30, 2, 45, 7, 19], [40, 60, 50, 55, 45]),
        ([145], [200]),
        ([3, 0], [1000, 20]),
    ],
)
def test_the_batch_interval_is_the_engines(errors, calls):
    lows, highs = clustered_error_bounds(np.array([errors, errors]), calls, 0.9)
    one = clustered_error_interval(
        [CellCount(e, c) for e, c in zip(errors, calls, strict=True)], 0.9
    )
    for low, high in zip(lows, highs, strict=True):
        assert math.isclose(low, one.low, abs_tol=1e-9)
        assert math.isclose(high, one.high, abs_tol=1e-9)


def test_the_null_mirrors_the_seeds_rate_across_the_limit():
    assert error_null(Bound(DIRECTION, "greater", 0.5), 0.75) == pytest.approx(0.25)
    assert error_null(Bound(DIRECTION, "less", 0.05), 0.0) == pytest.approx(0.10)
    assert error_null(Bound(DIRECTION, "greater", 0.25), 0.73) == 0.0


def test_clustering_is_read_from_the_spread_between_cells():
    assert intraclass_correlation([CellCount(0, 50)] * 4) == 0.0
    assert intraclass_correlation([CellCount(25, 50)] * 4) == 0.0
    assert intraclass_correlation([CellCount(50, 50), CellCount(0, 50)] * 2) > 0.9


def simulated_shares(
    bound: Bound, rate: float, cells: int, calls: int, icc: float, trials: int
) -> tuple[float, float]:
    """The shares of 'holds' and 'does not hold' judging simulated cells with the engine's
    own code (verdicts.judge over rows, one interval at a time), drawn independently of
    error_power's numpy stream."""
    claim = replace(rate_claim(Case("claim", truth=0.5)), bound=bound)
    case = Case("run", truth=rate, kind="error_rate", rounds=cells, calls=calls, icc=icc)
    rng = random.Random(2026)
    tally = {HOLDS: 0, FAILS: 0}
    for _ in range(trials):
        verdict = judge(claim, pd.DataFrame(rate_rows(case, rng)), judging=JUDGING).verdict
        tally[verdict] = tally.get(verdict, 0) + 1
    return tally[HOLDS] / trials, tally[FAILS] / trials


@pytest.mark.parametrize(
    "bound, seed_rate, cells, calls, icc",
    [
        # "Most stream calls fail" (> 50%) at the seed's 72.5%, clustered as a far S3 is.
        (Bound(DIRECTION, "greater", 0.5), 0.725, 9, 50, 0.2),
        # "No errors" (< 5%): the seed's 0 failures, calls independent.
        (Bound(DIRECTION, "less", 0.05), 0.0, 9, 50, 0.0),
    ],
)
def test_the_stated_power_is_what_the_real_rule_gives(bound, seed_rate, cells, calls, icc):
    trials = 150
    power = error_power(bound, seed_rate, [calls] * cells, icc)
    holds = simulated_shares(bound, seed_rate, cells, calls, icc, trials)[0]
    refutes = simulated_shares(bound, error_null(bound, seed_rate), cells, calls, icc, trials)[1]
    # Within three Monte Carlo errors of the smaller simulation.
    for stated, seen in ((power.holds, holds), (power.refutes, refutes)):
        error = math.sqrt(max(stated * (1 - stated), 0.01) / trials)
        assert abs(stated - seen) <= 3 * error + 1e-9


def test_too_few_calls_cannot_confirm_no_errors_and_the_power_says_so():
    # 40 calls with none failing: the 90% interval's top, 1 - 0.05^(1/40) = 7.2%, stays
    # above 5%; with 450 calls it falls to 0.7%.
    few = error_power(Bound(DIRECTION, "less", 0.05), 0.0, [20, 20], 0.0)
    many = error_power(Bound(DIRECTION, "less", 0.05), 0.0, [50] * 9, 0.0)
    assert few.holds == 0.0 and not few.reaches(0.8)
    assert many.holds == 1.0 and many.reaches(0.8)


def judged_rate(rate: float, cells: int, icc: float, seed: int = 4):
    claim = replace(rate_claim(Case("claim", truth=0.5)), published=0.725)
    case = Case("run", truth=rate, kind="error_rate", rounds=cells, calls=50, icc=icc)
    rows = pd.DataFrame(rate_rows(case, random.Random(seed)))
    return judge(claim, rows, judging=JUDGING)


def test_the_index_states_an_error_rates_power_in_rates_and_cells():
    verdict = judged_rate(0.75, cells=9, icc=0.05)
    assert verdict.verdict == HOLDS
    power = design_power(verdict)
    assert power.power is not None and power.rate
    assert power.priced().startswith("at the seed's 72.5%: ")
    assert "at the null 27.5%" in power.priced()
    assert power.short().startswith("9 cells; ")
    said = power.sentence()
    assert said.startswith("Well powered: with 9 cells")
    assert "clustered Clopper-Pearson interval at 90%" in said
    assert "'does not hold' were it the null 27.5%" in said


def test_an_open_error_rate_says_how_many_cells_would_decide_it():
    # Two cells, failures clustered: the interval cannot clear 50% either way.
    verdict = judged_rate(0.55, cells=2, icc=0.3, seed=5)
    power = design_power(verdict)
    assert power.open and power.power is not None and not power.decisive
    assert power.sentence().startswith("Underpowered: with 2 cells")
    assert "cells would reach 80% both ways" in power.sentence() or (
        "no design up to 30 cells" in power.sentence()
    )


def test_the_sentence_names_why_each_claim_was_not_computed():
    verdict = judged_rate(0.75, cells=9, icc=0.05)
    unfigured = design_power(replace(verdict, claim=replace(verdict.claim, published=None)))
    unmeasured = design_power(replace(verdict, deciding=None))
    said = powers_sentence([design_power(verdict), unfigured, unmeasured])
    assert said.endswith(
        "; 2 not computed (1 not measured, 1 the seed publishes no figure to test)."
    )


def test_a_figure_that_is_no_rate_is_said_not_simulated():
    verdict = judged_rate(0.75, cells=9, icc=0.05)
    odd = design_power(replace(verdict, claim=replace(verdict.claim, published=1.5)))
    assert odd.power is None and odd.reason == "its figure 1.5 is not a rate"
