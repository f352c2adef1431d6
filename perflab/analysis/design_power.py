"""What this run's design could decide, per claim: its power at the spread the run observed.

For a ratio claim judged paired over rounds, perflab.analysis.power gives the chance that a
run of this many rounds, with the per-round spread this run measured for the deciding
configuration and its metric's margin, returns "holds" at the seed's figure and "does not
hold" at the null; for a claim left open, how many rounds would reach TARGET_POWER for both.
Power at the seed's figure answers "could this design have confirmed the seed?", not "what
will more rounds of this run give?": a claim whose measured effect is far below the seed's
can read 100% beside "inconclusive". So each cell names the figure each share is priced at
(the seed's, the null's) and, beside them, the chances of both verdicts at the effect this
run measured. The spread is estimated from the run's own few rounds, so the power is a point
estimate; each sentence names the rounds, the Monte Carlo error and the interval the
verdicts use.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from perflab.analysis.claims import BAND, DIRECTION, Bound, Claim
from perflab.analysis.decisions import (
    DECIDING_COVERAGE,
    confirmable,
    noise_exceeds,
    percent,
)
from perflab.analysis.error_power import (
    error_cells_for,
    error_cells_to_decide,
    error_null,
    error_power,
    error_shares,
)
from perflab.analysis.intervals import intraclass_correlation
from perflab.analysis.power import (
    MOST_ROUNDS,
    SEARCH_TRIALS,
    TARGET_POWER,
    Power,
    claim_power,
    null_effect,
    rounds_for,
    rounds_to_decide,
    verdict_shares,
)
from perflab.analysis.verdicts import AT_THRESHOLD, INCONCLUSIVE, PairResult, Verdict, margin_for

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
    # The seed's figure and the null the two shares of `power` are priced at.
    published: float | None = None
    null: float | None = None
    # (P(holds), P(does not hold)) at the run's rounds were the effect it measured the truth.
    at_measured: tuple[float, float] | None = None
    # What the margin does to "holds" where it is wider than the claim's tolerance ('').
    noise_note: str = ""
    # An error-rate claim: its "rounds" are cells, its figures rates, its spread the
    # intraclass correlation of failures within cells (perflab.analysis.error_power).
    rate: bool = False
    icc: float | None = None
    # Where the seed states no figure for a "within" band ("memory stable"): the power at
    # "holds" is priced at no difference, the band's centre.
    unstated: bool = False

    def truth(self) -> str:
        """The truth the 'holds' share is priced at: "the seed's 2.13x", "no difference (1x)"."""
        if self.unstated:
            return f"no difference ({self.figure(self.published)})"
        return f"the seed's {self.figure(self.published)}"

    def figure(self, value: float | None) -> str:
        """A figure as the claim states it: '2.13x', or '72.5%' for an error rate."""
        assert value is not None
        return f"{value:.1%}" if self.rate else f"{value:.3g}x"

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

    def priced(self) -> str:
        """'at the seed's 2.13x: 100% holds; at the null 0.47x: 98% does not hold': each
        share beside the figure it is computed at."""
        assert self.power is not None
        p = self.power
        return (
            f"at {self.truth()}: {p.holds:.0%} holds; at the null "
            f"{self.figure(self.null)}: {p.refutes:.0%} does not hold"
        )

    def measured_words(self) -> str:
        """'at the 1.43x this run measured: 49% holds, 0% does not hold' and, for an open
        claim, ', and 19 rounds would decide it' ('' where the effect is not known)."""
        if self.at_measured is None or self.effect is None:
            return ""
        holds, fails = self.at_measured
        text = (
            f"at the {self.figure(self.effect)} this run measured: {holds:.0%} holds, "
            f"{fails:.0%} does not hold"
        )
        if not self.open:
            return text
        if self.settles is None:
            return f"{text}, and no number of {self.unit()} up to {MOST_ROUNDS} decides it"
        return f"{text}, and {self.settles} {self.unit()} would decide it"

    def unit(self) -> str:
        return "cells" if self.rate else "rounds"

    def seed_rounds(self) -> str:
        """What an open claim needs at the seed's figure."""
        if self.needs is None:
            return (
                f"no design up to {MOST_ROUNDS} {self.unit()} reaches {TARGET_POWER:.0%} both "
                "ways at the seed's figure"
            )
        return (
            f"{self.needs} {self.unit()} would reach {TARGET_POWER:.0%} both ways at the "
            "seed's figure"
        )

    def short(self) -> str:
        """The index cell: the rounds, each share beside the figure it is priced at, both
        chances at the effect measured, and the rounds an open claim needs."""
        if self.power is None:
            said = f"not computed: {self.reason}"
            if self.open and self.effect is not None:
                said += f"; at the {self.figure(self.effect)} this run measured, " + (
                    f"{self.settles} {self.unit()} would decide it"
                    if self.settles is not None
                    else f"no number of {self.unit()} up to {MOST_ROUNDS} decides it"
                )
            return said
        parts = [f"{self.power.rounds} {self.unit()}", self.priced()]
        if self.noise_note:
            parts.append(self.noise_note)
        if self.measured_words():
            parts.append(self.measured_words())
        if self.open:
            parts.append(self.seed_rounds())
        return "; ".join(parts)

    def sentence(self) -> str:
        """The power in one sentence, generated from the numbers."""
        if self.power is None:
            return f"Power not computed: {self.reason}."
        p = self.power
        lead = "Well powered" if self.decisive else "Underpowered"
        if self.rate:
            return rate_sentence(self, lead)
        text = (
            f"{lead}: with {p.rounds} rounds at the per-round spread this run measured "
            f"(log SD {self.sigma:.3f}, from those {p.rounds} rounds) and a "
            f"{self.margin:.0%} margin, the design had a {p.holds:.0%} chance of 'holds' were "
            f"the truth {self.truth()} and {p.refutes:.0%} of 'does not "
            f"hold' were it the null {self.null:.3g}x (Monte Carlo, {INDEX_TRIALS} trials each, "
            f"+/- {p.error:.1%}; verdicts from the paired t interval at "
            f"{percent(DECIDING_COVERAGE)}, exact for normal log ratios)"
        )
        if self.noise_note:
            text += f"; {self.noise_note}"
        if self.measured_words():
            text += f"; {self.measured_words()}, by the same simulation"
        if self.open:
            text += (
                f"; {self.seed_rounds()} with {TARGET_POWER:.0%} chance "
                f"(searched with {SEARCH_TRIALS} trials a step, good to a round or so)"
            )
        return text + "."


def rate_sentence(power: DesignPower, lead: str) -> str:
    """An error-rate claim's power in one sentence, generated from the numbers."""
    p = power.power
    assert p is not None and power.icc is not None
    spread = (
        f"failures clustered within cells as this run's were (intraclass correlation "
        f"{power.icc:.2f})"
        if power.icc > 0
        else "calls failing independently (this run's cells showed no spread between them)"
    )
    text = (
        f"{lead}: with {p.rounds} cells of as many calls as this run's and {spread}, the design "
        f"had a {p.holds:.0%} chance of 'holds' were the truth the seed's "
        f"{power.figure(power.published)} and {p.refutes:.0%} of 'does not hold' were it the "
        f"null {power.figure(power.null)} (Monte Carlo, {INDEX_TRIALS} trials each, +/- "
        f"{p.error:.1%}; verdicts from the clustered Clopper-Pearson interval at "
        f"{percent(DECIDING_COVERAGE)})"
    )
    if power.measured_words():
        text += f"; {power.measured_words()}, by the same simulation"
    if power.open:
        text += f"; {power.seed_rounds()} with {TARGET_POWER:.0%} chance"
    return text + "."


def noise_note(bound: Bound, margin: float, metric: str) -> str:
    """Where the margin is wider than a band's or not_worse's tolerance: that no run this
    noisy reads 'holds' (a band), or what a 'holds' then needs (not_worse); else ''."""
    if bound.test == DIRECTION or margin <= bound.tolerance:
        return ""
    said = noise_exceeds(bound, margin, metric)
    return said if confirmable(bound, margin) else f"no run this noisy reads 'holds' ({said})"


def design_power(
    verdict: Verdict,
    trials: int = INDEX_TRIALS,
    margin_at: Callable[[int], float] | None = None,
) -> DesignPower:
    """The power of the design `verdict` was decided on, for its claim. `margin_at`: the
    margin its A/A copies would set over a number of rounds (adaptive.margin_by_rounds),
    with which an open claim's rounds are priced, as the index's headline and the planner
    price them; None: the margin it has now at every number of rounds."""
    claim, pair = verdict.claim, verdict.deciding
    if claim.kind not in ("ratio", "error_rate"):
        return DesignPower(claim.id, None, reason=f"a {claim.kind.replace('_', ' ')} claim")
    published, unstated = priced_at(claim)
    if published is None:
        return unpriced(verdict, margin_at)
    if pair is None:
        return DesignPower(claim.id, None, reason="not measured")
    if claim.kind == "error_rate":
        return error_rate_power(verdict, pair, trials)
    if pair.spread is None:
        return DesignPower(claim.id, None, reason="its groups were not paired within rounds")
    margin = margin_for(claim, verdict.judging)
    rounds = pair.n_numerator
    bound = claim.bound
    power = claim_power(bound, published, pair.spread, rounds, margin, trials)
    said = {
        "published": published,
        "unstated": unstated,
        "null": null_effect(bound, published, margin),
        "effect": pair.effect,
        "at_measured": verdict_shares(
            bound, pair.effect, pair.spread, rounds, margin, trials, random.Random(26)
        ),
        "noise_note": noise_note(bound, margin, claim.metric),
    }
    if verdict.verdict not in OPEN:
        return DesignPower(claim.id, power, pair.spread, margin, **said)
    needs = rounds_for(bound, published, pair.spread, margin, margin_at=margin_at)
    settles = rounds_to_decide(bound, pair.effect, pair.spread, margin, margin_at=margin_at)
    return DesignPower(claim.id, power, pair.spread, margin, True, needs, settles=settles, **said)


def priced_at(claim: Claim) -> tuple[float | None, bool]:
    """The figure a claim's 'holds' share is priced at, and whether the seed left it unstated:
    the seed's own, or for a "within" band it gives no figure for ("memory stable with more
    messages") no difference, the band's centre; None for any other claim without one."""
    if claim.published is not None:
        return claim.published, False
    if claim.bound.test == BAND and not claim.bound.about:
        return claim.bound.limit, True
    return None, False


def unpriced(verdict: Verdict, margin_at: Callable[[int], float] | None) -> DesignPower:
    """A claim the seed gives no figure for has no power to state; an open one still has
    the rounds that would decide it at the effect measured, which the index's headline
    counts (adaptive.beyond_any_design)."""
    reason = "the seed publishes no figure to test"
    claim, pair = verdict.claim, verdict.deciding
    if claim.kind != "ratio" or pair is None or pair.spread is None or verdict.verdict not in OPEN:
        return DesignPower(claim.id, None, reason=reason)
    margin = margin_for(claim, verdict.judging)
    settles = rounds_to_decide(claim.bound, pair.effect, pair.spread, margin, margin_at=margin_at)
    return DesignPower(
        claim.id,
        None,
        pair.spread,
        margin,
        True,
        effect=pair.effect,
        settles=settles,
        reason=reason,
    )


def error_rate_power(verdict: Verdict, pair: PairResult, trials: int) -> DesignPower:
    """design_power for an error rate: its deciding configuration's cells, their calls and
    the clustering of failures they showed (perflab.analysis.error_power)."""
    claim = verdict.claim
    assert claim.published is not None
    calls = [cell.calls for cell in pair.counts]
    if not calls:
        return DesignPower(claim.id, None, reason="no cell counted its calls")
    if not 0 <= claim.published <= 1:
        return DesignPower(claim.id, None, reason=f"its figure {claim.published:g} is not a rate")
    icc = intraclass_correlation(pair.counts)
    bound, published = claim.bound, claim.published
    said = {
        "published": published,
        "null": error_null(bound, published),
        "effect": pair.effect,
        "at_measured": error_shares(bound, pair.effect, calls, icc, trials),
        "rate": True,
        "icc": icc,
    }
    power = error_power(bound, published, calls, icc, trials)
    if verdict.verdict not in OPEN:
        return DesignPower(claim.id, power, **said)
    return DesignPower(
        claim.id,
        power,
        open=True,
        needs=error_cells_for(bound, published, calls, icc, TARGET_POWER),
        settles=error_cells_to_decide(bound, pair.effect, calls, icc, TARGET_POWER),
        **said,
    )


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
        # A different question from the headline's (whether rounds decide a claim at the
        # effect measured): the power a design would have at the seed's own figure.
        text += (
            f"; for the {len(still_open)} of them still undecided, more rounds would bring "
            f"that power to {TARGET_POWER:.0%} for {len(reachable)}"
            + (f" (at most {max(reachable)} rounds)" if reachable else "")
            + f" and no number up to {MOST_ROUNDS} for {len(still_open) - len(reachable)}"
        )
    skipped = Counter(p.reason for p in powers if p.power is None)
    if skipped:
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(skipped.items()))
        text += f"; {sum(skipped.values())} not computed ({why})"
    return text + "."
