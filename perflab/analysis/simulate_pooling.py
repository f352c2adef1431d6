"""The pooling's coverage by simulation, through the real code (`make simulate-pooling`).

Sites are drawn with a known between-site spread tau around a common log effect mu, each
site's run with its own (unequal) within-run standard error, written as the readings a run
gives (an effect and a 95% interval), and pooled by perflab.analysis.pooled.pool_claim, the
function the report calls. Counted: how often tau's Q-profile interval, mu's interval and the
prediction interval for one more site cover the truth, each with its Monte Carlo error.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass

from perflab.analysis.claims import DIRECTION, Bound, Claim, Selector
from perflab.analysis.pooled import pool_claim
from perflab.analysis.sites import Reading, RunReadings

CLAIM = Claim(
    id="simulated",
    seed="000",
    study="simulated",
    says="a simulated ratio",
    source="simulation",
    metric="rps",
    numerator=Selector(implementation="a"),
    denominator=Selector(implementation="b"),
    bound=Bound(DIRECTION, "greater", 1.0),
)
Z95 = 1.959963984540054


def synthetic_run(index: int, log_effect: float, se: float) -> RunReadings:
    """A run on its own machine whose one reading is `log_effect` with a 95% interval of
    standard error `se` on the log scale."""
    reading = Reading(
        CLAIM.id,
        {},
        math.exp(log_effect),
        math.exp(log_effect - Z95 * se),
        math.exp(log_effect + Z95 * se),
        0.95,
        "simulated normal interval",
        (5, 5),
        "inconclusive",
    )
    host = {"cpu_model": f"cpu {index}", "cpus": 2, "kernel": "k", "boot_id": f"boot-{index}"}
    return RunReadings(
        run_id=f"sim-{index}",
        commit="0" * 40,
        start=f"2026-01-{index % 28 + 1:02d}T00:00:00",
        topology="localhost",
        profile="quick",
        hosts={"localhost": host},
        readings=(reading,),
        verdicts={CLAIM.id: "inconclusive"},
    )


@dataclass(frozen=True)
class Coverage:
    sites: int
    tau: float
    reps: int
    tau_covered: int
    mu_covered: int
    new_site_covered: int

    @staticmethod
    def error(hits: int, reps: int) -> float:
        p = hits / reps
        return math.sqrt(p * (1 - p) / reps)

    def line(self) -> str:
        def rate(hits: int) -> str:
            return f"{hits / self.reps:.3f} ± {self.error(hits, self.reps):.3f}"

        return (
            f"k={self.sites:2d} tau={self.tau:.2f}: tau in its 95% Q-profile "
            f"{rate(self.tau_covered)}"
            f"; mu in its 95% interval {rate(self.mu_covered)}; a new site in the 95% prediction "
            f"interval {rate(self.new_site_covered)} (± one Monte Carlo standard error, "
            f"{self.reps} runs)"
        )


def simulate(sites: int, tau: float, reps: int, seed: int = 29, mu: float = 0.1) -> Coverage:
    rng = random.Random(seed)
    tau_hits = mu_hits = new_hits = 0
    for _ in range(reps):
        runs = []
        for index in range(sites):
            se = rng.uniform(0.02, 0.08)  # unequal within-run noise, as real runs have
            truth = rng.gauss(mu, tau)
            runs.append(synthetic_run(index, rng.gauss(truth, se), se))
        config = pool_claim(CLAIM, runs).configurations[0]
        pooled = config.pooled
        tau_hits += pooled.tau_low - 1e-9 <= tau <= pooled.tau_high + 1e-9
        mu_hits += pooled.low <= mu <= pooled.high
        if pooled.prediction is not None:
            new_site = rng.gauss(mu, tau)
            new_hits += pooled.prediction[0] <= new_site <= pooled.prediction[1]
    return Coverage(sites, tau, reps, tau_hits, mu_hits, new_hits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args(argv)
    for sites in (3, 5, 10):
        for tau in (0.0, 0.05, 0.15):
            print(simulate(sites, tau, args.reps).line(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
