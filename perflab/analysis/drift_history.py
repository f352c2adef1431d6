"""A decision margin from the machine's A/A history: how far this run's two copies of a
configuration may drift apart, predicted from every earlier run of the same machine.

One run's A/A cells measure a configuration twice in each round; the log ratio of copy a
over copy b, round by round, is noise around that run's drift. Over 3-10 rounds the far end
of that run's own 90% interval (perflab.analysis.noise.metric_margin) is mostly the t
quantile times the rounds' noise, which each claim's own interval already carries: 17
committed runs of the reference VM put their per-run margins at medians of 11-36% while
every pooled drift lay within 0.846-1.071 (data/experiments/20261128-aa-drift-history).

The model (random effects, as a meta-analysis pools studies): run j's mean log ratio y_j
has the within-run variance v_j = s_j^2 / n_j of its n_j rounds, and its true drift
delta_j varies from boot to boot as N(mu, tau^2). The runs of one machine and topology that
measured the same A/A configuration (its timing knobs aside: `TIMING_KNOBS`) and metric
estimate mu and tau (DerSimonian-Laird), this run's own series among them, so a boot that
drifts widens its own margin. The margin is the far end of this run's drift's 90% prediction
interval (Higgins, Thompson and Spiegelhalter 2009):

    |mu| + t(0.95, k - 2) * sqrt(tau^2 + se(mu)^2)

with mu the weighted mean at tau and k the runs. Taking tau at the upper end of its 90%
Q-profile interval instead, the cautious reading of few runs, gave margins no narrower than
each run's own (ten runs of 5 rounds cannot show that boots differ by less than the noise of
one run's mean), so the moment estimate is used and its coverage checked. Fewer than
`MIN_RUNS` runs with 2 or more rounds: no prediction, and the run's own far end stands.
Earlier runs only (by start), so a run's verdicts do not move when later runs are added.
Its coverage of a drift that changes from boot to boot is simulated through the verdict
engine (perflab.analysis.simulation, the "boot drift" cases).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# The machine's readings files (perflab.analysis.sites), whose `aa_series` are the history.
READINGS_HISTORY = Path(__file__).resolve().parents[2] / "data" / "readings"
# Runs (this one included) a prediction needs: with fewer, tau rests on too few runs (and
# t on k - 2 degrees of freedom is too wide) for the prediction to beat the run's own far end.
MIN_RUNS = 5
# The prediction interval's coverage, as the run's own A/A interval's (noise.NOISE_COVERAGE).
PREDICTION_COVERAGE = 0.90
# Knobs that set how long a cell measures or warms up, not which cells are compared: a
# change to them changes each copy's noise (which v_j carries), so runs that differ only
# there measured the same A/A configuration (hello's warm-up went from 1 s to 0.25 s after
# an A/B held the change within 0.94-1.08, data/experiments/20261127-hello-warmup-ab).
TIMING_KNOBS = frozenset({"duration_s", "warmup_s", "warmup_calls_per_worker"})
# Which host facts name a machine (a manifest's `hosts`); perflab.analysis.sites adds the
# boot to make a site.
MACHINE_FACTS = ("cpu_model", "cpus", "kernel")
# A variance below this is a series whose copies measured exactly alike (RSS in pages): it
# keeps a finite weight.
VARIANCE_FLOOR = 1e-10


class HistoryError(ValueError):
    """A readings file the history cannot read; the message names it."""


@dataclass(frozen=True)
class AaSeries:
    """One run's A/A log ratios (copy a over copy b, one per round) on one metric."""

    study: str
    coordinates: dict[str, str]
    metric: str
    log_ratios: tuple[float, ...]

    def key(self, topology: str) -> tuple[str, ...]:
        """Which series measured the same drift: topology, study, metric and the A/A
        configuration's values, its timing knobs aside."""
        values = sorted(
            (column, value)
            for column, value in self.coordinates.items()
            if column not in TIMING_KNOBS
        )
        return (topology, self.study, self.metric, *(f"{c}={v}" for c, v in values))


@dataclass(frozen=True)
class HistoryRun:
    """An earlier run's A/A series, as its readings file holds them."""

    run_id: str
    start: str
    topology: str
    machine: str
    series: tuple[AaSeries, ...]


@dataclass(frozen=True)
class DriftPrediction:
    """A run's drift on one metric predicted from its machine's runs (this one included)."""

    runs: int
    # Pooled drift (log), its standard error, and the drift's SD between boots (log).
    drift: float
    drift_se: float
    tau: float
    earliest: str

    @property
    def far_end(self) -> float:
        """The far end of the 90% prediction interval of this run's drift (log), Student t
        on k - 2 degrees of freedom for the estimated mean and tau."""
        from scipy.stats import t

        quantile = float(t.ppf(0.5 + PREDICTION_COVERAGE / 2, self.runs - 2))
        return abs(self.drift) + quantile * math.sqrt(self.tau**2 + self.drift_se**2)

    @property
    def margin(self) -> float:
        return math.expm1(self.far_end)


def machine_of(hosts: Mapping[str, Mapping[str, object]]) -> str:
    """The machine a run ran on: every host's CPU model, CPU count and kernel release. Not
    the boot, which is what the history spans, nor the kernel's build tag after its release
    number: the reference VM's boots alternate between two builds of 6.18.44 (-fc-v657,
    -fc-v669), and what differs between boots is what tau measures."""

    def fact(facts: Mapping[str, object], key: str) -> str:
        value = str(facts.get(key, "?"))
        return value.split("-", 1)[0] if key == "kernel" else value

    return " ".join(
        f"{name}=" + "/".join(fact(hosts[name] or {}, key) for key in MACHINE_FACTS)
        for name in sorted(hosts)
    )


def read_history(folder: Path, machine: str, topology: str, before: str) -> list[HistoryRun]:
    """The readings files in `folder` of runs on `machine` and `topology` that started
    before `before` (ISO time) and hold A/A series; a file that cannot be read is named."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
            series = tuple(
                AaSeries(s["study"], dict(s["coordinates"]), s["metric"], tuple(s["log_ratios"]))
                for s in data.get("aa_series", ())
            )
            run = HistoryRun(
                str(data["run_id"]),
                str(data["start"]),
                str(data["topology"]),
                machine_of(data.get("hosts") or {}),
                series,
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HistoryError(f"{path}: not a readings file ({exc})") from exc
        same_place = run.machine == machine and run.topology == topology
        if run.series and same_place and run.start and run.start < before:
            found.append(run)
    return found


def predict(
    series: Iterable[tuple[tuple[float, ...], str]], between_boots: bool = True
) -> DriftPrediction | None:
    """The drift prediction from (log ratios, run start) per run; None with fewer than
    MIN_RUNS runs of at least 2 rounds. `between_boots=False` pools the runs as if every
    boot drifted alike (tau = 0): what the simulation suite removes to show it matters."""
    kept = [(logs, start) for logs, start in series if len(logs) >= 2]
    if len(kept) < MIN_RUNS:
        return None
    means = [statistics.fmean(logs) for logs, _ in kept]
    variances = [max(statistics.variance(logs), VARIANCE_FLOOR) / len(logs) for logs, _ in kept]
    tau2 = tau2_dersimonian_laird(means, variances) if between_boots else 0.0
    weights = [1 / (v + tau2) for v in variances]
    drift = sum(w * y for w, y in zip(weights, means, strict=True)) / sum(weights)
    return DriftPrediction(
        runs=len(kept),
        drift=drift,
        drift_se=math.sqrt(1 / sum(weights)),
        tau=math.sqrt(tau2),
        earliest=min(start for _, start in kept),
    )


def tau2_dersimonian_laird(means: list[float], variances: list[float]) -> float:
    """The between-run variance by moments: Cochran's Q past its k - 1 expectation, over
    what the weights make of it; 0 where the runs agree within their noise."""
    weights = [1 / v for v in variances]
    total = sum(weights)
    centre = sum(w * y for w, y in zip(weights, means, strict=True)) / total
    q = sum(w * (y - centre) ** 2 for w, y in zip(weights, means, strict=True))
    return max(0.0, (q - (len(means) - 1)) / (total - sum(w * w for w in weights) / total))
