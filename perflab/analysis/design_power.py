"""What this run's design could decide, per claim: its power at the spread the run observed.

For a ratio claim judged paired over rounds, perflab.analysis.power gives the chance that a
run of this many rounds, with the per-round spread this run measured for the deciding
configuration and its metric's margin, returns "holds" at the seed's figure and "does not
hold" at the null; for a claim left open, how many rounds would reach TARGET_POWER for both.
The spread is estimated from the run's own few rounds, so the power is a point estimate;
each sentence names the rounds, the Monte Carlo error and the interval the verdicts use.
"""

from __future__ import annotations

from dataclasses import dataclass

from perflab.analysis.decisions import DECIDING_COVERAGE, percent
from perflab.analysis.power import (
    MOST_ROUNDS,
    SEARCH_TRIALS,
    TARGET_POWER,
    Power,
    claim_power,
    rounds_for,
    rounds_to_decide,
)
from perflab.analysis.verdicts import AT_THRESHOLD, INCONCLUSIVE, Verdict, margin_for

# Trials per share on the index: a Monte Carlo error of at most 1.6 points.
INDEX_TRIALS = 1000
# The verdicts a claim is still open with: more rounds could move it.
OPEN = (INCONCLUSIVE, AT_THRESHOLD)


@dataclass(frozen=True)
class DesignPower:
    """One claim's power under the design the run had, at the spread it observed."""

    claim_id: str
    # None: not computed, `reason` says why.
    power: Power | None
    sigma: float | None = None
    margin: float = 0.0
    open: bool = False
    # For an open claim: the rounds reaching TARGET_POWER both ways; None: none up to
    # MOST_ROUNDS (or its figure sits inside the margin, which no rounds clear).
    needs: int | None = None
    # For an open claim: the effect this run measured, and the rounds that would decide it
    # (either way) with TARGET_POWER chance were that the truth; None: none up to MOST_ROUNDS.
    effect: float | None = None
    settles: int | None = None
    reason: str = ""

    @property
    def decisive(self) -> bool:
        """Whether the run's design had TARGET_POWER for both verdicts."""
        return self.power is not None and self.power.reaches(TARGET_POWER)

    @property
    def asks(self) -> int | None:
        """The rounds an open claim asks for: enough for the power at the seed's figure and
        to decide it at the effect measured; None where either is out of reach."""
        if self.needs is None or self.settles is None:
            return None
        return max(self.needs, self.settles)

    def short(self) -> str:
        """The index cell: both chances, and the rounds an open claim needs."""
        if self.power is None:
            return f"not computed: {self.reason}"
        p = self.power
        text = f"{p.holds:.0%} holds / {p.refutes:.0%} refutes at {p.rounds} rounds"
        if self.open:
            text += "; " + self.rounds_words()
        return text

    def rounds_words(self) -> str:
        if self.needs is None:
            seed = f"no design up to {MOST_ROUNDS} rounds reaches {TARGET_POWER:.0%} both ways"
        else:
            seed = f"{self.needs} rounds would reach {TARGET_POWER:.0%} both ways"
        here = (
            f"no number up to {MOST_ROUNDS} decides it"
            if self.settles is None
            else f"{self.settles} rounds would decide it"
        )
        return f"{seed}; at the {self.effect:.3g}x this run measured, {here}"

    def sentence(self) -> str:
        """The power in one sentence, generated from the numbers."""
        if self.power is None:
            return f"Power not computed: {self.reason}."
        p = self.power
        lead = "Well powered" if self.decisive else "Underpowered"
        text = (
            f"{lead}: with {p.rounds} rounds at the per-round spread this run measured "
            f"(log SD {self.sigma:.3f}, from those {p.rounds} rounds) and a "
            f"{self.margin:.0%} margin, the design had a {p.holds:.0%} chance of 'holds' at "
            f"the seed's figure and {p.refutes:.0%} of 'does not hold' at the null "
            f"(Monte Carlo, {INDEX_TRIALS} trials each, +/- {p.error:.1%}; verdicts from the "
            f"paired t interval at {percent(DECIDING_COVERAGE)}, exact for normal log ratios)"
        )
        if self.open:
            text += (
                f"; at the seed's figure {self.rounds_words()} with {TARGET_POWER:.0%} chance "
                f"(searched with {SEARCH_TRIALS} trials a step, good to a round or so)"
            )
        return text + "."


def design_power(verdict: Verdict, trials: int = INDEX_TRIALS) -> DesignPower:
    """The power of the design `verdict` was decided on, for its claim."""
    claim, pair = verdict.claim, verdict.deciding
    if claim.kind != "ratio":
        return DesignPower(claim.id, None, reason=f"a {claim.kind.replace('_', ' ')} claim")
    if claim.published is None:
        return DesignPower(claim.id, None, reason="the seed publishes no figure to test")
    if pair is None:
        return DesignPower(claim.id, None, reason="not measured")
    if pair.spread is None:
        return DesignPower(claim.id, None, reason="its groups were not paired within rounds")
    margin = margin_for(claim, verdict.judging)
    rounds = pair.n_numerator
    power = claim_power(claim.bound, claim.published, pair.spread, rounds, margin, trials)
    still_open = verdict.verdict in OPEN
    if not still_open:
        return DesignPower(claim.id, power, pair.spread, margin)
    needs = rounds_for(claim.bound, claim.published, pair.spread, margin)
    settles = rounds_to_decide(claim.bound, pair.effect, pair.spread, margin)
    return DesignPower(claim.id, power, pair.spread, margin, True, needs, pair.effect, settles)


def powers_sentence(powers: list[DesignPower]) -> str:
    """How many claims the design could decide, and what the open ones would need."""
    computed = [p for p in powers if p.power is not None]
    if not computed:
        return "No claim's power could be computed on this run (no paired ratio claim)."
    decisive = sum(p.decisive for p in computed)
    still_open = [p for p in computed if p.open]
    reachable = [p.needs for p in still_open if p.needs is not None]
    text = (
        f"Power of this run's design, at the spread it measured: {decisive} of "
        f"{len(computed)} claims had at least {TARGET_POWER:.0%} chance of both 'holds' at "
        f"the seed's figure and 'does not hold' at the null"
    )
    if still_open:
        text += (
            f"; of the {len(still_open)} still open, {len(reachable)} would reach it with "
            f"more rounds"
            + (f" (at most {max(reachable)})" if reachable else "")
            + f", {len(still_open) - len(reachable)} with none up to {MOST_ROUNDS}"
        )
    skipped = len(powers) - len(computed)
    if skipped:
        text += f"; {skipped} not computed (error rates, unpaired groups, no figure)"
    return text + "."
