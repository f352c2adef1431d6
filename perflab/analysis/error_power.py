"""An error-rate claim's power under a design: the chance that its cells read "holds" when
the true rate is the seed's, and "does not hold" at the null.

The ratio claims' power (perflab.analysis.power) draws per-round log ratios; an error rate
is judged over calls, in an interval that allows for failures clustering within a cell
(intervals.clustered_error_interval). So each simulated run here has the cells the run had
(their calls), each cell's own rate drawn from a beta distribution around the true rate
with the intraclass correlation the run measured (failures that come in whole cells, as a
server that drops its streams does), its failures binomial over its calls, and the engine's
interval (in numpy, intervals.clustered_error_bounds) decided by the engine's rule
(decisions.decide, no margin: an error rate is not a ratio of two noisy groups).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perflab.analysis.claims import Bound
from perflab.analysis.decisions import DECIDING_COVERAGE
from perflab.analysis.intervals import clustered_error_bounds
from perflab.analysis.power import Power, decided_shares, fewest_rounds

TRIALS = 1000
SEARCH_TRIALS = 200


def error_null(bound: Bound, published: float) -> float:
    """The rate as far on the wrong side of the limit as the seed's is on the right
    (clipped to [0, 1]): 0.75 against "more than 50%" mirrors to 0.25, "no errors" (0)
    against "under 5%" to 10%."""
    return min(1.0, max(0.0, 2 * bound.limit - published))


def error_shares(
    bound: Bound,
    rate: float,
    calls: Sequence[int],
    icc: float,
    trials: int,
    seed: int = 26,
) -> tuple[float, float]:
    """The shares of simulated runs of cells with `calls` that read "holds" and "does not
    hold" at a true `rate`, each cell's rate spread around it with intraclass correlation
    `icc`."""
    import numpy as np

    rng = np.random.default_rng(seed)
    counts = np.asarray([c for c in calls if c > 0], dtype=np.int64)
    if not len(counts):
        return 0.0, 0.0
    shape = (trials, len(counts))
    if 0 < rate < 1 and icc > 0:
        spread = (1 - icc) / icc
        rates = rng.beta(rate * spread, (1 - rate) * spread, size=shape)
    else:
        rates = np.full(shape, rate)
    errors = rng.binomial(counts, rates)
    lows, highs = clustered_error_bounds(errors, counts.tolist(), DECIDING_COVERAGE)
    return decided_shares(lows, highs, bound, 0.0, f"clustered interval over {len(counts)} cells")


def error_power(
    bound: Bound, published: float, calls: Sequence[int], icc: float, trials: int = TRIALS
) -> Power:
    """The design's power for an error-rate claim, its cells' calls `calls`: "rounds" are
    its cells (one a round)."""
    holds = error_shares(bound, published, calls, icc, trials)[0]
    refutes = error_shares(bound, error_null(bound, published), calls, icc, trials)[1]
    error = max(math.sqrt(p * (1 - p) / trials) for p in (holds, refutes))
    return Power(holds, refutes, len(calls), error)


def cells_like(calls: Sequence[int], cells: int) -> list[int]:
    """`cells` cells of the run's typical size (its median calls per cell)."""
    ordered = sorted(calls)
    return [ordered[len(ordered) // 2]] * cells


def error_cells_for(
    bound: Bound, published: float, calls: Sequence[int], icc: float, target: float
) -> int | None:
    """The fewest cells (up to power.MOST_ROUNDS) reaching `target` for both verdicts."""

    def reaches(cells: int) -> bool:
        like = cells_like(calls, cells)
        return error_power(bound, published, like, icc, SEARCH_TRIALS).reaches(target)

    return fewest_rounds(reaches)


def error_cells_to_decide(
    bound: Bound, rate: float, calls: Sequence[int], icc: float, target: float
) -> int | None:
    """The fewest cells at which a true `rate` is decided either way with chance `target`."""

    def reaches(cells: int) -> bool:
        like = cells_like(calls, cells)
        return sum(error_shares(bound, rate, like, icc, SEARCH_TRIALS)) >= target

    return fewest_rounds(reaches)
