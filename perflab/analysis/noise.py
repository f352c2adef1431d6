"""The run's own noise floor, from its A/A cells, and the decision margin it sets.

Each study may run one configuration twice in every round (perflab.contract.rounds: params
`aa` "a" and "b"). On a quiet host the two would measure the same; how far their ratio
strays is noise that a claim's ratio carries too. Defined precisely:

- a kind of client is a study's A/A configuration (its load: ghz on hello, the Python
  clients on pyclients, ...);
- for each metric m a ratio claim of that study is judged on, the A/A effect is the
  Hodges-Lehmann factor of copy a over copy b (the median of a_i / b_j over every pair of
  rounds), computed exactly as a claim's effect is (perflab.analysis.verdicts), and
  d(m) = |log of it|: the factor by which drift alone moves a claim's effect in this run;
- the kind's floor is exp(max over m of d) - 1.

Not the widest single-round ratio: a claim compares groups of rounds, so one bad round
moves its effect by far less than that round's ratio, and a margin set by the single worst
round (it was 94% on a loaded host) would leave nearly every claim undecidable; the A/A
effect is the drift a claim's effect really carries.
- each study's claims are judged with the margin its own kind of client sets,
  max(10%, floor) (perflab.analysis.verdicts.judging_from_noise_floor); a study without A/A
  cells keeps 10%. Not one run-wide margin from the noisiest kind: a watch server's CPU
  drifting says nothing about ghz's req/s, and would leave every hello claim undecidable.
- a study may run several A/A configurations, one per kind of client or method (hello's
  steady and seed_n200, pyclients' steady and seed methods, aws_io's unary and stream
  calls). The coordinates on which its A/A configurations differ are what tells the kinds
  apart; a claim is judged with the kind whose values its two sides fix there (a claim
  whose sides differ there, or leave one open, with the widest of the kinds it spans), on
  its own metric. A claim whose values match no A/A configuration is judged at the floor
  of 10%, said on its verdict and the index: never with another method's margin. A study
  with one A/A configuration has no such coordinate, and all its claims take it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from perflab.analysis.claims import Claim, Selector
from perflab.analysis.drift_history import AaSeries, DriftPrediction, HistoryRun, predict
from perflab.analysis.intervals import (
    hodges_lehmann_ratio,
    log_t_half_width,
    paired_log_t_interval,
)
from perflab.analysis.verdicts import Judging, judging_from_noise_floor, normalized
from perflab.contract.adaptive import configuration_of
from perflab.contract.cell import AA_PARAM
from perflab.contract.rounds import AA_COPIES, copied_id

if TYPE_CHECKING:
    import pandas as pd

    from perflab.analysis.run import Run
    from perflab.contract.adaptive import Look

# The coverage of the A/A interval whose far end sets a metric's margin.
NOISE_COVERAGE = 0.90
# Columns that say which cell a row is, not which configuration.
# Claim selector fields that are cell columns of the same name (the rest are params).
SELECTOR_COLUMNS = ("implementation", "scenario", "client")
NOT_CONFIGURATION = {"run_id", "repeat", "metric", "value", "unit", "cell_id", "status", AA_PARAM}


@dataclass(frozen=True)
class KindFloor:
    """One kind of client's A/A drift: its largest A/A effect, |a / b - 1| on the log scale."""

    study: str
    client: str
    configuration: str
    metrics: tuple[str, ...]
    rounds: int
    floor: float
    # The metric whose A/A effect is the largest.
    widest_metric: str
    # Each metric's own margin: the far end of its A/A ratio's 90% paired t interval over
    # the rounds (the drift with its uncertainty), |log| back as a factor - 1.
    per_metric: dict[str, float] = field(default_factory=dict)
    # The A/A configuration's values by column (implementation, scenario, client, params):
    # what a claim's selectors are matched against (`claim_kinds`).
    coordinates: dict[str, str] = field(default_factory=dict)
    # Its cells' id without copy and round ("aa-a-<this>-r1"): what a look repeats.
    cell_configuration: str = ""
    # Each metric's per-round log ratios of copy a over copy b: what the margin would be
    # over more rounds is predicted from their mean and spread (`margin_at`).
    log_ratios: dict[str, tuple[float, ...]] = field(default_factory=dict)
    # Metric -> its drift predicted from the machine's A/A history (this run's series among
    # it), where enough runs measured it: its margin is then that prediction's far end, not
    # this run's own (perflab.analysis.drift_history).
    history: dict[str, DriftPrediction] = field(default_factory=dict)

    def copies(self) -> set[tuple[str, str]]:
        """Its two copies as (study, configuration) keys of the adaptive planner."""
        return {(self.study, f"aa-{label}-{self.cell_configuration}") for label in AA_COPIES}

    def kind(self) -> str:
        return f"{self.client} on {self.study}"

    def margin_at(self, metric: str, rounds: int) -> float | None:
        """The margin this kind's A/A cells would set on `metric` over `rounds` rounds, were
        the drift and spread of its log ratios what this run measured: the far end of the
        90% paired t interval shrinks as t(rounds - 1) / sqrt(rounds), towards the drift
        itself. What a plan prices a claim at (a look's rounds go to its A/A copies too),
        not a margin a verdict is judged with. None: fewer than 2 rounds measured it."""
        logs = self.log_ratios.get(metric, ())
        if metric in self.history:
            return judging_from_noise_floor(self.history[metric].margin, "predicted").margin
        if len(logs) < 2 or rounds < 2:
            return None
        drift = abs(statistics.fmean(logs))
        far = drift + log_t_half_width(statistics.stdev(logs), rounds, NOISE_COVERAGE)
        return judging_from_noise_floor(math.expm1(far), "predicted").margin

    def judging(self, metric: str) -> Judging:
        """The margin this kind's A/A cells set for a claim on `metric`."""
        predicted = self.history.get(metric)
        if predicted is not None:
            return judging_from_noise_floor(
                self.per_metric[metric],
                f"its A/A history ({self.kind()}: {self.configuration}; {metric}: the far end "
                f"of the 90% prediction interval of this run's drift from {predicted.runs} runs "
                f"of this machine since {predicted.earliest[:10]}, this run's {self.rounds} "
                "rounds among them)",
            )
        return judging_from_noise_floor(
            self.per_metric[metric],
            f"its A/A cells ({self.kind()}: {self.configuration}; {metric}: the far end of "
            f"the A/A ratio's 90% interval over {self.rounds} rounds)",
        )


@dataclass(frozen=True)
class NoiseFloor:
    """Every kind's floor; the run's floor is the largest."""

    kinds: tuple[KindFloor, ...]
    # Claim id -> the kinds whose A/A cells judge it (`claim_kinds`); () for a claim that
    # matches none of its study's A/A configurations, judged at the floor.
    by_claim: dict[str, tuple[KindFloor, ...]] = field(default_factory=dict)
    # Claim id -> its metric, for the claims in `by_claim`.
    metric_of: dict[str, str] = field(default_factory=dict)
    # Claim id -> the ratios its effect multiplies (Claim.drift_ratios), where more than one.
    ratios_of: dict[str, int] = field(default_factory=dict)

    def aa_configurations(self) -> dict[str, set[tuple[str, str]]]:
        """Claim id -> the A/A copies whose drift judges it: a look that gives the claim
        rounds gives them these too, so its margin rests on as many rounds as its data."""
        return {
            claim: {key for kind in kinds for key in kind.copies()}
            for claim, kinds in self.by_claim.items()
        }

    @property
    def widest(self) -> KindFloor | None:
        return max(self.kinds, key=lambda kind: kind.floor, default=None)

    def judging_by_study(self) -> dict[str | tuple[str, str], Judging]:
        """Each study's decision margin, from its own kind of client's floor, and under
        (study, metric) each metric's own (the widest over the study's kinds), and under a
        claim's id the margin of its own kind on its metric (a claim is judged with the first
        of these it has, perflab.analysis.adaptive.judging_of): never another metric's or
        another method's noise."""
        found: dict[str | tuple[str, str], Judging] = {}
        for kind in sorted(self.kinds, key=lambda kind: kind.floor):
            found[kind.study] = judging_from_noise_floor(
                kind.floor,
                f"its A/A cells ({kind.kind()}, {kind.widest_metric} over {kind.rounds} rounds)",
            )
        for kind in self.kinds:
            for metric in kind.per_metric:
                known = found.get((kind.study, metric))
                mine = kind.judging(metric)
                if known is None or mine.margin > known.margin:
                    found[(kind.study, metric)] = mine
        for claim_id, kinds in self.by_claim.items():
            metric = self.metric_of[claim_id]
            ratios = self.ratios_of.get(claim_id, 1)
            found[claim_id] = derived_judging(claim_judging(kinds, metric), ratios, metric)
        return found

    def margin_at(self, claim_id: str, rounds: int) -> float | None:
        """A claim's margin were its kinds' A/A copies measured over `rounds` rounds (the
        widest of its kinds on its metric, as `claim_judging`); None: no kind of its own
        measured its metric."""
        metric = self.metric_of.get(claim_id)
        predicted = [
            kind.margin_at(metric, rounds) for kind in self.by_claim.get(claim_id, ()) if metric
        ]
        known = [margin for margin in predicted if margin is not None]
        if not known:
            return None
        return derived_margin(max(known), self.ratios_of.get(claim_id, 1))

    def judging(self) -> Judging:
        widest = self.widest
        if widest is None:
            return Judging()
        among = f"; the widest of {len(self.kinds)} kinds of client" if len(self.kinds) > 1 else ""
        where = (
            f"its A/A cells ({widest.kind()}, {widest.widest_metric} over "
            f"{widest.rounds} rounds{among})"
        )
        return judging_from_noise_floor(widest.floor, where)


def derived_margin(margin: float, ratios: int) -> float:
    """The margin for an effect that multiplies `ratios` independent ratios, each drifting
    as the A/A ratio `margin` bounds: their log drifts add, so the bound grows with the
    square root of their count on the log scale. A ratio of two TLS-over-no-TLS ratios
    carries four cells' drift where the A/A ratio carries two: judged with the A/A's own
    margin, that margin covers its drift between boots less often than the 90% it states
    (perflab.analysis.simulation's ratio-of-ratios case; tests/test_simulation.py)."""
    if ratios <= 1:
        return margin
    return math.expm1(math.sqrt(ratios) * math.log1p(margin))


def derived_judging(judging: Judging, ratios: int, metric: str) -> Judging:
    """`claim_judging` for a claim whose effect is a ratio of `ratios` ratios of `metric`."""
    if ratios <= 1:
        return judging
    return replace(
        judging,
        margin=derived_margin(judging.margin, ratios),
        source=f"{judging.source}; widened from {judging.margin:.0%} by the square root of "
        f"{ratios} on the log scale: the claim's effect is a ratio of {ratios} ratios of "
        f"{metric}, each drifting as the A/A ratio does",
    )


def claim_judging(kinds: tuple[KindFloor, ...], metric: str) -> Judging:
    """A claim's margin from the kinds it matches: the widest of their margins on its
    metric; the floor, said, when it matches none or none of them measured its metric.
    Never its study's widest: that is another metric's noise (the request-reply A/A cells
    of pyclients measure no numbers per second, and their context switches once set a 67%
    margin on the 100 000-number streams' rate)."""
    if not kinds:
        return Judging(
            source="the floor: this run has no A/A cells of the claim's own kind of client "
            "or method (its study's A/A configurations differ from it where they differ "
            "from each other)"
        )
    measured = [kind.judging(metric) for kind in kinds if metric in kind.per_metric]
    if not measured:
        return Judging(
            source=f"the floor: the A/A cells of the claim's own kind ("
            f"{'; '.join(kind.configuration for kind in kinds)}) did not measure {metric}"
        )
    return max(measured, key=lambda judging: judging.margin)


def claim_kinds(claim: Claim, kinds: list[KindFloor]) -> tuple[KindFloor, ...]:
    """The kinds of its study whose A/A cells judge a claim: on every coordinate where the
    study's A/A configurations differ, the claim's two sides fix values and the kind's is
    one of them (a side that leaves it open spans every kind). One kind: it."""
    columns = sorted({column for kind in kinds for column in kind.coordinates})
    differing = [
        column for column in columns if len({kind.coordinates.get(column) for kind in kinds}) > 1
    ]
    sides = [side for side in (claim.numerator, claim.denominator) if side is not None]
    fixed: dict[str, set[str]] = {}
    for column in differing:
        values = [fixed_value(side, column) for side in sides]
        if None not in values:
            fixed[column] = {str(value) for value in values}
    return tuple(
        kind
        for kind in kinds
        if all(kind.coordinates.get(column) in values for column, values in fixed.items())
    )


def fixed_value(side: Selector, column: str) -> str | None:
    """The value a claim's side fixes for a cell column; None where it leaves it open."""
    value = getattr(side, column) if column in SELECTOR_COLUMNS else side.params.get(column)
    return None if value is None else normalized(value)


def kind_floor(study: str, rows: pd.DataFrame, metrics: set[str]) -> KindFloor | None:
    """One study's A/A floor over the metrics its ratio claims use; None without a round
    where both copies measured one of them."""
    rows = rows[rows["metric"].isin(metrics) & (rows["status"] != "failed")]
    if rows.empty:
        return None
    values = rows.pivot_table(
        index=["repeat", "metric"], columns=AA_PARAM, values="value", aggfunc="first"
    )
    if not {"a", "b"} <= set(values.columns):
        return None
    both = values.dropna(subset=["a", "b"])
    both = both[(both["a"] > 0) & (both["b"] > 0)]
    if both.empty:
        return None
    drift = {
        str(metric): abs(math.log(hodges_lehmann_ratio(list(part["a"]), list(part["b"]))))
        for metric, part in both.groupby(level="metric")
    }
    per_metric = {
        str(metric): metric_margin(list(zip(part["a"], part["b"], strict=True)))
        for metric, part in both.groupby(level="metric")
    }
    log_ratios = {
        str(metric): tuple(math.log(a / b) for a, b in zip(part["a"], part["b"], strict=True))
        for metric, part in both.groupby(level="metric")
    }
    metric = max(drift, key=lambda m: drift[m])
    return KindFloor(
        study=study,
        client=str(rows["client"].iloc[0]),
        configuration=configuration(rows),
        metrics=tuple(sorted(drift)),
        rounds=len(set(both.index.get_level_values("repeat"))),
        floor=math.expm1(drift[metric]),
        widest_metric=metric,
        per_metric=per_metric,
        coordinates=coordinates(rows),
        log_ratios=log_ratios,
    )


def series_of(kind: KindFloor) -> list[AaSeries]:
    """A kind's A/A log ratios per metric, as a readings file keeps them."""
    return [
        AaSeries(kind.study, dict(kind.coordinates), metric, logs)
        for metric, logs in sorted(kind.log_ratios.items())
    ]


def with_history(
    kind: KindFloor, history: list[HistoryRun], topology: str, start: str
) -> KindFloor:
    """The kind with each metric's margin predicted from the machine's earlier runs that
    measured the same A/A series and this run's own, where there are enough of them."""
    if not history:
        return kind
    per_metric, predicted = dict(kind.per_metric), {}
    for mine in series_of(kind):
        key = mine.key(topology)
        earlier = [
            (series.log_ratios, run.start)
            for run in history
            for series in run.series
            if series.key(run.topology) == key
        ]
        prediction = predict([*earlier, (mine.log_ratios, start)])
        if prediction is not None and mine.metric in per_metric:
            per_metric[mine.metric] = prediction.margin
            predicted[mine.metric] = prediction
    return replace(kind, per_metric=per_metric, history=predicted)


def metric_margin(pairs: list[tuple[float, float]]) -> float:
    """One metric's A/A drift with its uncertainty: the far end of the 90% paired t interval
    of copy a over copy b across rounds, as a factor - 1 (the point drift, with fewer than 3
    rounds: no interval to take the end of)."""
    interval = paired_log_t_interval(pairs, NOISE_COVERAGE) if len(pairs) >= 3 else None
    if interval is None:
        return math.expm1(abs(math.log(hodges_lehmann_ratio(*zip(*pairs, strict=True)))))
    return math.expm1(max(abs(math.log(interval.low)), abs(math.log(interval.high))))


def coordinates(rows: pd.DataFrame) -> dict[str, str]:
    """The A/A configuration's values by column, as text."""
    first = rows.iloc[0]
    return {
        str(column): normalized(first[column])
        for column in rows.columns
        if column not in NOT_CONFIGURATION and column != "study" and rows[column].notna().any()
    }


def configuration(rows: pd.DataFrame) -> str:
    """The A/A configuration as its values: 'grpcio_sync_w10, steady, concurrency=10, ...'."""
    first = rows.iloc[0]
    named = [str(first[c]) for c in ("implementation", "scenario") if str(first[c])]
    params = [
        f"{c}={first[c]}"
        for c in rows.columns
        if c not in NOT_CONFIGURATION
        and c not in ("study", "implementation", "scenario", "client")
        and rows[c].notna().any()
    ]
    return ", ".join(dict.fromkeys(named + params))


def noise_floor(
    run: Run, claims: list[Claim], rounds: Mapping[str, int] | None = None
) -> NoiseFloor:
    """The run's A/A floor per kind of client (each A/A configuration of a study), over the
    metrics each study's ratio claims are judged on (a study with no ratio claim measured on
    its A/A cells gives none), and the kinds each claim is judged by; with `rounds`, from
    each named study's A/A cells up to that round only (what a look had)."""
    frame = run.frame_with_aa
    if AA_PARAM not in frame.columns:
        return NoiseFloor(())
    twins = frame[frame[AA_PARAM].notna()]
    if rounds:
        limit = twins["study"].map(rounds).astype(float).fillna(float("inf"))
        twins = twins[twins["repeat"].astype(float) <= limit]
    metrics: dict[str, set[str]] = {}
    for claim in claims:
        if claim.kind != "error_rate":
            metrics.setdefault(claim.study, set()).add(claim.aa_metric)
    kinds = []
    # Where and when the run ran, as its history was matched (None: no history to match).
    place = run.history_place()
    # An A/A cell's configuration: its id without copy label and round.
    configurations = twins["cell_id"].map(lambda cell_id: configuration_of(copied_id(cell_id)))
    for (study, cell_configuration), rows in twins.groupby(["study", configurations], sort=True):
        rows = rows.dropna(axis="columns", how="all")
        found = kind_floor(str(study), rows, metrics.get(str(study), set()))
        if found is not None:
            if place is not None:
                found = with_history(found, run.drift_history, *place[1:])
            kinds.append(replace(found, cell_configuration=str(cell_configuration)))
    by_claim = {
        claim.id: claim_kinds(claim, [kind for kind in kinds if kind.study == claim.study])
        for claim in claims
        if claim.kind != "error_rate" and any(kind.study == claim.study for kind in kinds)
    }
    metric_of = {claim.id: claim.aa_metric for claim in claims if claim.id in by_claim}
    ratios_of = {
        claim.id: claim.drift_ratios
        for claim in claims
        if claim.id in by_claim and claim.drift_ratios > 1
    }
    return NoiseFloor(tuple(kinds), by_claim, metric_of, ratios_of)


def margins_by_look(
    run: Run, claims: list[Claim], schedule: list[Look], base_rounds: Mapping[str, int]
) -> dict[int, dict[str | tuple[str, str], Judging]]:
    """Each look's margins from the A/A rounds it had (base rounds + its extra ones): a
    look's rounds go to the A/A copies of the claims it chose, and an earlier look, replayed
    for the report, must not be judged with rounds measured after it."""
    return {
        look.index: noise_floor(
            run, claims, {study: n + look.extra_rounds for study, n in base_rounds.items()}
        ).judging_by_study()
        for look in schedule
    }
