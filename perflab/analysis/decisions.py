"""The decision rule: one configuration's verdict from its effect interval and the claim's
bounds, with no run I/O (the single-run engine, perflab.analysis.verdicts, and a pooling of
runs both call it).

With w = 1 + margin (the run's noise for the claim's metric) and an interval [L, H] of at
least the deciding coverage:

- direction (`greater: T`): holds when L >= T w, does not hold when H <= T / w, is at its
  threshold when [L, H] lies inside [T / w, T w] (drift alone could put it either side);
- not_worse (`at_least: T`, tolerance t): with the edge E = T / (1 + max(t, margin)),
  holds when L >= E ("not slower" beyond the noise), does not hold when H < E;
- band (`within: t`, `about: N`): with t' = max(t, margin), holds when [L, H] lies inside
  [N / (1 + t'), N (1 + t')], does not hold when it lies wholly outside. A band narrower
  than the noise is widened to it (the reason says so), never narrowed: a faithful
  replication can always hold.

A side whose figures are lower bounds (a rate above the load generator's ceiling) keeps
only the decisions such a shift cannot overturn.
"""

from __future__ import annotations

import math

from perflab.analysis.claims import BAND, DIRECTION, NOT_WORSE, Bound
from perflab.analysis.intervals import Interval

HOLDS = "holds"
FAILS = "does not hold"
AT_THRESHOLD = "at its threshold"
INCONCLUSIVE = "inconclusive"
NOT_MEASURED = "not measured"
VERDICTS = (HOLDS, FAILS, AT_THRESHOLD, INCONCLUSIVE, NOT_MEASURED)
# The coverage a configuration's interval needs to decide it.
DECIDING_COVERAGE = 0.90
# (numerator, denominator): whether a side's figures are lower bounds.
Floors = tuple[bool, bool]


def percent(coverage: float) -> str:
    """A coverage as the verdicts state it: whole percent rounded down, a tenth where the
    whole percent would hide a difference (97.5% needed is not 97%)."""
    whole = math.floor(coverage * 100 + 1e-9)
    if abs(coverage * 100 - whole) < 1e-9:
        return f"{whole:.0f}%"
    return f"{math.floor(coverage * 1000 + 1e-9) / 10:.1f}%"


def decide(
    interval: Interval | None,
    bound: Bound,
    margin: float = 0.0,
    coverage: float = DECIDING_COVERAGE,
    floors: Floors = (False, False),
) -> tuple[str, str]:
    """Verdict and reason for one configuration."""
    if interval is None:
        return INCONCLUSIVE, "too few repeats for an interval"
    if interval.coverage < coverage - 1e-9:
        return INCONCLUSIVE, (
            f"the repeats give only a {interval.label()}, below the {percent(coverage)} needed "
            "to decide"
        )
    if bound.test == BAND:
        if any(floors):
            return INCONCLUSIVE, "a side is bound by the load generator"
        return decide_band(interval, bound, margin)
    if bound.test == NOT_WORSE:
        return decide_not_worse(interval, bound, margin, floors)
    assert bound.test == DIRECTION
    return decide_direction(interval, bound, 1 + margin, floors)


def overturned(upward: bool, floors: Floors) -> bool:
    """Whether a lower bound could overturn a decision resting on the interval lying above
    (`upward`) or below a value: a floored numerator can only raise the true ratio, a
    floored denominator only lower it."""
    return floors[1] if upward else floors[0]


def decide_direction(
    interval: Interval, bound: Bound, widen: float, floors: Floors
) -> tuple[str, str]:
    limit, greater = bound.limit, bound.side == "greater"
    clear = f"{widen - 1:.0%} clear of it" if widen > 1 else "past it"
    above = interval.low >= limit * widen
    below = interval.high <= limit / widen
    if (above and overturned(True, floors)) or (below and overturned(False, floors)):
        return INCONCLUSIVE, "past the threshold, but a side is a lower bound that could undo it"
    if above or below:
        claimed = above == greater
        return (
            (HOLDS, f"the whole interval lies on the claimed side, {clear}")
            if claimed
            else (
                FAILS,
                f"the whole interval lies on the other side, {clear}",
            )
        )
    zone = f"the {widen - 1:.0%} noise zone around the threshold"
    if widen > 1 and limit / widen <= interval.low and interval.high <= limit * widen:
        if any(floors):
            return INCONCLUSIVE, f"the interval lies within {zone}, but a side is a lower bound"
        return AT_THRESHOLD, (
            f"the whole interval lies within {zone}: more repeats would narrow it, not move it "
            "clear"
        )
    if interval.low <= limit <= interval.high:
        return INCONCLUSIVE, f"the interval reaches across the threshold and out of {zone}"
    return INCONCLUSIVE, f"the interval reaches into {zone} and out of it"


def widened(bound: Bound, margin: float) -> str:
    """What the page says where the noise widened the claim's tolerance."""
    if margin <= bound.tolerance:
        return ""
    stated = f"{bound.tolerance:.0%}" if bound.tolerance else "none"
    return f" (its tolerance, {stated}, widened to the run's {margin:.0%} noise margin)"


def decide_not_worse(
    interval: Interval, bound: Bound, margin: float, floors: Floors
) -> tuple[str, str]:
    (edge,) = bound.edges(margin)
    greater = bound.side == "greater"
    word = "below" if greater else "above"
    clear = interval.low >= edge if greater else interval.high <= edge
    short = interval.high < edge if greater else interval.low > edge
    if (clear and overturned(greater, floors)) or (short and overturned(not greater, floors)):
        return INCONCLUSIVE, "a side is a lower bound that could undo the decision"
    at = f"{edge:.3g}{widened(bound, margin)}"
    if clear:
        return HOLDS, f"the whole interval lies at or past {at}: not {word} it beyond the noise"
    if short:
        return FAILS, f"the whole interval lies {word} {at}"
    return INCONCLUSIVE, f"the interval reaches across {at}"


def decide_band(interval: Interval, bound: Bound, margin: float) -> tuple[str, str]:
    low_edge, high_edge = bound.edges(margin)
    band = f"the band [{low_edge:.3g}, {high_edge:.3g}]{widened(bound, margin)}"
    if low_edge <= interval.low and interval.high <= high_edge:
        return HOLDS, f"the whole interval lies inside {band}"
    if interval.high < low_edge or interval.low > high_edge:
        return FAILS, f"the whole interval lies outside {band}"
    widen = 1 + margin
    zones = [(low_edge / widen, low_edge * widen), (high_edge / widen, high_edge * widen)]
    if margin > 0 and any(low <= interval.low and interval.high <= high for low, high in zones):
        return AT_THRESHOLD, (
            f"the whole interval lies within the {margin:.0%} noise zone of an edge of {band}: "
            "more repeats would narrow it, not move it clear"
        )
    return INCONCLUSIVE, f"the interval reaches across an edge of {band}"


def at_threshold_expected(bound: Bound, figure: float | None, margin: float) -> bool:
    """Whether the seed's own figure for a configuration sits inside the run's noise zone
    around a direction's threshold: there, 'at its threshold' is what a faithful
    replication gives."""
    if figure is None or bound.test != DIRECTION or figure <= 0:
        return False
    widen = 1 + margin
    return bound.limit / widen < figure < bound.limit * widen
