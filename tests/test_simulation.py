"""The simulation suite, short: the engine's intervals keep their labelled coverage through
the real judging code, and lose it when a correction is removed (issue 26, item 4). The
full suite (10 000 trials a case) is `make simulate`, written to data/reference/simulation.json."""

from __future__ import annotations

import pytest

from perflab.analysis.simulation import CASES, simulate

TRIALS = 200
BY_NAME = {case.name: case for case in CASES}
# The cases whose correction matters: unequal spreads unpaired (the Moses interval assumes
# a shift only), and failures clustered in cells counted as independent calls.
NEEDS_CORRECTION = ("SD ratio 10, 3 rounds", "error rate 20%, clustered (ICC 0.3)")


@pytest.mark.parametrize(
    "name",
    [
        "SD ratio 10, 3 rounds",
        "SD ratio 10, round effects, 4 configurations",
        "error rate 20%, clustered (ICC 0.3)",
    ],
)
def test_intervals_keep_their_labelled_coverage(name):
    result = simulate(BY_NAME[name], TRIALS)
    assert result.passes(), result.line()
    # A claim on its own limit is decided no more often than the interval's two tails allow.
    allowed = 1 - result.label + 3 * (result.label * (1 - result.label) / result.trials) ** 0.5
    assert result.decided / result.trials <= allowed, result.line()


@pytest.mark.parametrize("name", NEEDS_CORRECTION)
def test_the_suite_fails_when_the_correction_is_removed(name):
    result = simulate(BY_NAME[name], TRIALS, corrections=False)
    assert not result.passes(), result.line()
