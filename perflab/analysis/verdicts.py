"""A verdict per published claim and run: holds, does not hold, at its threshold,
inconclusive, not measured.

For each claim (perflab.analysis.claims) the engine picks the run's cells of both groups, per
configuration named by `pair_by`, and computes the effect with an interval whose coverage is
what its method gives for the repeats at hand (perflab.analysis.intervals):

- a ratio, where both groups ran one cell in each of the same rounds: paired within rounds,
  the geometric mean of the per-round ratios inside Student's t interval of their logs (a
  drift from round to round cancels in each ratio; the two groups' spreads need not match);
- a ratio otherwise: the Hodges-Lehmann factor (median of the pairwise ratios) inside the
  exact Moses (Mann-Whitney) interval it is the centre of;
- an error rate: errors over calls inside a Clopper-Pearson interval on the calls divided
  by the design effect the between-cell variance gives (failures cluster within a cell).

Each interval is computed at the coverage its decision needs (`Judging.coverage`: 90% at the
base look, a look's stricter coverage after), never wider: a 95% interval where 90% decides
threw away a third of the width a 3-round paired t interval has (t 4.30 against 2.92), and
left 4 readings of data/20261126-reference undecided that the stated coverage decides (issue
26). The simulation suite checks that intervals so labelled cover at that rate.

A configuration is decided by perflab.analysis.decisions from its interval and the claim's
bound (stated before the data, claims.yml `bound`), with `Judging.margin` (the run-to-run
drift within-run intervals cannot see; never below MIN_MARGIN) widening what a decision
must clear, never narrowing an equivalence band; where it exceeds a band's or not_worse's
stated tolerance, what would hold reads "undecidable by this design" (inconclusive). A
configuration whose seed figure sits inside that noise is expected to be at its threshold,
and is named so.

A claim holds when every configuration holds (each must, so no correction for their number
is needed). It does not hold when one configuration refutes it alone with the coverage a
Bonferroni correction for the claim's number of configurations asks (1 - (1 - coverage) / k),
or when every configuration does not hold (the chance that all of them mislead is at most
that of any one). It is at its threshold when every configuration holds or is at its
threshold (it holds where those at their threshold are all expected so and one holds), and
inconclusive otherwise. Nothing here knows a study: a study may add derived metrics through
its claim-frame hook (perflab.analysis.run).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perflab.analysis.claims import ANY_TOPOLOGY, DIRECTION, Claim, ClaimsError, Selector
from perflab.analysis.decisions import (
    AT_THRESHOLD,
    DECIDING_COVERAGE,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    UNDECIDABLE,
    at_threshold_expected,
    decide,
    percent,
)
from perflab.analysis.decisions import VERDICTS as VERDICTS  # the page's order, re-exported
from perflab.analysis.frames import DIVIDED_BY_CELL
from perflab.analysis.intervals import (
    TARGET_COVERAGE,
    CellCount,
    Interval,
    clustered_error_interval,
    highest_ratio_coverage,
    hodges_lehmann_ratio,
    paired_log_mean_ratio,
    paired_log_spread,
    paired_log_t_interval,
    ratio_interval,
)
from perflab.contract import params
from perflab.contract.bounds import FLOORED_METRICS

if TYPE_CHECKING:
    import pandas as pd

# A decided verdict must clear its threshold by at least this factor, on either side.
# Within-run intervals cannot see run-to-run drift: two quick runs of one commit gave 1.13
# and 0.79 for one ratio (issue 12). A run that measures its own noise floor (A/A cells)
# may ask for more (`judging_from_noise_floor`), never for less.
MIN_MARGIN = 0.10
# Rounds a paired interval needs: Student's t on 2 rounds has one degree of freedom, its
# spread a single difference; from 3 rounds the simulation suite checks its coverage.
MIN_PAIRED_ROUNDS = 3
# The count of calls an error rate is taken over (ghz's `count`: successful and failed).
CALLS_METRIC = "count"
DEFAULT_MARGIN_SOURCE = (
    "the floor: this run measures no noise floor of its own (no A/A cells), and two runs of "
    "one commit have drifted further than within-run intervals show"
)


@dataclass(frozen=True)
class Judging:
    """How the data decide: the margin a decided verdict clears its threshold by, where
    that margin came from, and the coverage a configuration's interval needs."""

    margin: float = MIN_MARGIN
    source: str = DEFAULT_MARGIN_SOURCE
    coverage: float = DECIDING_COVERAGE
    # The least margin allowed: MIN_MARGIN for a run; the simulation suite (perflab.analysis
    # .simulation) also checks the intervals with no margin at all.
    floor: float = MIN_MARGIN
    # False removes the corrections (pairing within rounds, clustering of errors) for the
    # simulation suite to show that it then fails; a run is always judged with them.
    corrections: bool = True

    def __post_init__(self) -> None:
        if not self.margin >= self.floor:
            raise ValueError(f"a decision margin of {self.margin!r} is below {self.floor:.0%}")

    def sentence(self) -> str:
        return (
            f"Decision margin: {self.margin:.0%}, from {self.source}. A decided verdict clears "
            f"its threshold by that factor with an interval of at least {percent(self.coverage)} "
            "coverage; an interval wholly inside the margin zone is 'at its threshold'."
        )


def judging_from_noise_floor(floor: float | None, measured_on: str = "") -> Judging:
    """The margin a measured noise floor sets (e.g. the widest A/A drift between two cells
    of one configuration), never below MIN_MARGIN; the default when nothing measured it."""
    if floor is None:
        return Judging()
    if floor <= MIN_MARGIN:
        return Judging(
            MIN_MARGIN,
            f"the floor of {MIN_MARGIN:.0%}: the run's noise floor, {floor:.0%} "
            f"measured on {measured_on or 'its A/A cells'}, is below it",
        )
    return Judging(floor, f"the run's noise floor, measured on {measured_on or 'its A/A cells'}")


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
    # The cells it rests on: each side's own, then the cells its derived rows divide by
    # (`rested_on`), so a look repeats those with them.
    cell_ids: tuple[str, ...]
    # Cells of this configuration that failed (no value): said, never silently dropped.
    failed_cells: int = 0
    # A "does not hold" that survives the correction for the claim's number of configurations.
    refutes_alone: bool = False
    alone_reason: str = ""
    # Its ratio was paired within rounds (RatioMethod), not taken over every pair of cells.
    paired: bool = False
    # The seed's own figure here sits inside the run's noise (decisions.at_threshold_expected).
    expected_at_threshold: bool = False
    # The SD of its per-round log ratios where paired (perflab.analysis.power's sigma).
    spread: float | None = None
    # An error rate's cells, their calls and failures (perflab.analysis.error_power).
    counts: tuple[CellCount, ...] = ()

    def where(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.key.items())


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    reason: str
    deciding: PairResult | None = None
    pairs: tuple[PairResult, ...] = field(default_factory=tuple)
    judging: Judging = field(default_factory=Judging)
    # The look that gave this verdict (0: the base rounds; perflab.analysis.adaptive) and
    # the rounds of the claim's study by then (None: not judged over looks).
    look: int = 0
    rounds: int | None = None

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
        return "not measured" if self.deciding is None else measured(self.claim, self.deciding)

    def sentence(self) -> str:
        """The verdict in one plain sentence, generated from the numbers."""
        claim = self.claim
        if self.deciding is None:
            return f"Not measured: {self.reason}."
        subject = describe_comparison(claim)
        where = f" at {self.deciding.where()}" if self.deciding.key else ""
        of = ""
        if len(self.pairs) > 1:
            # What the configuration shown did, which a claim undecided overall may differ from.
            shown = self.deciding.verdict
            alike = sum(pair.verdict == shown for pair in self.pairs)
            of = f" (it {STATES[shown]} in {alike} of {len(self.pairs)} configurations"
            # weakest() picks by interval, not by effect: a larger effect with a wider
            # interval can be the one shown, so the sentence says which rule chose it.
            if self.verdict == HOLDS and claim.bound.test == DIRECTION:
                of += "; shown: the one whose interval comes nearest the threshold"
            of += ")"
        lead = self.verdict[0].upper() + self.verdict[1:]
        return (
            f"{lead}: {subject} is {self.measured()}{where}{of}; "
            f"the claim needs {claim.expectation()}: {self.reason}."
        )

    def configurations(self) -> list[str]:
        """Every configuration's effect, interval and verdict; the deciding one marked. An
        interval of the same kind and coverage as the deciding one's (shown beside the
        verdict) is not labelled again."""
        said = self.interval.label() if self.interval is not None else None
        lines = []
        for pair in self.pairs:
            mark = " (decides)" if pair is self.deciding and len(self.pairs) > 1 else ""
            failed = f", {pair.failed_cells} failed cell(s)" if pair.failed_cells else ""
            shown = measured(self.claim, pair)
            if said is not None and pair.interval is not None and pair.interval.label() == said:
                shown = shown.removesuffix(f" ({said})")
            lines.append(f"{pair.where() or 'all cells'}: {shown}, {pair.verdict}{failed}{mark}")
        return lines

    def coverage(self) -> str:
        """Which of the seed's configurations the run's cells cover, where the claim names
        them (claims.yml `seed_configurations`); '' where it does not."""
        return seed_coverage(self.claim, self.pairs)


STATES = {
    HOLDS: "holds",
    FAILS: "does not hold",
    AT_THRESHOLD: "is at its threshold",
    INCONCLUSIVE: "is undecided",
}


def measured(claim: Claim, pair: PairResult) -> str:
    value = format_effect(claim, pair.effect)
    if pair.interval is None:
        return f"{value} (no interval: {pair.n_numerator} vs {pair.n_denominator} repeats)"
    low = format_effect(claim, pair.interval.low)
    high = format_effect(claim, pair.interval.high)
    return f"{value} [{low}, {high}] ({pair.interval.label()})"


def seed_coverage(claim: Claim, pairs: tuple[PairResult, ...]) -> str:
    """e.g. 'covers concurrency 2, 10 of the seed's 2, 10, 25, 50'."""
    parts = []
    for name, seeds in claim.seed_configurations.items():
        if name in claim.pair_by:
            ran = {normalized(pair.key[name]) for pair in pairs}
        else:
            fixed = claim.numerator.params.get(name)
            fixed = [] if fixed is None else fixed if isinstance(fixed, list) else [fixed]
            ran = {normalized(value) for value in fixed} if pairs else set()
        covered = [value for value in seeds if value in ran]
        extra = sorted(ran - set(seeds))
        text = f"{name} {', '.join(covered) or 'none'} of the seed's {', '.join(seeds)}" + (
            f" (and {', '.join(extra)}, which the seed did not run)" if extra else ""
        )
        parts.append(text + scale_of(claim, name, covered))
    return f"The run covers {'; '.join(parts)}." if parts else ""


def scale_of(claim: Claim, name: str, covered: list[str]) -> str:
    """' (large scaled down: see "Scaled folder")' where the claim's `scaled` names a covered
    value ('the large folder'): a scaled-down folder is not the seed's, and the sentence
    naming it as covered must say so. The scale itself is said once, on the claim's
    "Scaled folder" line (findings.regime_lines), not again here."""
    text = " ".join(claim.scaled.split())
    named = [value for value in covered if f"the {value} {name}" in text]
    return f' ({", ".join(named)} scaled down: see "Scaled folder")' if named else ""


def format_effect(claim: Claim, value: float) -> str:
    if value != value:
        return "n/a"
    if claim.kind == "error_rate":
        return f"{value:.2%}"
    return f"{significant(value)}x"


def significant(value: float, digits: int = 3) -> str:
    """Three significant digits, never an exponent: 2.13, 0.500, 0.000990, 43.6, 1234 (a
    fixed two decimals would print 12 of 12 142 context switches as 0.00)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{value:.{max(decimals, 0)}f}"


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


def margin_for(claim: Claim, judging: Judging) -> float:
    """The noise margin a claim's verdicts clear: the run's for a ratio; none for an error
    rate, whose interval carries the spread between cells itself."""
    return 0.0 if claim.kind == "error_rate" else judging.margin


def needed_alone(judging: Judging, configurations: int) -> float:
    """The coverage one configuration's interval needs to refute a claim alone among
    `configurations` (Bonferroni: the claim's error spread over every configuration)."""
    return 1 - (1 - judging.coverage) / max(1, configurations)


def refutation_alone(
    claim: Claim,
    interval_at: Callable[[float], Interval | None],
    configurations: int,
    judging: Judging,
    reach: str,
) -> tuple[bool, str]:
    """Whether a configuration that does not hold refutes the claim by itself, and why.
    `interval_at(target)` gives its interval aiming at a coverage; `reach` says what the
    repeats can reach when the target is out of their reach."""
    if configurations <= 1:
        return True, ""
    need = needed_alone(judging, configurations)
    interval = interval_at(need)
    verdict, _ = decide(
        interval, claim.bound, margin_for(claim, judging), need, metric=claim.metric
    )
    among = f"one of {configurations} configurations needs a {percent(need)} interval alone"
    if interval is None or interval.coverage < need - 1e-9:
        return False, f"{among} (Bonferroni), {reach}"
    shown = f"[{format_effect(claim, interval.low)}, {format_effect(claim, interval.high)}]"
    if verdict == FAILS:
        return True, f"its {interval.label()} {shown} lies past too ({among}, Bonferroni)"
    return False, f"its {interval.label()} {shown} reaches back ({among}, Bonferroni)"


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
        column = frame.get(name)
        if name in params.RECORDED_LATE:
            # A cell recorded before the parameter was ran its old value (perflab.contract.params).
            late = params.RECORDED_LATE[name]
            column = frame.assign(**{name: late})[name] if column is None else column.fillna(late)
        if column is None:
            return frame.iloc[0:0]
        # A list selects any of its values (e.g. concurrency: [10, 25, 50]).
        options = {normalized(v) for v in (wanted if isinstance(wanted, list) else [wanted])}
        mask &= column.notna() & column.map(normalized).isin(options)
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


def lower_bounds(rows: pd.DataFrame) -> bool:
    """Whether any of these rows is only a lower bound: a metric of bounds.FLOORED_METRICS
    above the run's effective ceiling (`mark_lower_bounds`), or, where the run could not
    give one, recorded `bound` at run time. A bound cell's latency or CPU is what it was."""
    if rows.empty:
        return False
    if "lower_bound" in rows.columns:
        return bool(rows["lower_bound"].eq(True).any())
    return bool(((rows["status"] == "bound") & rows["metric"].isin(FLOORED_METRICS)).any())


def failed_by_pair(claim: Claim, failed: pd.DataFrame, selector: Selector) -> dict[tuple, int]:
    """Per configuration, how many of the side's cells failed (no value to compare), from
    the rows of the run's failed cells."""
    if failed.empty:
        return {}
    chosen = select(failed, selector).drop_duplicates("cell_id")
    return {key: len(part) for key, part in values_by_pair(claim, "", chosen, True).items()}


# What judging reads of a row besides the claim's own parameters (ratio_pair, lower_bounds).
JUDGED_COLUMNS = (
    "implementation",
    "scenario",
    "client",
    "repeat",
    "metric",
    "value",
    "cell_id",
    DIVIDED_BY_CELL,
    "status",
    "lower_bound",
)


def claim_columns(claim: Claim, frame: pd.DataFrame) -> list[str]:
    """The frame's columns a ratio claim is judged on, in the frame's order."""
    assert claim.denominator is not None
    wanted = {
        *JUDGED_COLUMNS,
        *claim.pair_by,
        *claim.numerator.params,
        *claim.denominator.params,
    }
    return [column for column in frame.columns if column in wanted]


FAILED_RULE = (
    "a failure may be the effect itself (a server that fails under load is not faster), so "
    "the cells that ran cannot decide this configuration alone"
)


def judge_ratio(claim: Claim, frame: pd.DataFrame, judging: Judging) -> list[PairResult]:
    """Per configuration, the Hodges-Lehmann factor in its Moses interval. A configuration
    whose cells failed is kept and says how many; with any failed cell it is inconclusive
    (FAILED_RULE), with no cell left on a side it has no interval."""
    assert claim.denominator is not None
    sides = claim.numerator, claim.denominator
    # Only the columns this claim reads: a run's frame holds every study's parameters, and
    # each selection below would copy all of them (most of judging's time before).
    frame = frame[claim_columns(claim, frame)]
    rows = frame[(frame["metric"] == claim.metric) & (frame["status"] != "failed")]
    measured_sides = [
        values_by_pair(claim, name, select(rows, side))
        for name, side in zip(("numerator", "denominator"), sides, strict=True)
    ]
    failed_rows = frame[frame["status"] == "failed"]
    failed = [failed_by_pair(claim, failed_rows, side) for side in sides]
    both = [
        key
        for key in set(measured_sides[0]) | set(failed[0])
        if key in measured_sides[1] or key in failed[1]
    ]
    keys = sorted(both, key=natural)
    empty = frame.iloc[0:0]
    results = []
    for key in keys:
        num, den = (side.get(key, empty) for side in measured_sides)
        lost = failed[0].get(key, 0) + failed[1].get(key, 0)
        results.append(ratio_pair(claim, key, (num, den), lost, len(keys), judging))
    return results


@dataclass(frozen=True)
class RatioMethod:
    """How one configuration's two groups are compared. Paired within rounds (Student's t
    on the per-round log ratios: a round's drift cancels, the two spreads need not be equal,
    3 rounds reach any coverage; its coverage is checked by perflab.analysis.simulation)
    where every round ran one cell of each; else unpaired (the exact Moses interval of all
    pairwise ratios, which assumes the groups differ by a factor only). The choice rests on
    which rounds ran, never on the values."""

    xs: list[float]
    ys: list[float]
    # (numerator, denominator) per round, when both sides ran once in each of the same rounds.
    rounds: list[tuple[float, float]] | None
    # The coverage the configuration's verdict needs (Judging.coverage).
    deciding: float

    # False: never pair (the simulation suite's "correction removed").
    pairing: bool = True

    @property
    def paired(self) -> bool:
        return self.pairing and self.rounds is not None and len(self.rounds) >= MIN_PAIRED_ROUNDS

    def interval(
        self, target: float = TARGET_COVERAGE, need: float | None = None
    ) -> Interval | None:
        """Aiming at `target` (`need` is kept for callers: the paired t interval reaches
        any coverage, so paired it is the target's)."""
        if self.paired:
            assert self.rounds is not None
            return paired_log_t_interval(self.rounds, target)
        return ratio_interval(self.xs, self.ys, target)

    def effect(self) -> float:
        if self.paired:
            assert self.rounds is not None
            return paired_log_mean_ratio(self.rounds)
        return hodges_lehmann_ratio(self.xs, self.ys)

    def reach(self) -> str:
        """What the repeats can reach at most (unpaired: the furthest), said when a coverage
        is out of it."""
        most = highest_ratio_coverage(len(self.xs), len(self.ys))
        return (
            f"which {len(self.xs)} vs {len(self.ys)} repeats cannot reach (at most {percent(most)})"
        )


def ratio_method(sides: tuple[pd.DataFrame, pd.DataFrame], judging: Judging) -> RatioMethod:
    """The two sides' values, paired by round where both ran exactly one cell in each of
    the same rounds (at least two)."""
    xs, ys = ([] if side.empty else side["value"].astype(float).tolist() for side in sides)
    by_round = [
        dict(zip(side["repeat"], side["value"].astype(float), strict=True)) for side in sides
    ]
    pairs_up = (
        len(by_round[0]) == len(xs) >= 2
        and len(by_round[1]) == len(ys)
        and set(by_round[0]) == set(by_round[1])
    )
    rounds = sorted(by_round[0])
    paired = [(by_round[0][r], by_round[1][r]) for r in rounds] if pairs_up else None
    return RatioMethod(xs, ys, paired, judging.coverage, judging.corrections)


def shared_rounds(
    sides: tuple[pd.DataFrame, pd.DataFrame],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sides cut to the rounds they share, where each ran one cell a round and they
    share at least MIN_PAIRED_ROUNDS. A look that repeats one side's configuration for
    another claim leaves this one with 8 rounds against 3: taken as they are, the pairing
    is lost and the claim judged by an unpaired interval over unequal groups
    (throughput-tls-costs-python on data/20261127T012251Z-quick, 97% Moses over 3 vs 8).
    Which rounds are kept rests on which rounds ran, never on the values."""
    rounds = [side["repeat"] for side in sides]
    if any(side.empty or not r.is_unique for side, r in zip(sides, rounds, strict=True)):
        return sides
    shared = set(rounds[0]) & set(rounds[1])
    if len(shared) < MIN_PAIRED_ROUNDS or all(set(r) == shared for r in rounds):
        return sides
    num, den = (side[r.isin(shared)] for side, r in zip(sides, rounds, strict=True))
    return num, den


def ratio_pair(
    claim: Claim,
    key: tuple[str, ...],
    sides: tuple[pd.DataFrame, pd.DataFrame],
    lost: int,
    configurations: int,
    judging: Judging,
) -> PairResult:
    if judging.corrections:
        sides = shared_rounds(sides)
    num, den = sides
    method = ratio_method(sides, judging)
    interval = method.interval(judging.coverage, judging.coverage)
    verdict, reason = decide(
        interval,
        claim.bound,
        judging.margin,
        judging.coverage,
        (lower_bounds(num), lower_bounds(den)),
        claim.metric,
    )
    if interval is None or interval.coverage < judging.coverage - 1e-9:
        # Not the data's doing: these repeats cannot give the coverage at any values.
        reason = (
            f"{UNDECIDABLE} (needs {MIN_PAIRED_ROUNDS} rounds with one cell of "
            f"each group in every round, or more repeats: {method.reach()})"
        )
    alone, why = False, ""
    if verdict == FAILS:
        alone, why = refutation_alone(
            claim, method.interval, configurations, judging, method.reach()
        )
    if lost:
        verdict, alone = INCONCLUSIVE, False
        reason = f"{lost} of its cells failed: {FAILED_RULE}"
    return PairResult(
        key=dict(zip(claim.pair_by, key, strict=True)),
        effect=method.effect(),
        interval=interval,
        verdict=verdict,
        reason=reason,
        n_numerator=len(method.xs),
        n_denominator=len(method.ys),
        cell_ids=rested_on(num) + rested_on(den),
        failed_cells=lost,
        refutes_alone=alone,
        alone_reason=why,
        paired=method.paired,
        spread=paired_log_spread(method.rounds) if method.paired and method.rounds else None,
        expected_at_threshold=at_threshold_expected(
            claim.bound, claim.seed_figures.get(key), judging.margin
        ),
    )


def rested_on(side: pd.DataFrame) -> tuple[str, ...]:
    """A side's cells: its rows' own, and the cells its derived rows divide by
    (frames.DIVIDED_BY_CELL). A claim on TLS over no-TLS throughput rests on the no-TLS
    cells too: a look that knew its TLS cells alone repeated them, no derived row came of
    it, and the claim kept its base rounds (data/20261129T041406Z-quick)."""
    own = tuple(sorted(side["cell_id"]))
    if DIVIDED_BY_CELL not in side.columns:
        return own
    divisors = sorted(set(side[DIVIDED_BY_CELL].dropna().astype(str)) - set(own))
    return own + tuple(divisors)


def natural(key: tuple[str, ...]) -> tuple[tuple[float, str], ...]:
    """Configurations in the order a reader expects: concurrency 2 before 10."""
    order = []
    for value in key:
        try:
            order.append((float(value), value))
        except ValueError:
            order.append((math.inf, value))
    return tuple(order)


def judge_error_rate(claim: Claim, frame: pd.DataFrame, judging: Judging) -> list[PairResult]:
    """The error rate over calls, failed cells included (errors are data), in an interval
    that allows for failures clustering within a cell (intervals.clustered_error_interval)."""
    rows = select(frame[frame["metric"].isin([claim.metric, CALLS_METRIC])], claim.numerator)
    groups = values_by_pair(claim, "numerator", rows, pooled=True)
    results = []
    for key, part in sorted(groups.items(), key=lambda item: natural(item[0])):
        cells = cell_counts(claim, part)
        if not cells:
            continue
        errors, calls = sum(c.errors for c in cells), sum(c.calls for c in cells)
        interval = clustered_error_interval(cells, judging.coverage, judging.corrections)
        verdict, reason = decide(interval, claim.bound, 0.0, judging.coverage)
        alone, why = False, ""
        if verdict == FAILS:
            alone, why = refutation_alone(
                claim,
                lambda target, c=cells: clustered_error_interval(c, target, judging.corrections),
                len(groups),
                judging,
                "",
            )
        with_errors = sum(c.errors > 0 for c in cells)
        results.append(
            PairResult(
                key=dict(zip(claim.pair_by, key, strict=True)),
                effect=errors / calls,
                interval=interval,
                verdict=verdict,
                reason=(
                    f"errors in {with_errors} of {len(cells)} cells ({errors} of {calls} "
                    f"calls); {reason}"
                ),
                n_numerator=len(cells),
                n_denominator=0,
                cell_ids=tuple(sorted(part["cell_id"].unique())),
                refutes_alone=alone,
                alone_reason=why,
                counts=tuple(cells),
            )
        )
    return results


def cell_counts(claim: Claim, part: pd.DataFrame) -> list[CellCount]:
    """Each cell's calls and errors (cells with calls only)."""
    cells = []
    for _, cell in part.groupby("cell_id", sort=True):
        total = int(cell.loc[cell["metric"] == CALLS_METRIC, "value"].sum())
        # ghz writes an errors_<code> metric only for codes it saw: no row is zero errors.
        failed = int(cell.loc[cell["metric"] == claim.metric, "value"].sum())
        if total > 0:
            cells.append(CellCount(failed, total))
    return cells


def weakest(pairs: list[PairResult], verdict: str, claim: Claim) -> PairResult:
    """The configuration a verdict rests on: for 'holds', 'inconclusive' and a refutation by
    every configuration the one whose interval comes closest to, or reaches furthest past,
    the threshold (a configuration with no interval at all first); otherwise the first."""
    candidates = [pair for pair in pairs if pair.verdict == verdict] or list(pairs)
    if claim.bound.test != DIRECTION or verdict == AT_THRESHOLD:
        return candidates[0]
    limit = claim.bound.limit

    def margin(pair: PairResult) -> float:
        if pair.interval is None:
            return -math.inf
        low, high = pair.interval.low, pair.interval.high
        if (claim.direction == "greater") == (verdict != FAILS):
            return low / limit if low > 0 else -math.inf
        return limit / high if high > 0 else math.inf

    return min(candidates, key=margin)


def combine(claim: Claim, pairs: list[PairResult], judging: Judging) -> tuple[str, str, PairResult]:
    """The claim's verdict, its reason and the configuration it rests on."""
    verdicts = {pair.verdict for pair in pairs}
    refuting = [pair for pair in pairs if pair.refutes_alone]
    if refuting:
        pair = refuting[0]
        return FAILS, pair.reason + (f"; {pair.alone_reason}" if pair.alone_reason else ""), pair
    if verdicts == {FAILS}:
        pair = weakest(pairs, FAILS, claim)
        return FAILS, f"{pair.reason}, and so does every one of {len(pairs)} configurations", pair
    if verdicts == {HOLDS}:
        pair = weakest(pairs, HOLDS, claim)
        return HOLDS, pair.reason, pair
    if verdicts <= {HOLDS, AT_THRESHOLD}:
        return at_threshold(claim, pairs)
    failing = [p for p in pairs if p.verdict == FAILS]
    pair = weakest(pairs, INCONCLUSIVE, claim) if INCONCLUSIVE in verdicts else failing[0]
    reason = pair.reason if pair.verdict == INCONCLUSIVE else ""
    if failing:
        # Some configurations do not hold, none strongly enough to refute the claim alone.
        reason += "; " if reason else ""
        reason += (
            f"{len(failing)} of {len(pairs)} configurations do not hold at "
            f"{percent(judging.coverage)}, not enough to refute the claim: "
            f"{failing[0].alone_reason}"
        )
    return INCONCLUSIVE, reason, pair


def at_threshold(claim: Claim, pairs: list[PairResult]) -> tuple[str, str, PairResult]:
    """Every configuration holds or is at its threshold. Where each one at its threshold is
    one whose seed figure sits inside the noise too, that is the seed's own finding: the
    claim holds if any configuration does, and is at its threshold as expected if none does."""
    level = [pair for pair in pairs if pair.verdict == AT_THRESHOLD]
    pair = weakest(pairs, AT_THRESHOLD, claim)
    if not all(p.expected_at_threshold for p in level):
        return AT_THRESHOLD, pair.reason, pair
    where = ", ".join(p.where() or "its configuration" for p in level)
    expected = (
        f"at {where} the seed's own figure sits inside the noise too, so 'at its threshold' "
        "is what a faithful replication gives there"
    )
    if len(level) == len(pairs):
        return AT_THRESHOLD, f"{pair.reason}; as expected: {expected}", pair
    held = weakest(pairs, HOLDS, claim)
    return HOLDS, f"{held.reason}; {expected}", held


def judge(
    claim: Claim, frame: pd.DataFrame, topology: str = "localhost", judging: Judging | None = None
) -> Verdict:
    """One claim against one run's tidy frame (`frames.read_run` rows plus derived metrics)."""
    judging = judging or Judging()
    if claim.topology not in (topology, ANY_TOPOLOGY):
        return Verdict(
            claim,
            NOT_MEASURED,
            f"it needs a {claim.topology} run, this is {topology}",
            judging=judging,
        )
    rows = frame[frame["study"] == claim.study]
    if rows.empty:
        return Verdict(claim, NOT_MEASURED, f"the run has no {claim.study} cells", judging=judging)
    pairs = (
        judge_error_rate(claim, rows, judging)
        if claim.kind == "error_rate"
        else judge_ratio(claim, rows, judging)
    )
    if not pairs:
        needs = f"; its cells need {claim.needs}" if claim.needs else ""
        return Verdict(
            claim,
            NOT_MEASURED,
            f"the run's profile has no {claim.study} cells of {describe_comparison(claim)}{needs}",
            judging=judging,
        )
    verdict, reason, deciding = combine(claim, pairs, judging)
    return Verdict(claim, verdict, reason, deciding, tuple(pairs), judging)
