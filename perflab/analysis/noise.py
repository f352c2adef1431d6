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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perflab.analysis.claims import Claim
from perflab.analysis.intervals import hodges_lehmann_ratio, paired_log_t_interval
from perflab.analysis.verdicts import Judging, judging_from_noise_floor
from perflab.contract.cell import AA_PARAM

if TYPE_CHECKING:
    import pandas as pd

    from perflab.analysis.run import Run

# The coverage of the A/A interval whose far end sets a metric's margin.
NOISE_COVERAGE = 0.90
# Columns that say which cell a row is, not which configuration.
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

    def kind(self) -> str:
        return f"{self.client} on {self.study}"


@dataclass(frozen=True)
class NoiseFloor:
    """Every kind's floor; the run's floor is the largest."""

    kinds: tuple[KindFloor, ...]

    @property
    def widest(self) -> KindFloor | None:
        return max(self.kinds, key=lambda kind: kind.floor, default=None)

    def judging_by_study(self) -> dict[str | tuple[str, str], Judging]:
        """Each study's decision margin, from its own kind of client's floor, and under
        (study, metric) each metric's own (a claim on that metric is judged with it,
        perflab.analysis.adaptive.judging_of): never another metric's noise."""
        found: dict[str | tuple[str, str], Judging] = {}
        for kind in self.kinds:
            found[kind.study] = judging_from_noise_floor(
                kind.floor,
                f"its A/A cells ({kind.kind()}, {kind.widest_metric} over {kind.rounds} rounds)",
            )
            for metric, margin in kind.per_metric.items():
                found[(kind.study, metric)] = judging_from_noise_floor(
                    margin,
                    f"its A/A cells ({kind.kind()}, {metric}: the far end of the A/A ratio's "
                    f"90% interval over {kind.rounds} rounds)",
                )
        return found

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
    )


def metric_margin(pairs: list[tuple[float, float]]) -> float:
    """One metric's A/A drift with its uncertainty: the far end of the 90% paired t interval
    of copy a over copy b across rounds, as a factor - 1 (the point drift, with fewer than 3
    rounds: no interval to take the end of)."""
    interval = paired_log_t_interval(pairs, NOISE_COVERAGE) if len(pairs) >= 3 else None
    if interval is None:
        return math.expm1(abs(math.log(hodges_lehmann_ratio(*zip(*pairs, strict=True)))))
    return math.expm1(max(abs(math.log(interval.low)), abs(math.log(interval.high))))


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


def noise_floor(run: Run, claims: list[Claim]) -> NoiseFloor:
    """The run's A/A floor per kind of client, over the metrics each study's ratio claims
    are judged on (a study with no ratio claim measured on its A/A cells gives none)."""
    frame = run.frame_with_aa
    if AA_PARAM not in frame.columns:
        return NoiseFloor(())
    twins = frame[frame[AA_PARAM].notna()]
    metrics: dict[str, set[str]] = {}
    for claim in claims:
        if claim.kind != "error_rate":
            metrics.setdefault(claim.study, set()).add(claim.metric)
    kinds = []
    for study, rows in twins.groupby("study", sort=True):
        rows = rows.dropna(axis="columns", how="all")
        found = kind_floor(str(study), rows, metrics.get(str(study), set()))
        if found is not None:
            kinds.append(found)
    return NoiseFloor(tuple(kinds))
