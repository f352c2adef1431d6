"""The decision rule: one configuration's verdict from its effect interval and the claim's
bounds, with no run I/O (the single-run engine, perflab.analysis.verdicts, and a pooling of
runs both call it).

With w = 1 + margin (the run's noise for the claim's metric) and an interval [L, H] of at
least the deciding coverage:

- direction (`greater: T`): holds when L >= T w, does not hold when H <= T / w, is at its
  threshold when [L, H] lies inside [T / w, T w] (drift alone could put it either side);
- not_worse (`at_least: T`, tolerance t): holds when L >= T / (1 + t), the edge as the claim
  states it, where the margin is no wider than t, and past that only when L >= T (1 +
  margin) / (1 + t), the stated edge cleared by the noise; does not hold when H < T / (1 +
  max(t, margin)), short of the edge even widened by the noise;
- band (`within: t`, `about: N`): holds when [L, H] lies inside [N / (1 + t), N (1 + t)],
  the band as the claim states it, and the margin is no wider than t; does not hold when it
  lies wholly outside the band widened to t' = max(t, margin).

Where the margin is wider than the claim's tolerance, a configuration that would hold
against the widened band or edge (and, for not_worse, does not clear the stated edge by the
noise) reads "undecidable by this design": an inconclusive verdict whose reason starts so,
as for too few repeats, so the counts keep their five verdicts. The noise may widen what
counts as a difference, never what counts as a confirmation. Widening a 10% band to a 93%
noise margin ([0.519, 1.93]) let noise alone confirm "about the same". The same flaw holds
for not_worse, the one-sided half of an equivalence test: its tolerance says how much
slower still counts as "not slower", and moving the edge from T / (1 + t) to T / (1 +
margin) let a numerator nearly half as fast (0.52 at a 93% margin) confirm "at least as
fast". So both take the consistent rule: "holds" must survive a drift of the margin, the
true effect at or past L / (1 + margin) still inside what the claim states. For a band
wider than the noise that is relaxed to the stated band (else a 10% band under a 10%
margin could never hold, issue 26's first finding); narrower than the noise it is empty,
so undecidable; for not_worse it is the clear lead above. A direction is not affected:
there the margin only ever raises the bar for "holds" (L >= T w), never lowers it.

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
# How an inconclusive verdict's reason starts where the design, not the data, leaves it open
# (too few repeats for the coverage; a noise margin wider than the claim's tolerance).
UNDECIDABLE = "undecidable by this design"
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
    metric: str = "",
) -> tuple[str, str]:
    """Verdict and reason for one configuration; `metric` names the claim's metric where a
    reason says its noise."""
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
        return decide_band(interval, bound, margin, metric)
    if bound.test == NOT_WORSE:
        return decide_not_worse(interval, bound, margin, floors, metric)
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


def confirmable(bound: Bound, margin: float) -> bool:
    """Whether a run with this noise margin can confirm the claim at all: a band only where
    the margin is no wider than the tolerance it states (past that, no interval lies inside
    the band even after a drift of the margin); a direction or not_worse always can, by a
    lead clear of its edge beyond the noise."""
    return bound.test != BAND or margin <= bound.tolerance


def holding_edge(bound: Bound, margin: float) -> float:
    """Where a not_worse's interval must lie at or past to hold: the edge as the claim
    states it, T / (1 + t), where the margin is no wider than t; else that edge cleared by
    the margin, T (1 + margin) / (1 + t), so that drift the run cannot see could not have
    carried a shortfall there."""
    (stated,) = bound.edges()
    if margin <= bound.tolerance:
        return stated
    return stated * (1 + margin) if bound.side == "greater" else stated / (1 + margin)


def noise_exceeds(bound: Bound, margin: float, metric: str) -> str:
    """'the run's 93% noise for throughput exceeds the claim's 10% band: this run cannot
    confirm equivalence' (a band or not_worse whose margin is wider than its tolerance)."""
    noise = f"the run's {margin:.0%} noise for {metric or 'the metric'}"
    if bound.test == BAND:
        stated = f"the claim's {bound.tolerance:.0%} band"
        return f"{noise} exceeds {stated}: this run cannot confirm equivalence"
    word = "slower" if bound.side == "greater" else "larger"
    allowed = f"{bound.tolerance:.0%}" if bound.tolerance else "none"
    side = "at or past" if bound.side == "greater" else "at or below"
    return (
        f"{noise} exceeds the shortfall the claim allows ({allowed}): this run confirms "
        f"'not {word}' only by an interval wholly {side} {holding_edge(bound, margin):.3g}"
    )


def too_noisy(bound: Bound, margin: float, metric: str) -> str:
    """The reason a configuration that would hold against the widened band or edge reads
    undecidable: the run's noise exceeds the tolerance the claim states."""
    return f"{UNDECIDABLE} ({noise_exceeds(bound, margin, metric)})"


def decide_not_worse(
    interval: Interval, bound: Bound, margin: float, floors: Floors, metric: str = ""
) -> tuple[str, str]:
    (edge,) = bound.edges(margin)
    firm = holding_edge(bound, margin)
    greater = bound.side == "greater"
    word = "below" if greater else "above"
    clear = interval.low >= edge if greater else interval.high <= edge
    firmly = interval.low >= firm if greater else interval.high <= firm
    short = interval.high < edge if greater else interval.low > edge
    if (clear and overturned(greater, floors)) or (short and overturned(not greater, floors)):
        return INCONCLUSIVE, "a side is a lower bound that could undo the decision"
    at = f"{edge:.3g}{widened(bound, margin)}"
    if firmly and firm == edge:
        return HOLDS, f"the whole interval lies at or past {at}: not {word} it beyond the noise"
    if firmly:
        return HOLDS, (
            f"the whole interval lies at or past {firm:.3g}, the claim's edge "
            f"{bound.edges()[0]:.3g} cleared by the run's {margin:.0%} noise"
        )
    if clear:
        return INCONCLUSIVE, too_noisy(bound, margin, metric)
    if short:
        return FAILS, f"the whole interval lies {word} {at}"
    return INCONCLUSIVE, f"the interval reaches across {at}"


def decide_band(
    interval: Interval, bound: Bound, margin: float, metric: str = ""
) -> tuple[str, str]:
    low_edge, high_edge = bound.edges(margin)
    band = f"the band [{low_edge:.3g}, {high_edge:.3g}]{widened(bound, margin)}"
    inside = low_edge <= interval.low and interval.high <= high_edge
    if inside and not confirmable(bound, margin):
        return INCONCLUSIVE, too_noisy(bound, margin, metric)
    if inside:
        return HOLDS, f"the whole interval lies inside {band}"
    if interval.high < low_edge or interval.low > high_edge:
        return FAILS, f"the whole interval lies outside {band}"
    # No "at its threshold" here: holding and failing share the band's edges, so more
    # rounds narrow a straddling interval onto one side of the edge it reaches across (a
    # direction keeps a noise zone between its two decisions, a band has none to stay in).
    return INCONCLUSIVE, f"the interval reaches across an edge of {band}"


def at_threshold_expected(bound: Bound, figure: float | None, margin: float) -> bool:
    """Whether the seed's own figure for a configuration sits inside the run's noise zone
    around a direction's threshold: there, 'at its threshold' is what a faithful
    replication gives."""
    if figure is None or bound.test != DIRECTION or figure <= 0:
        return False
    widen = 1 + margin
    return bound.limit / widen < figure < bound.limit * widen
