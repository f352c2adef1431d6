"""How many of a run's decided readings survive a false-discovery control across readings.

Each reading is decided at its own coverage (90% at the base look, a look's stricter one
after it), so each errs by chance at most 10% (14% over the looks) when the truth sits on
its threshold; over 178 readings that is a count of chance decisions, not a rate over the
family. This module gives each decided reading a p-value for the verdict it reached and
applies Benjamini and Yekutieli's step-up at a stated false-discovery rate: valid however
the readings depend on one another, which they do (a stack copy and its current-stack
reading share the A/A margin; method siblings share servers and rounds).

A reading's p-value is the smallest error level at which its verdict still stands:
- a paired configuration (Student t on its per-round log ratios, verdicts.RatioMethod):
  exact, by finding the widest interval at which decisions.decide still gives the verdict;
- any other (unpaired Moses, error rates, a side bound by the load generator): the level it
  was decided at, 1 - its coverage, which the rule guarantees and no more;
- a claim of several configurations: "holds" needs every one (intersection-union: the
  largest p), "does not hold" any one strongly enough (Bonferroni: the configurations times
  the smallest p) or every one (the largest p), whichever is smaller;
- a verdict reached at a look: divided by the look's share of the family's error (weighted
  Bonferroni over the looks: 10% at the base look and 4% at quick's one look, so a base
  verdict's p counts 1.4 times, a look's 3.5 times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from perflab.analysis.decisions import FAILS, HOLDS, decide
from perflab.analysis.intervals import Interval, log_t_half_width
from perflab.analysis.verdicts import PairResult, Verdict, margin_for

# The false-discovery rate the index states.
FDR = 0.10
# Bisection steps on the coverage: 2^-40 of the unit interval, far below any p shown.
STEPS = 40


def paired_interval(pair: PairResult, coverage: float) -> Interval | None:
    """The pair's paired t interval at another coverage, from its centre, spread and rounds."""
    rounds = pair.n_numerator
    if pair.spread is None or rounds < 2 or not pair.effect > 0:
        return None
    half = log_t_half_width(pair.spread, rounds, coverage)
    centre = math.log(pair.effect)
    # Near coverage 1 a t quantile of few degrees of freedom reaches 1e6: kept finite.
    low, high = (math.exp(max(-700.0, min(700.0, end))) for end in (centre - half, centre + half))
    return Interval(low, high, coverage, "paired t")


def configuration_p(verdict: Verdict, pair: PairResult, verdict_sought: str) -> float:
    """The smallest 1 - coverage at which this configuration still reads `verdict_sought`
    (exact where paired), else the level its verdict was reached at."""
    coverage = verdict.judging.coverage
    fallback = 1 - coverage
    if not pair.paired or pair.spread is None or verdict.claim.kind != "ratio":
        return fallback
    margin = margin_for(verdict.claim, verdict.judging)

    def stands(at: float) -> bool:
        interval = paired_interval(pair, at)
        found, _ = decide(interval, verdict.claim.bound, margin, at, metric=verdict.claim.metric)
        return found == verdict_sought

    if not stands(coverage):
        # Not reproduced without what the pair does not keep (a side bound by the load
        # generator changes the rule): the level the engine decided it at.
        return fallback
    low, high = coverage, 1.0 - 1e-15
    if stands(high):
        return 1.0 - high
    for _ in range(STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if stands(middle) else (low, middle)
    return 1.0 - low


def reading_p(verdict: Verdict, family_alpha: float) -> float:
    """A decided reading's p-value for its verdict, weighted for the look that decided it
    (`family_alpha`: the error the run's looks spend together, 0.10 + 0.04 on quick)."""
    assert verdict.verdict in (HOLDS, FAILS)
    pairs = list(verdict.pairs) or ([verdict.deciding] if verdict.deciding else [])
    found = [configuration_p(verdict, pair, verdict.verdict) for pair in pairs]
    agreeing = [p for pair, p in zip(pairs, found, strict=True) if pair.verdict == verdict.verdict]
    every = len(agreeing) == len(pairs)
    if not agreeing or (verdict.verdict == HOLDS and not every):
        p = 1 - verdict.judging.coverage
    elif verdict.verdict == HOLDS:
        p = max(found)
    else:
        p = min(max(found) if every else 1.0, len(pairs) * min(agreeing), 1.0)
    share = (1 - verdict.judging.coverage) / family_alpha if family_alpha > 0 else 1.0
    return min(1.0, p / share)


@dataclass(frozen=True)
class Discoveries:
    """Benjamini-Yekutieli over the measured readings."""

    rate: float
    measured: int
    decided: int
    kept: frozenset[str]  # claim ids of the decided readings the step-up keeps

    def short(self) -> str:
        """The headline's clause: how many decided readings survive the correction."""
        return (
            f"at a {self.rate:.0%} false-discovery rate across the readings, {len(self.kept)} "
            f"of the {self.decided} decided ones {'stands' if len(self.kept) == 1 else 'stand'} "
            "(see Multiplicity below)"
        )

    def sentence(self) -> str:
        return (
            f"Multiplicity: over the {self.measured} measured readings, Benjamini and "
            f"Yekutieli's step-up at a {self.rate:.0%} false-discovery rate (valid however the "
            f"readings depend on each other; they share cells and margins) keeps "
            f"{len(self.kept)} of the {self.decided} decided readings; the other "
            f"{self.decided - len(self.kept)} stand at their own coverage only (each reading's "
            f"p-value: exact for a paired t reading, the level it was decided at otherwise, "
            f"weighted for the look that decided it)."
        )


def benjamini_yekutieli(p_values: dict[str, float], tested: int, rate: float = FDR) -> set[str]:
    """The ids the step-up keeps at `rate` among `tested` hypotheses (the ids not given
    count as tested with p = 1: an undecided reading is never kept)."""
    if tested <= 0:
        return set()
    harmonic = math.fsum(1 / k for k in range(1, tested + 1))
    ranked = sorted(p_values.items(), key=lambda item: item[1])
    keep = 0
    for rank, (_, p) in enumerate(ranked, start=1):
        if p <= rank * rate / (tested * harmonic):
            keep = rank
    return {claim_id for claim_id, _ in ranked[:keep]}


def discoveries(verdicts: list[Verdict], family_alpha: float, rate: float = FDR) -> Discoveries:
    """The decided readings a false-discovery control at `rate` keeps."""
    measured = [v for v in verdicts if v.deciding is not None]
    decided = [v for v in measured if v.verdict in (HOLDS, FAILS)]
    p_values = {v.claim.id: reading_p(v, family_alpha) for v in decided}
    kept = benjamini_yekutieli(p_values, len(measured), rate)
    return Discoveries(rate, len(measured), len(decided), frozenset(kept))
