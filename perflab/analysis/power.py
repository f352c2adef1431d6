"""A claim's power under a design, said before measuring: the chance the design returns
"holds" when the true effect is the seed's published figure, and "does not hold" at the
null (`null_effect`: an effect as far on the wrong side as the seed's is on the right, and
always one the rule can refute).

Computed by Monte Carlo through the real rule: per trial, `rounds` per-round log ratios
drawn with the spread of the claim's metric (the reference run's, per round), the paired t
interval the engine uses (perflab.analysis.intervals) and perflab.analysis.decisions.decide
with the margin. The index (which claims27 renders) and the adaptive planner call
`claim_power`; `rounds_for` says how many rounds reach a target; `verdict_shares` gives both
chances at any true effect (the index shows them at the effect a run measured, beside the
power at the seed's figure).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perflab.analysis.claims import BAND, DIRECTION, Bound
from perflab.analysis.decisions import (
    DECIDING_COVERAGE,
    FAILS,
    HOLDS,
    confirmable,
    decide,
    holding_edge,
)
from perflab.analysis.intervals import Interval, paired_log_t_bounds

if TYPE_CHECKING:
    import numpy as np

TRIALS = 2000


@dataclass(frozen=True)
class Power:
    """P(holds | true effect = published) and P(does not hold | null) for one design."""

    holds: float
    refutes: float
    rounds: int
    # The Monte Carlo standard error of either share (the larger).
    error: float

    def reaches(self, target: float) -> bool:
        """Whether both verdicts come out with at least `target` chance."""
        return self.holds >= target and self.refutes >= target

    def sentence(self) -> str:
        return (
            f"power at {self.rounds} rounds: {self.holds:.0%} 'holds' at the seed's figure, "
            f"{self.refutes:.0%} 'does not hold' at the null (+/- {self.error:.0%})"
        )


def null_effect(bound: Bound, published: float, margin: float) -> float:
    """An effect at which the claim is false by as much as the seed says it is true, and
    which the rule can refute: for a direction (or not_worse) the seed's figure mirrored
    across the limit, moved out, where that leaves it short of it, to one noise margin past
    the edge a "does not hold" must clear (a direction's T / w; a not_worse's T / (1 +
    max(t, margin))). A seed figure near its limit would otherwise mirror to a null inside
    the edge, where no run can refute the claim and the power to refute reads 0% by
    construction (hello-grpclib-uvloop-at-least-asyncio: 1.11 mirrors to 0.90, above its
    edge 1 / 1.18 = 0.85). For "about N": no difference (1) where that lies outside the
    band, else the point a margin past its far edge; for "within" a margin past the band's
    upper edge."""
    step = 1 + max(margin, 0.01)
    if bound.test != BAND:
        greater = bound.side == "greater"
        if bound.test == DIRECTION:
            edge = bound.limit / (1 + margin) if greater else bound.limit * (1 + margin)
        else:
            (edge,) = bound.edges(margin)
        mirrored = bound.limit**2 / published
        return min(mirrored, edge / step) if greater else max(mirrored, edge * step)
    low, high = bound.edges(margin)
    if bound.about and not low <= 1.0 <= high:
        return 1.0
    return (high if published <= bound.limit else low) * step ** (
        1 if published <= bound.limit else -1
    )


def verdict_shares(
    bound: Bound,
    effect: float,
    sigma: float,
    rounds: int,
    margin: float,
    trials: int,
    rng: random.Random,
    coverage: float = DECIDING_COVERAGE,
) -> tuple[float, float]:
    """The shares of simulated runs that read "holds" and "does not hold", at a true
    `effect`, with the per-round log ratios' spread `sigma`. Each trial's rounds are drawn
    from `rng` in turn, and its interval is the engine's paired t interval at `coverage`
    (the base look's by default), for every trial at once (intervals.paired_log_t_bounds):
    an index asks for some 450 000 of them, most of the overview page's CPU when built one
    by one."""
    import numpy as np

    if rounds < 2:
        return 0.0, 0.0
    draws = [math.log(effect * math.exp(rng.gauss(0, sigma))) for _ in range(trials * rounds)]
    lows, highs = paired_log_t_bounds(np.array(draws).reshape(trials, rounds), coverage)
    label = f"paired t interval of {rounds} rounds"
    return decided_shares(lows, highs, bound, margin, label, coverage)


def decided_shares(
    lows: np.ndarray,
    highs: np.ndarray,
    bound: Bound,
    margin: float,
    label: str,
    coverage: float = DECIDING_COVERAGE,
) -> tuple[float, float]:
    """The shares of simulated intervals (their ends, one per trial) that the engine's rule
    (decisions.decide at `coverage`) reads "holds" and "does not hold"."""
    counts = {HOLDS: 0, FAILS: 0}
    for low, high in zip(lows.tolist(), highs.tolist(), strict=True):
        interval = Interval(low, high, coverage, label)
        verdict = decide(interval, bound, margin, coverage)[0]
        if verdict in counts:
            counts[verdict] += 1
    return counts[HOLDS] / len(lows), counts[FAILS] / len(lows)


def decided_share(
    bound: Bound,
    effect: float,
    sigma: float,
    rounds: int,
    margin: float,
    want: str,
    trials: int,
    rng: random.Random,
) -> float:
    """The share of simulated runs whose verdict is `want` ("holds" or "does not hold")."""
    holds, fails = verdict_shares(bound, effect, sigma, rounds, margin, trials, rng)
    return holds if want == HOLDS else fails


def claim_power(
    bound: Bound,
    published: float,
    sigma: float,
    rounds: int,
    margin: float,
    trials: int = TRIALS,
    seed: int = 26,
) -> Power:
    """The design's power for one claim: `sigma` the SD of a per-round log ratio of its
    metric on the reference run, `rounds` the profile's, `margin` its metric's."""
    if rounds < 3:
        return Power(0.0, 0.0, rounds, 0.0)
    rng = random.Random(seed)
    holds = decided_share(bound, published, sigma, rounds, margin, HOLDS, trials, rng)
    null = null_effect(bound, published, margin)
    refutes = decided_share(bound, null, sigma, rounds, margin, FAILS, trials, rng)
    error = max(math.sqrt(p * (1 - p) / trials) for p in (holds, refutes))
    return Power(holds, refutes, rounds, error)


def beyond_noise(bound: Bound, published: float, margin: float) -> bool:
    """Whether the seed's figure lies past where a 'holds' must lie (a direction's limit
    cleared by the margin; a not_worse's decisions.holding_edge), else its 'holds' is no
    likelier than chance at any number of rounds."""
    if bound.test == DIRECTION:
        widen = 1 + margin
        edge = bound.limit * widen if bound.side == "greater" else bound.limit / widen
    else:
        edge = holding_edge(bound, margin)
    return published > edge if bound.side == "greater" else published < edge


# The power a design must reach for both verdicts to count as able to decide a claim.
TARGET_POWER = 0.8
# The most rounds rounds_for looks at, and its trials per look.
MOST_ROUNDS = 30
SEARCH_TRIALS = 200


def rounds_for(
    bound: Bound,
    published: float,
    sigma: float,
    margin: float,
    target: float = TARGET_POWER,
    trials: int = SEARCH_TRIALS,
    margin_at: Callable[[int], float] | None = None,
) -> int | None:
    """The fewest rounds (up to MOST_ROUNDS) whose power reaches `target` for both
    verdicts (`margin_at`: the margin the A/A copies would set over that many rounds, no
    wider than `margin`; else `margin` at every number of rounds); None where none does,
    and where no number of rounds can: the design cannot
    decide the claim (its figure sits inside the noise margin, or the margin is wider than
    the tolerance of a band or not_worse, which no run can then confirm). Searched by
    bisection, as power grows with the rounds (the t interval narrows with both n and its
    quantile); each step is a Monte Carlo estimate of `trials` trials, so the answer is good
    to a round or so where power climbs slowly."""

    def margin_of(rounds: int) -> float:
        return min(margin, margin_at(rounds)) if margin_at else margin

    # The narrowest margin any design up to MOST_ROUNDS reaches decides whether one can.
    narrowest = margin_of(MOST_ROUNDS)
    if not confirmable(bound, narrowest):
        return None
    if bound.test != BAND and not beyond_noise(bound, published, narrowest):
        return None

    def reaches(rounds: int) -> bool:
        power = claim_power(bound, published, sigma, rounds, margin_of(rounds), trials=trials)
        return power.reaches(target)

    return fewest_rounds(reaches)


def fewest_rounds(reaches: Callable[[int], bool]) -> int | None:
    """The fewest rounds from 3 to MOST_ROUNDS at which `reaches`, by bisection (it is taken
    to grow with the rounds); None where MOST_ROUNDS does not."""
    if not reaches(MOST_ROUNDS):
        return None
    # reaches(high) holds; low is below every design that can decide (3 rounds at least).
    low, high = 2, MOST_ROUNDS
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def rounds_to_decide(
    bound: Bound,
    effect: float,
    sigma: float,
    margin: float,
    target: float = TARGET_POWER,
    trials: int = SEARCH_TRIALS,
    margin_at: Callable[[int], float] | None = None,
    coverage: float = DECIDING_COVERAGE,
) -> int | None:
    """The fewest rounds (up to MOST_ROUNDS) at which a run whose true effect is `effect`
    (e.g. the one a run measured) is decided, 'holds' or 'does not hold', with chance
    `target`, its intervals at `coverage`; None where none is (an effect inside the margin
    zone stays at its threshold however many rounds run). `margin_at`: as rounds_for's."""

    def reaches(rounds: int) -> bool:
        judged_with = min(margin, margin_at(rounds)) if margin_at else margin
        shares = verdict_shares(
            bound, effect, sigma, rounds, judged_with, trials, random.Random(26), coverage
        )
        return sum(shares) >= target

    return fewest_rounds(reaches)


def design_power_over_looks(
    bound: Bound,
    published: float,
    sigma: float,
    schedule: list[tuple[int, float]],
    margin_at: Callable[[int], float],
    trials: int = SEARCH_TRIALS,
    seed: int = 26,
) -> Power:
    """A profile's power for one claim over its looks: `schedule` the (rounds, coverage) of
    each look, the base look first; a trial draws the last look's rounds once and is judged
    at each look on its first rounds, at that look's coverage and with the margin the A/A
    copies would set over as many rounds (`margin_at`), until a look decides it, as the
    engine's looks do (perflab.analysis.adaptive.judge_looks). The null is taken at the
    base look's margin. Counts a claim the looks give their rounds to: a profile whose look
    minutes run out first decides less."""
    import numpy as np

    rng = random.Random(seed)
    first_rounds, last_rounds = schedule[0][0], schedule[-1][0]
    if first_rounds < 2:
        return Power(0.0, 0.0, last_rounds, 0.0)

    def share(effect: float, want: str) -> float:
        draws = [rng.gauss(math.log(effect), sigma) for _ in range(trials * last_rounds)]
        logs = np.array(draws).reshape(trials, last_rounds)
        verdicts: list[str | None] = [None] * trials
        for rounds, coverage in schedule:
            lows, highs = paired_log_t_bounds(logs[:, :rounds], coverage)
            margin = margin_at(rounds)
            label = f"paired t interval of {rounds} rounds"
            for trial, (low, high) in enumerate(zip(lows.tolist(), highs.tolist(), strict=True)):
                if verdicts[trial] in (HOLDS, FAILS):
                    continue
                interval = Interval(low, high, coverage, label)
                verdicts[trial] = decide(interval, bound, margin, coverage)[0]
        return sum(verdict == want for verdict in verdicts) / trials

    holds = share(published, HOLDS)
    refutes = share(null_effect(bound, published, margin_at(first_rounds)), FAILS)
    error = max(math.sqrt(p * (1 - p) / trials) for p in (holds, refutes))
    return Power(holds, refutes, last_rounds, error)
