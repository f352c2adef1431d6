"""Claims judged over many runs: per reading, each site's effect, the random-effects
estimate, the between-site spread, and a pooled verdict judged by the single-run rule.

Runs are grouped into sites (perflab.analysis.sites); the runs of one site are combined by
inverse variance, the sites pooled by perflab.analysis.pooling. The pooled interval of each
configuration goes through `verdicts.decide` and the configurations through
`verdicts.combine`, the functions a single run's verdict uses: the same thresholds and
margin, on an interval that now carries the spread between machines. A configuration only
one site measured keeps that run's own interval and verdict, and a claim every reading of
which comes from one run keeps that run's verdict unchanged.

Error-rate claims are not pooled: a rate of 0 has no log, and most runs see none. Their
pooled verdict is NOT_POOLED, not a verdict, and each run's own verdict stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perflab.analysis.claims import Claim
from perflab.analysis.decisions import decide
from perflab.analysis.intervals import Interval
from perflab.analysis.pooling import Pooled, generalized_q, inverse_variance, pool
from perflab.analysis.sites import Reading, RunReadings, sites_of
from perflab.analysis.verdicts import (
    NOT_MEASURED,
    Judging,
    PairResult,
    Verdict,
    combine,
    margin_for,
    natural,
    needed_alone,
)

if TYPE_CHECKING:
    from perflab.analysis.fixes import MeasurementFix

NOT_POOLED_KINDS = {"error_rate": "an error rate is not pooled: a rate of 0 has no log"}
# The pooled verdict of a claim of a kind in NOT_POOLED_KINDS that some run measured: not a
# verdict of the single-run rule, so none of verdicts' constants (each run's own stands).
NOT_POOLED = "not pooled"


def readable(key: str, value: object) -> str:
    """A configuration value as a reader takes it in: a byte count in binary units
    ('payload_bytes=1 GiB', not 1073741824); anything else as it is."""
    text = str(value)
    if not key.endswith("bytes") or not text.isdigit() or int(text) < 1024:
        return text
    size = int(text)
    # The largest unit the count is a whole number of: 4 193 280 B reads 4095 KiB, exact.
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size % scale == 0:
            return f"{size // scale} {unit}"
    return text


@dataclass(frozen=True)
class SiteValue:
    """One site's reading of one configuration: its runs combined."""

    site: int
    runs: tuple[Reading, ...]
    run_ids: tuple[str, ...]
    log_effect: float
    se: float


@dataclass(frozen=True)
class PooledConfiguration:
    key: dict[str, str]
    sites: tuple[SiteValue, ...]
    pooled: Pooled
    pair: PairResult

    def where(self) -> str:
        return ", ".join(f"{k}={readable(k, v)}" for k, v in self.key.items()) or "all cells"

    @property
    def runs(self) -> int:
        return sum(len(site.run_ids) for site in self.sites)

    def empty_tau_interval(self) -> tuple[float, float] | None:
        """(Q at tau = 0, the chi-square quantile it falls below) where the Q-profile
        interval of tau is empty, None where it is not. Q below the lower quantile means
        the sites agree more closely than their own errors predict: no tau^2 >= 0 meets
        it, and pooling.q_profile then gives 0 for both bounds, which reads as a tau
        known to be exactly 0."""
        pooled = self.pooled
        if pooled.k < 2 or pooled.tau_high > 0:
            return None
        from scipy.stats import chi2

        variances = [site.se**2 for site in self.sites]
        q = generalized_q([site.log_effect for site in self.sites], variances, 0.0)
        return q, float(chi2.ppf((1 - pooled.coverage) / 2, pooled.k - 1))


@dataclass(frozen=True)
class PooledReading:
    claim: Claim
    verdict: str
    reason: str
    configurations: tuple[PooledConfiguration, ...] = ()
    deciding: PooledConfiguration | None = None
    # run id -> why it gives this claim nothing to pool, or shares no configuration.
    left_out: dict[str, str] = field(default_factory=dict)
    # Runs whose configurations of this claim no other run measured: pooled only alone.
    unshared: tuple[str, ...] = ()
    # The commits of the runs that gave a reading.
    revisions: tuple[str, ...] = ()
    sites: int = 0
    runs: int = 0
    # Not pooled (NOT_POOLED): run id -> its own verdict, for every run that measured it.
    own_verdicts: dict[str, str] = field(default_factory=dict)

    @property
    def depends_on_machine(self) -> bool:
        return any(c.pooled.depends_on_machine for c in self.configurations)

    @property
    def widest_tau(self) -> PooledConfiguration | None:
        pooled = [c for c in self.configurations if c.pooled.k >= 2]
        return max(pooled, key=lambda c: c.pooled.tau) if pooled else None


def site_values(claim: str, key: tuple, sites: list[list[RunReadings]]) -> list[SiteValue]:
    values = []
    for number, runs in enumerate(sites, start=1):
        found = [
            (run.run_id, reading)
            for run in runs
            for reading in run.readings
            if reading.claim == claim
            and config_key(reading) == key
            and reading.se() is not None
            and reading.log_effect() is not None
        ]
        if not found:
            continue
        ids = tuple(run_id for run_id, _ in found)
        readings = tuple(reading for _, reading in found)
        mean, se = inverse_variance([r.log_effect() for r in readings], [r.se() for r in readings])
        values.append(SiteValue(number, readings, ids, mean, se))
    return values


def config_key(reading: Reading) -> tuple[str, ...]:
    return tuple(f"{k}={v}" for k, v in sorted(reading.configuration.items()))


def pooled_pair(
    claim: Claim,
    key: dict[str, str],
    values: list[SiteValue],
    judging: Judging,
    configurations: int,
) -> tuple[Pooled, PairResult]:
    """One configuration's pooled estimate and its verdict by the single-run rule."""
    pooled = pool([v.log_effect for v in values], [v.se for v in values])
    if len(values) == 1 and len(values[0].runs) == 1:
        # One run: its own (exact) interval and verdict, unchanged.
        only = values[0].runs[0]
        interval = Interval(only.low, only.high, only.coverage, only.method)
        verdict, reason = only.verdict, f"one run ({values[0].run_ids[0]}) measured it"
    else:
        interval = exp_interval(pooled)
        verdict, reason = decide(
            interval,
            claim.bound,
            margin=margin_for(claim, judging),
            coverage=judging.coverage,
            metric=claim.metric,
        )
    alone = verdict == "does not hold" and refutes_alone(claim, values, judging, configurations)
    pair = PairResult(
        key=key,
        effect=math.exp(pooled.estimate),
        interval=interval,
        verdict=verdict,
        reason=reason,
        n_numerator=len(values),
        n_denominator=sum(len(v.run_ids) for v in values),
        cell_ids=(),
        refutes_alone=alone,
    )
    return pooled, pair


def exp_interval(pooled: Pooled, coverage: float | None = None) -> Interval:
    return Interval(
        math.exp(pooled.low), math.exp(pooled.high), coverage or pooled.coverage, pooled.method()
    )


def refutes_alone(
    claim: Claim, values: list[SiteValue], judging: Judging, configurations: int
) -> bool:
    """Whether this configuration's pooled interval, at the Bonferroni coverage for the
    claim's configurations, still lies past the threshold (verdicts.refutation_alone)."""
    if configurations <= 1:
        return True
    if len(values) < 2:
        return False
    need = needed_alone(judging, configurations)
    wider = pool([v.log_effect for v in values], [v.se for v in values], coverage=need)
    verdict, _ = decide(
        exp_interval(wider),
        claim.bound,
        margin=margin_for(claim, judging),
        coverage=need,
    )
    return verdict == "does not hold"


def pool_claim(
    claim: Claim, runs: list[RunReadings], judging: Judging | None = None
) -> PooledReading:
    """One claim over every run: its configurations pooled across sites, then one verdict."""
    judging = judging or Judging()
    if len(runs) == 1 and (claim.kind in NOT_POOLED_KINDS or not claim_readings(claim, runs[0])):
        # One run is its own verdict, whatever it could give to a pool.
        only = runs[0]
        return PooledReading(
            claim, only.verdicts.get(claim.id, NOT_MEASURED), f"one run ({only.run_id})"
        )
    if claim.kind in NOT_POOLED_KINDS:
        return not_pooled(claim, runs)
    sites = list(sites_of(runs).values())
    keys: dict[tuple, dict[str, str]] = {}
    left_out = left_out_runs(claim, runs)
    for run in runs:
        for reading in claim_readings(claim, run):
            keys.setdefault(config_key(reading), reading.configuration)
    ordered = sorted(keys, key=lambda k: natural(tuple(v.split("=", 1)[1] for v in k)))
    configurations = []
    for key in ordered:
        values = site_values(claim.id, key, sites)
        pooled, pair = pooled_pair(claim, keys[key], values, judging, len(ordered))
        configurations.append(PooledConfiguration(keys[key], tuple(values), pooled, pair))
    if not configurations:
        return PooledReading(claim, NOT_MEASURED, "no run measured it", left_out=left_out)
    contributing = [run for run in runs if run.run_id not in left_out]
    if len(contributing) == 1:
        only = contributing[0]
        verdict, reason = only.verdicts.get(claim.id, NOT_MEASURED), f"one run ({only.run_id})"
        deciding = one_runs_deciding(claim, verdict, configurations, judging)
    else:
        verdict, reason, pair = combine(claim, [c.pair for c in configurations], judging)
        deciding = next(c for c in configurations if c.pair is pair)
    return PooledReading(
        claim,
        verdict,
        reason,
        tuple(configurations),
        deciding,
        left_out,
        name_unshared(claim, runs, left_out),
        tuple(sorted({run.commit[:8] for run in contributing})),
        len({run.site() for run in contributing}),
        len(contributing),
    )


def left_out_runs(claim: Claim, runs: list[RunReadings]) -> dict[str, str]:
    """Run id -> why it gives this claim nothing to pool."""
    left_out = {}
    for run in runs:
        if not claim_readings(claim, run):
            mine = any(r.claim == claim.id for r in run.readings)
            left_out[run.run_id] = run.not_measured.get(claim.id) or (
                "no configuration with an interval" if mine else "no reading of this claim"
            )
    return left_out


def not_pooled(claim: Claim, runs: list[RunReadings]) -> PooledReading:
    """A claim of a kind that is not pooled: each run's own verdict stands. It is 'not
    measured' only where no run measured it, and then says why each run did not."""
    own = {
        run.run_id: run.verdicts[claim.id]
        for run in runs
        if run.verdicts.get(claim.id, NOT_MEASURED) != NOT_MEASURED
    }
    if not own:
        left_out = {
            run.run_id: run.not_measured.get(claim.id) or "no reading of this claim" for run in runs
        }
        return PooledReading(claim, NOT_MEASURED, "no run measured it", left_out=left_out)
    return PooledReading(claim, NOT_POOLED, NOT_POOLED_KINDS[claim.kind], own_verdicts=own)


def one_runs_deciding(
    claim: Claim, verdict: str, configurations: list[PooledConfiguration], judging: Judging
) -> PooledConfiguration:
    """The configuration a one-run claim's own verdict rests on, to show beside it: the one
    the single-run rule picks where it gives the run's verdict, else the first configuration
    with that verdict (the run was judged with its own margins, which its readings lack)."""
    ruled, _, pair = combine(claim, [c.pair for c in configurations], judging)
    if ruled == verdict:
        return next(c for c in configurations if c.pair is pair)
    return next((c for c in configurations if c.pair.verdict == verdict), configurations[0])


def claim_readings(claim: Claim, run: RunReadings) -> list[Reading]:
    """The run's readings of this claim that can be pooled (a log effect and an SE)."""
    return [
        r
        for r in run.readings
        if r.claim == claim.id and r.se() is not None and r.log_effect() is not None
    ]


def name_unshared(
    claim: Claim, runs: list[RunReadings], left_out: dict[str, str]
) -> tuple[str, ...]:
    """The runs whose configurations of this claim no other run measured: named, since
    they are pooled with no one."""
    by_run = {
        run.run_id: {config_key(r) for r in run.readings if r.claim == claim.id}
        for run in runs
        if run.run_id not in left_out
    }
    alone = []
    for run_id, mine in by_run.items():
        others = set().union(*(k for other, k in by_run.items() if other != run_id))
        if len(by_run) > 1 and mine and not mine & others:
            alone.append(run_id)
    return tuple(alone)


def pool_claims(claims: list[Claim], runs: list[RunReadings]) -> list[PooledReading]:
    if not runs:
        raise ValueError("pooling needs at least one run")
    return [pool_claim(claim, runs) for claim in claims]


def agreement(single: str, pooled: PooledReading | None) -> str:
    """What the pooled evidence says of a single run's verdict, in a few words."""
    if pooled is not None and pooled.verdict == NOT_POOLED:
        return pooled.reason
    if pooled is None or pooled.verdict == NOT_MEASURED or pooled.runs < 2:
        return "no pooled evidence"
    over = f"over {pooled.sites} site(s), {pooled.runs} runs"
    if pooled.verdict == single:
        return f"pooled agrees ({pooled.verdict} {over})"
    return f"pooled differs: {pooled.verdict} {over}"


def agreements(
    readings_dir: Path, verdicts: list[Verdict], fixes: list[MeasurementFix] | None = None
) -> dict[str, str]:
    """Per claim, whether the pooled evidence of the runs in `readings_dir` (their readings
    files) agrees with this verdict: what a single run's index shows beside it. Empty
    where there are fewer than two runs to pool."""
    from perflab.analysis.fixes import measured_with_fixes
    from perflab.analysis.sites import load_readings

    files = sorted(readings_dir.glob("*.json")) if readings_dir.is_dir() else []
    if len(files) < 2:
        return {}
    runs = [load_readings(path) for path in files]
    if fixes:
        runs, _ = measured_with_fixes(runs, fixes)
    return {v.claim.id: agreement(v.verdict, pool_claim(v.claim, runs)) for v in verdicts}
