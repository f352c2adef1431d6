"""A verdict per published claim and run: holds, does not hold, inconclusive, not measured.

For each claim (perflab.analysis.claims) the engine picks the run's cells of both groups, per
configuration named by `pair_by`, and computes the effect (ratio of the groups' medians,
or an error rate) with an exact interval (perflab.analysis.intervals). A configuration is decided
only when its interval has at least DECIDING_COVERAGE coverage and lies wholly on one
side of the claim's threshold; the claim holds when every configuration holds, does not
hold when one configuration decidedly does not, and is inconclusive otherwise. Nothing
here knows a study: a study may add derived metrics through
`perflab.studies.<id>.analysis.claim_frame(run_dir)`.
"""

from __future__ import annotations

import importlib
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perflab.analysis.claims import ANY_TOPOLOGY, Claim, ClaimsError, Selector
from perflab.analysis.intervals import Interval, clopper_pearson, ratio_interval

if TYPE_CHECKING:
    import pandas as pd

HOLDS = "holds"
FAILS = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_MEASURED = "not measured"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, NOT_MEASURED)
# 3 vs 3 repeats give an exact 90% interval at most; fewer repeats cannot decide a ratio.
DECIDING_COVERAGE = 0.90
# A decided verdict must clear its threshold by this factor, on either side. Within-run
# intervals cannot see run-to-run drift: two quick runs of one commit gave 1.13 and 0.79 for
# one ratio (issue 12). A factor this close to the threshold is called inconclusive, so two
# runs can only disagree as decided-vs-inconclusive, never holds-vs-does-not-hold, unless
# the drift exceeds the margin plus both intervals.
DECISION_MARGIN = 0.10
# The count of calls an error rate is taken over (ghz's `count`: successful and failed).
CALLS_METRIC = "count"


@dataclass(frozen=True)
class PairResult:
    """One configuration of a claim (one value of its pair_by parameters)."""

    key: dict[str, Any]
    effect: float
    interval: Interval | None
    verdict: str
    reason: str
    n_numerator: int
    n_denominator: int
    cell_ids: tuple[str, ...]

    def where(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.key.items())


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    reason: str
    deciding: PairResult | None = None
    pairs: tuple[PairResult, ...] = field(default_factory=tuple)

    @property
    def effect(self) -> float | None:
        return None if self.deciding is None else self.deciding.effect

    @property
    def interval(self) -> Interval | None:
        return None if self.deciding is None else self.deciding.interval

    @property
    def cell_ids(self) -> tuple[str, ...]:
        return tuple(cell for pair in self.pairs for cell in pair.cell_ids)

    def measured(self) -> str:
        """The effect with its interval, e.g. '1.52x [1.31, 1.70] (90% exact ...)'."""
        pair = self.deciding
        if pair is None:
            return "not measured"
        value = format_effect(self.claim, pair.effect)
        if pair.interval is None:
            return f"{value} (no interval: {pair.n_numerator} vs {pair.n_denominator} repeats)"
        low = format_effect(self.claim, pair.interval.low)
        high = format_effect(self.claim, pair.interval.high)
        return f"{value} [{low}, {high}] ({pair.interval.label()})"

    def sentence(self) -> str:
        """The verdict in one plain sentence, generated from the numbers."""
        claim = self.claim
        if self.deciding is None:
            return f"Not measured: {self.reason}."
        subject = describe_comparison(claim)
        where = f" at {self.deciding.where()}" if self.deciding.key else ""
        of = ""
        if len(self.pairs) > 1:
            alike = sum(pair.verdict == self.verdict for pair in self.pairs)
            state = "is undecided" if self.verdict == INCONCLUSIVE else self.verdict
            of = (
                f" (the weakest of {len(self.pairs)} configurations)"
                if self.verdict == HOLDS
                else f" (it {state} in {alike} of {len(self.pairs)} configurations)"
            )
        lead = self.verdict[0].upper() + self.verdict[1:]
        return (
            f"{lead}: {subject} is {self.measured()}{where}{of}; "
            f"the claim needs {claim.expectation()}: {self.reason}."
        )


def format_effect(claim: Claim, value: float) -> str:
    if claim.kind == "error_rate":
        return f"{value:.2%}"
    return f"{value:.2f}x"


def describe_comparison(claim: Claim) -> str:
    """'rps of a over b (steady, concurrency=2)': what differs, then what both share."""
    if claim.kind == "error_rate":
        return f"the {claim.metric} rate of {claim.numerator.describe()}"
    assert claim.denominator is not None
    num, den = claim.numerator.terms(), claim.denominator.terms()
    shared = [term for term in num if term in den]
    apart = [term for term in num if term not in shared], [t for t in den if t not in shared]
    text = f"{claim.metric} of {', '.join(apart[0]) or 'all'} over {', '.join(apart[1]) or 'all'}"
    return f"{text} ({', '.join(shared)})" if shared else text


def decide(
    interval: Interval | None,
    direction: str,
    threshold: float,
    numerator_floor: bool = False,
    denominator_floor: bool = False,
) -> tuple[str, str]:
    """Verdict and reason for one configuration.

    `*_floor` says a side's cells were `bound`: their rate is only a lower bound, so the
    true ratio may be higher (numerator) or lower (denominator) than measured, and only
    the decision that such a shift cannot overturn is kept.
    """
    if interval is None:
        return INCONCLUSIVE, "too few repeats for an interval"
    if interval.coverage < DECIDING_COVERAGE:
        return INCONCLUSIVE, (
            f"the repeats give only a {interval.label()}, "
            f"below the {DECIDING_COVERAGE:.0%} needed to decide"
        )
    widen = 1 + DECISION_MARGIN
    if direction == "within":
        band_low, band_high = 1 / (1 + threshold), 1 + threshold
        if numerator_floor or denominator_floor:
            return INCONCLUSIVE, "a side is bound by the load generator"
        if band_low <= interval.low and interval.high <= band_high:
            return HOLDS, "the whole interval lies inside the band"
        if interval.high < band_low / widen or interval.low > band_high * widen:
            return FAILS, f"the whole interval lies outside the band, widened by {widen - 1:.0%}"
        return INCONCLUSIVE, (
            f"the interval reaches the band or lies within {widen - 1:.0%} of its edge"
        )
    above = interval.low >= threshold * widen
    below = interval.high <= threshold / widen
    # A floor on the numerator can only raise the true ratio, on the denominator only lower it.
    if numerator_floor and below:
        return INCONCLUSIVE, "below the threshold, but the numerator is a lower bound"
    if denominator_floor and above:
        return INCONCLUSIVE, "above the threshold, but the denominator is a lower bound"
    if (direction == "greater" and above) or (direction == "less" and below):
        return HOLDS, f"the whole interval lies on the claimed side, {widen - 1:.0%} clear of it"
    if (direction == "greater" and below) or (direction == "less" and above):
        return FAILS, f"the whole interval lies on the other side, {widen - 1:.0%} clear of it"
    return INCONCLUSIVE, (
        f"the interval reaches the threshold or lies within {widen - 1:.0%} of it"
    )


def normalized(value: Any) -> str:
    """Parameters compare as text: YAML gives 50, pandas may hold 50 as Int64 or 50.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def select(frame: pd.DataFrame, selector: Selector) -> pd.DataFrame:
    mask = frame["metric"].notna()
    for column in ("implementation", "scenario", "client"):
        wanted = getattr(selector, column)
        if wanted is not None:
            mask &= frame[column].astype(str) == str(wanted)
    for name, wanted in selector.params.items():
        if name not in frame.columns:
            return frame.iloc[0:0]
        column = frame[name]
        mask &= column.notna() & (column.map(normalized) == normalized(wanted))
    return frame[mask]


def values_by_pair(
    claim: Claim, side: str, rows: pd.DataFrame, pooled: bool = False
) -> dict[tuple[str, ...], pd.DataFrame]:
    """The side's rows per configuration. For a ratio, several cells of one repeat in one
    configuration mean the selector is ambiguous, an error in the claims file; an error
    rate (`pooled`) sums its calls over every cell it selects, so it may take many."""
    groups: dict[tuple[str, ...], pd.DataFrame] = {}
    if claim.pair_by:
        for key, part in rows.groupby(list(claim.pair_by), sort=True, dropna=True):
            key = key if isinstance(key, tuple) else (key,)
            groups[tuple(normalized(k) for k in key)] = part
    elif not rows.empty:
        groups[()] = rows
    if pooled:
        return groups
    for part in groups.values():
        repeats = part.groupby("repeat")["cell_id"].nunique()
        if (repeats > 1).any():
            raise ClaimsError(
                f"claim {claim.id}: the {side} selects several configurations per repeat "
                f"(cells {sorted(part['cell_id'].unique())[:4]}...): name the parameters "
                "that tell them apart, or add them to pair_by"
            )
    return groups


def judge_ratio(claim: Claim, frame: pd.DataFrame) -> list[PairResult]:
    assert claim.denominator is not None
    metric_rows = frame[(frame["metric"] == claim.metric) & (frame["status"] != "failed")]
    numerators = values_by_pair(claim, "numerator", select(metric_rows, claim.numerator))
    denominators = values_by_pair(claim, "denominator", select(metric_rows, claim.denominator))
    results = []
    for key in sorted(set(numerators) & set(denominators)):
        num, den = numerators[key], denominators[key]
        xs, ys = num["value"].astype(float).tolist(), den["value"].astype(float).tolist()
        interval = ratio_interval(xs, ys)
        verdict, reason = decide(
            interval,
            claim.direction,
            claim.threshold,
            numerator_floor=bool((num["status"] == "bound").any()),
            denominator_floor=bool((den["status"] == "bound").any()),
        )
        effect = (
            statistics.median(xs) / statistics.median(ys) if statistics.median(ys) > 0 else math.nan
        )
        results.append(
            PairResult(
                key=dict(zip(claim.pair_by, key, strict=True)),
                effect=effect,
                interval=interval,
                verdict=verdict,
                reason=reason,
                n_numerator=len(xs),
                n_denominator=len(ys),
                cell_ids=tuple(sorted(num["cell_id"])) + tuple(sorted(den["cell_id"])),
            )
        )
    return results


def judge_error_rate(claim: Claim, frame: pd.DataFrame) -> list[PairResult]:
    """Errors over calls of every selected cell, failed cells included: errors are data."""
    rows = select(frame[frame["metric"].isin([claim.metric, CALLS_METRIC])], claim.numerator)
    results = []
    for key, part in values_by_pair(claim, "numerator", rows, pooled=True).items():
        calls = part[part["metric"] == CALLS_METRIC]
        # ghz writes an errors_<code> metric only for codes it saw: no row is zero errors.
        errors = int(part.loc[part["metric"] == claim.metric, "value"].sum())
        total = int(calls["value"].sum())
        if total <= 0:
            continue
        interval = clopper_pearson(errors, total)
        verdict, reason = decide(interval, claim.direction, claim.threshold)
        results.append(
            PairResult(
                key=dict(zip(claim.pair_by, key, strict=True)),
                effect=errors / total,
                interval=interval,
                verdict=verdict,
                reason=f"{errors} of {total} calls; {reason}",
                n_numerator=len(calls),
                n_denominator=0,
                cell_ids=tuple(sorted(part["cell_id"].unique())),
            )
        )
    return results


def weakest(pairs: list[PairResult], verdict: str, claim: Claim) -> PairResult:
    """The configuration a verdict rests on: for 'holds' and 'inconclusive' the one whose
    interval comes closest to, or reaches furthest past, the threshold (a configuration
    with no interval at all first); otherwise the first of the verdict."""
    candidates = [pair for pair in pairs if pair.verdict == verdict]
    if verdict not in (HOLDS, INCONCLUSIVE) or claim.direction == "within":
        return candidates[0]

    def margin(pair: PairResult) -> float:
        if pair.interval is None:
            return -math.inf
        if claim.direction == "greater":
            return pair.interval.low / claim.threshold
        return claim.threshold / pair.interval.high

    return min(candidates, key=margin)


def judge(claim: Claim, frame: pd.DataFrame, topology: str = "localhost") -> Verdict:
    """One claim against one run's tidy frame (`frames.read_run` rows plus derived metrics)."""
    if claim.topology not in (topology, ANY_TOPOLOGY):
        return Verdict(claim, NOT_MEASURED, f"it needs a {claim.topology} run, this is {topology}")
    rows = frame[frame["study"] == claim.study]
    if rows.empty:
        return Verdict(claim, NOT_MEASURED, f"the run has no {claim.study} cells")
    pairs = (
        judge_error_rate(claim, rows) if claim.kind == "error_rate" else judge_ratio(claim, rows)
    )
    if not pairs:
        return Verdict(
            claim,
            NOT_MEASURED,
            f"the run's profile has no {claim.study} cells of {describe_comparison(claim)}",
        )
    verdicts = {pair.verdict for pair in pairs}
    if FAILS in verdicts:
        verdict = FAILS
    elif verdicts == {HOLDS}:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    deciding = weakest(pairs, verdict, claim)
    return Verdict(claim, verdict, deciding.reason, deciding, tuple(pairs))


def claim_frame(run_dir: Path, studies: set[str]) -> pd.DataFrame:
    """perflab.analysis.frames rows plus each study's derived metrics (its analysis.claim_frame)."""
    import pandas as pd

    from perflab.analysis.frames import read_run

    parts = [read_run(run_dir)]
    for study in sorted(studies):
        try:
            analysis = importlib.import_module(f"perflab.studies.{study}.analysis")
        except ModuleNotFoundError as exc:
            if exc.name not in (f"perflab.studies.{study}", f"perflab.studies.{study}.analysis"):
                raise
            continue
        hook = getattr(analysis, "claim_frame", None)
        if hook is not None:
            parts.append(hook(run_dir))
    return pd.concat([part for part in parts if not part.empty], ignore_index=True)


def run_topology(run_dir: Path) -> str:
    manifest = Path(run_dir) / "manifest.json"
    if not manifest.is_file():
        return "localhost"
    return str(json.loads(manifest.read_text()).get("topology", "localhost"))


def judge_run(run_dir: str | Path, claims: list[Claim]) -> list[Verdict]:
    run_dir = Path(run_dir)
    frame = claim_frame(run_dir, {claim.study for claim in claims})
    topology = run_topology(run_dir)
    return [judge(claim, frame, topology) for claim in claims]
