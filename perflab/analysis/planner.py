"""How many more rounds a run's open claims ask for, and what they would cost.

Per study: each open claim's rounds (perflab.analysis.design_power: 80% power both ways at
the seed's figure, and 80% chance of a decision at the effect measured, at the spread this
run measured), priced per configuration with
perflab.analysis.estimate from this run's own cell times (a configuration several claims
share is priced once, at the most rounds any of them asks); and what the `full` profile's
rounds would reach: which claims its design decides at the observed spread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perflab.analysis.adaptive import MarginAt, margin_by_rounds, open_configurations
from perflab.analysis.decisions import DECIDING_COVERAGE
from perflab.analysis.design_power import DesignPower, design_power
from perflab.analysis.estimate import ReferenceTimes, price
from perflab.analysis.power import (
    MOST_ROUNDS,
    SEARCH_TRIALS,
    TARGET_POWER,
    design_power_over_looks,
    rounds_for,
)
from perflab.analysis.verdicts import Verdict, margin_for
from perflab.contract.adaptive import Look, configuration_of, looks
from perflab.contract.adaptive import read as read_adaptive
from perflab.contract.cell import cell_record


@dataclass(frozen=True)
class ClaimPlan:
    claim_id: str
    power: DesignPower
    # Whether the full profile's rounds reach TARGET_POWER both ways; None: not computed.
    full_decides: bool | None
    # The fewest rounds that reach it at the seed's figure, the margin shrinking with the
    # A/A rounds (None: no design up to MOST_ROUNDS, or not computed).
    full_asks: int | None = None


@dataclass(frozen=True)
class StudyPlan:
    study: str
    # The full profile's rounds for the study; None: the profile does not say.
    full_rounds: int | None
    claims: list[ClaimPlan]
    # The measuring minutes the open claims' extra rounds would take.
    minutes: float

    @property
    def open(self) -> list[ClaimPlan]:
        return [c for c in self.claims if c.power.open and c.power.power is not None]

    def asked(self) -> int | None:
        """The most rounds an open claim of the study asks for (None: none can be reached)."""
        asks = [c.power.asks for c in self.open if c.power.asks is not None]
        return max(asks) if asks else None

    def lines(self) -> list[str]:
        reachable = [c for c in self.open if c.power.asks is not None]
        # Each claim's line says its own rounds: a study's claims may rest on different
        # numbers of them (seed-method cells, looks).
        head = f"{self.study}: {len(self.open)} open claim(s)"
        if reachable:
            head += (
                f"; {len(reachable)} can reach {TARGET_POWER:.0%} power both ways and a "
                f"decision at the effect measured with at most {self.asked()} rounds, about "
                f"{self.minutes:.1f} min more measuring"
            )
        unreached = len(self.open) - len(reachable)
        if unreached:
            head += f"; {unreached} with no design up to {MOST_ROUNDS} rounds"
        lines = [head]
        lines += [f"  {c.claim_id}: {c.power.short()}" for c in self.open]
        lines.append("  " + self.full_line())
        return lines

    def full_line(self) -> str:
        judged = [c for c in self.claims if c.full_decides is not None]
        if self.full_rounds is None:
            return "full profile: its rounds for this study are not stated"
        if not judged:
            return f"full profile ({self.full_rounds} rounds): no claim's power computed"
        decided = [c.claim_id for c in judged if c.full_decides]
        text = (
            f"full profile ({self.full_rounds} rounds): decides {len(decided)} of {len(judged)} "
            f"claims with {TARGET_POWER:.0%} power both ways at the observed spread and the "
            "margin its A/A rounds would set"
        )
        missed = [c for c in judged if not c.full_decides]
        reachable = [c for c in missed if c.full_asks is not None]
        if reachable:
            text += (
                f"; {len(reachable)} more with {max(c.full_asks or 0 for c in reachable)} "
                f"rounds: {', '.join(c.claim_id for c in reachable)}"
            )
        beyond = [c.claim_id for c in missed if c.full_asks is None]
        if beyond:
            text += (
                f"; {len(beyond)} by no design up to {MOST_ROUNDS} rounds at the seed's "
                f"figure and this machine's noise: {', '.join(beyond)}"
            )
        return text


def one_round_seconds(verdict: Verdict, run_dir: Path, times: ReferenceTimes) -> dict[str, float]:
    """Each configuration of a claim's cells that a look would repeat (those of its
    configurations still open, adaptive.open_configurations): what one more round of it
    costs, in seconds (its price from the run's own cell times, plus the run's median gap
    between cells)."""
    seconds: dict[str, float] = {}
    still_open = {configuration for _, configuration in open_configurations(verdict)}
    cells = [cell for cell in verdict.cell_ids if configuration_of(cell) in still_open]
    for cell_id in cells:
        configuration = configuration_of(cell_id)
        if configuration in seconds:
            continue
        record = cell_record(run_dir / verdict.claim.study / cell_id)
        spec = {**record.get("spec", {}), **{k: record[k] for k in ("cell_id", "implementation")}}
        seconds[configuration] = price({**spec, "study": record["study"]}, times).seconds
        seconds[configuration] += times.gap_s
    return seconds


def full_decides(
    verdict: Verdict,
    power: DesignPower,
    full_rounds: int | None,
    margin_at: MarginAt | None = None,
    full_looks: list[Look] | None = None,
) -> bool | None:
    """Whether the full profile reaches TARGET_POWER both ways at the spread `power` was
    computed with: over its base rounds, and its looks (`full_looks`) where it takes them,
    each at the margin the claim's A/A copies would set over that look's rounds (`margin_at`,
    never wider than the run's: the full profile runs its A/A copies every round; without a
    prediction, the run's margin); None where it was not computed."""
    if power.power is None or power.sigma is None or full_rounds is None:
        return None
    assert power.published is not None
    margin = margin_by_rounds(margin_at, verdict.claim.id, power.margin)
    looks_taken = full_looks or [Look(0, 0, DECIDING_COVERAGE)]
    schedule = [(full_rounds + look.extra_rounds, look.coverage) for look in looks_taken]
    at_full = design_power_over_looks(
        verdict.claim.bound, power.published, power.sigma, schedule, margin, SEARCH_TRIALS
    )
    return at_full.reaches(TARGET_POWER)


def full_rounds_asked(
    verdict: Verdict, power: DesignPower, margin_at: MarginAt | None
) -> int | None:
    """The fewest rounds reaching TARGET_POWER both ways at the seed's figure and the
    spread `power` was computed with, the margin the A/A copies would set over as many
    rounds (None: no design up to MOST_ROUNDS reaches it)."""
    assert power.published is not None and power.sigma is not None
    margin = margin_by_rounds(margin_at, verdict.claim.id, power.margin)
    return rounds_for(
        verdict.claim.bound, power.published, power.sigma, power.margin, margin_at=margin
    )


def plan_study(
    study: str,
    verdicts: list[Verdict],
    run_dir: Path,
    times: ReferenceTimes,
    full_rounds: int | None,
    margin_at: MarginAt | None = None,
    full_looks: list[Look] | None = None,
) -> StudyPlan:
    claims, extra = [], {}
    for verdict in verdicts:
        # The rounds an open claim asks for, at the margin its A/A copies would set.
        power = design_power(
            verdict,
            margin_at=margin_by_rounds(
                margin_at, verdict.claim.id, margin_for(verdict.claim, verdict.judging)
            ),
        )
        decides = full_decides(verdict, power, full_rounds, margin_at, full_looks)
        asks = None if decides in (None, True) else full_rounds_asked(verdict, power, margin_at)
        claims.append(ClaimPlan(verdict.claim.id, power, decides, asks))
        if not power.open or power.asks is None or power.power is None:
            continue
        more = power.asks - power.power.rounds
        for configuration, seconds in one_round_seconds(verdict, run_dir, times).items():
            extra[configuration] = max(extra.get(configuration, (0, 0.0)), (more, seconds))
    minutes = sum(more * seconds for more, seconds in extra.values()) / 60
    return StudyPlan(study, full_rounds, claims, minutes)


def plan(
    verdicts: list[Verdict],
    run_dir: Path,
    full_rounds: dict[str, int],
    margin_at: MarginAt | None = None,
    full_looks: list[Look] | None = None,
) -> list[StudyPlan]:
    """Every study's plan, from its claims' verdicts on the run in `run_dir` (`margin_at`:
    the margin a claim's A/A copies would set over a number of rounds; `full_looks`: the
    full profile's looks, `full_decides`)."""
    times = ReferenceTimes.read(run_dir)
    studies = sorted({v.claim.study for v in verdicts if v.deciding is not None})
    return [
        plan_study(
            study,
            [v for v in verdicts if v.claim.study == study],
            run_dir,
            times,
            full_rounds.get(study),
            margin_at,
            full_looks,
        )
        for study in studies
    ]


def plan_text(plans: list[StudyPlan], run_id: str, full_looks: list[Look] | None = None) -> str:
    minutes = sum(p.minutes for p in plans)
    lines = [
        f"Run {run_id}: the open claims' extra rounds would take about {minutes:.1f} min of "
        f"measuring (priced from this run's own cell times; power by Monte Carlo, "
        f"{SEARCH_TRIALS} trials a step, good to a round or so)."
    ]
    later = [look for look in full_looks or [] if look.index > 0]
    if later:
        lines.append(
            f"The full profile's power counts its {len(later)} look(s) after its base rounds "
            f"(up to {later[-1].extra_rounds} rounds more at {later[-1].coverage:.0%}), for a "
            "claim its looks give their rounds to; the rounds a claim full misses asks for "
            "are base rounds at 90%."
        )
    for study_plan in plans:
        lines += study_plan.lines()
    return "\n".join(lines)


def full_rounds_from(group_vars: Path, studies: list[str]) -> dict[str, int]:
    """Each study's rounds under the `full` profile (its matrix's `repeats` with the full
    overrides laid over it), where its group_vars file states them."""
    import yaml

    from perflab.contract.matrix import merged_study_config

    rounds = {}
    for study in studies:
        path = group_vars / f"{study}.yml"
        if not path.is_file():
            continue
        raw = yaml.safe_load(path.read_text()) or {}
        config = raw.get(f"perflab_matrix_{study}") or {}
        merged = merged_study_config(study, config, raw.get(f"perflab_profiles_{study}"), "full")
        if isinstance(merged.get("repeats"), int):
            rounds[study] = merged["repeats"]
    return rounds


def full_looks_from(group_vars: Path) -> list[Look]:
    """The full profile's looks (the base look first), from its adaptive knobs."""
    import yaml

    raw = yaml.safe_load((group_vars / "adaptive.yml").read_text()) or {}
    knobs = read_adaptive(raw.get("perflab_adaptive"), raw.get("perflab_profiles_adaptive"), "full")
    return looks(knobs, DECIDING_COVERAGE)
