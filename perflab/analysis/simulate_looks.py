"""The adaptive looks with their own A/A rounds, checked by simulation through the real code.

A look gives its rounds to the claims it chose and to the A/A copies that judge them, and
each look is judged with the margin its own A/A rounds set (perflab.analysis.noise
.margins_by_look). Each trial here builds a run's rows from a known truth: a claim's two
sides over the base rounds and the look's, and an A/A pair (two copies of one
configuration) over the same rounds; then it judges the claim with
perflab.analysis.adaptive.judge_looks and the margins of perflab.analysis.noise, as the
report does. Two things are checked:

- at the claim's threshold (truth 1.0), a claim is decided at some look no more often than
  the family error the index states (the base look's error plus each later look's);
- above it, the A/A rounds a look adds narrow the look's margin, so a claim whose effect
  the base rounds' margin hides is decided more often than it is with the base margin kept
  for every look (what the looks did before they repeated the A/A copies, issue 26);
- a claim with a second configuration that held over the base rounds (and keeps that
  verdict at the look, perflab.analysis.adaptive.with_held_configurations) is decided, with
  its other configuration on the threshold, no more often than the family error either.

Each case runs twice over: the claim given the look's rounds, and the claim left on its
base cells while the look gives rounds to a sibling claim and to the A/A copies they share.
The second is judged again on the same cells at the look's stricter coverage and narrower
margin (perflab.analysis.adaptive.keeps_later): there the family error rests on the 96%
interval lying inside the 90% one, an argument these cases check.

The schedule is the quick profile's (one look, 5 rounds more, 96% intervals).
`make simulate` runs these cases beside perflab.analysis.simulation's and writes both to
data/reference/simulation.json.
"""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import asdict, dataclass

from perflab.analysis.claims import Claim
from perflab.analysis.decisions import DECIDING_COVERAGE, FAILS, HOLDS
from perflab.analysis.verdicts import Judging
from perflab.contract.adaptive import Adaptive, looks
from perflab.contract.cell import AA_PARAM

STUDY = "simulated_looks"
# The quick profile's knobs (inventory/group_vars/all/adaptive.yml; a test keeps them equal).
# The minutes choose which claims a look pays for, never how one is judged: each case says
# whether its claim gets rounds (claim_in_look), so records written at quick's earlier 12
# minutes still hold.
QUICK = Adaptive(
    max_looks=1, first_look_rounds=5, rounds_per_look=5, look_coverage=0.96, max_minutes=6
)
BASE_ROUNDS = 5


@dataclass(frozen=True)
class LookCase:
    """A claim's true ratio and spread, and its A/A pair's spread (log scale, per cell)."""

    name: str
    truth: float
    sigma: float = 0.05
    aa_sigma: float = 0.10
    base_rounds: int = BASE_ROUNDS
    adaptive: Adaptive = QUICK
    # False: the look gives the claim's cells no rounds, only the A/A copies (a sibling
    # claim of its study was chosen), so the look judges the same cells again.
    claim_in_look: bool = True
    # A second configuration of the claim (concurrency 2) at this truth; None: one only.
    # One that held over the base rounds keeps that verdict at the look
    # (perflab.analysis.adaptive.with_held_configurations).
    held_truth: float | None = None


@dataclass(frozen=True)
class LookResult:
    case: LookCase
    # False: every look judged with the base rounds' A/A margin (no A/A rounds in looks).
    aa_in_looks: bool
    trials: int
    holds: int
    decided: int
    # Settled intervals covering the truth (over trials with an interval).
    covered: int
    intervals: int
    # The mean margin the last look judged with.
    last_margin: float
    family_error: float

    @property
    def decided_share(self) -> float:
        return self.decided / self.trials

    @property
    def holds_share(self) -> float:
        return self.holds / self.trials

    @property
    def error(self) -> float:
        """The Monte Carlo standard error of a share near the family error."""
        p = self.family_error
        return math.sqrt(p * (1 - p) / self.trials)

    def keeps_family_error(self) -> bool:
        """At the threshold: decided no more often than the index says (3 MC errors)."""
        return self.decided_share <= self.family_error + 3 * self.error

    def line(self) -> str:
        how = "A/A rounds in the look" if self.aa_in_looks else "the base A/A margin at every look"
        return (
            f"{self.case.name} ({how}): decided {self.decided_share:.1%}, holds "
            f"{self.holds_share:.1%} of {self.trials}; the last look's margin "
            f"{self.last_margin:.1%} on average; family error stated {self.family_error:.0%}"
        )


@dataclass(frozen=True)
class SimulatedRun:
    """What perflab.analysis.noise.noise_floor reads of a run: its rows, A/A cells included,
    and no A/A history of its machine."""

    frame_with_aa: object

    def history_place(self) -> None:
        return None


def looks_claim() -> Claim:
    from perflab.analysis.simulation import greater_claim

    return greater_claim("simulated-look", STUDY, 1.0)


def look_row(
    impl: str, repeat: int, value: float, copy: str | None = None, concurrency: int = 10
) -> dict:
    prefix = f"aa-{copy}-" if copy else ""
    return {
        "study": STUDY,
        "scenario": "steady",
        "implementation": impl,
        "client": "ghz",
        "concurrency": concurrency,
        "repeat": repeat,
        "cell_id": f"{prefix}{impl}-c{concurrency}-r{repeat}",
        "status": "ok",
        "metric": "rps",
        "value": value,
        AA_PARAM: copy,
    }


def trial_rows(case: LookCase, rng: random.Random) -> tuple[list[dict], list[dict]]:
    """The claim's rows and the A/A pair's, over the base rounds and every look's."""
    rounds = case.base_rounds + case.adaptive.rounds_before(case.adaptive.max_looks)
    claim_rows, aa_rows = [], []
    for repeat in range(1, rounds + 1):
        # Drawn every round either way, so both modes of a case see the same base draws.
        a = 1000 * case.truth * math.exp(rng.gauss(0, case.sigma))
        b = 1000 * math.exp(rng.gauss(0, case.sigma))
        if case.claim_in_look or repeat <= case.base_rounds:
            claim_rows += [look_row("a", repeat, a), look_row("b", repeat, b)]
        if case.held_truth is not None:
            # Its look rounds are used only where it was still open after the base rounds,
            # as the look's plan gives them only then (adaptive.open_configurations).
            a2 = 1000 * case.held_truth * math.exp(rng.gauss(0, case.sigma))
            b2 = 1000 * math.exp(rng.gauss(0, case.sigma))
            claim_rows += [look_row("a", repeat, a2, None, 2), look_row("b", repeat, b2, None, 2)]
        for copy in ("a", "b"):
            aa_rows.append(
                look_row("b", repeat, 1000 * math.exp(rng.gauss(0, case.aa_sigma)), copy)
            )
    return claim_rows, aa_rows


def simulate_looks(
    case: LookCase, trials: int, aa_in_looks: bool = True, seed: int = 26
) -> LookResult:
    import pandas as pd

    from perflab.analysis.adaptive import judge_looks
    from perflab.analysis.noise import margins_by_look

    rng = random.Random(f"{seed}-{case.name}")
    claim = looks_claim()
    schedule = looks(case.adaptive, DECIDING_COVERAGE)
    base = {STUDY: case.base_rounds}
    holds = decided = covered = intervals = 0
    margins = 0.0
    for _ in range(trials):
        claim_rows, aa_rows = trial_rows(case, rng)
        frame = pd.DataFrame(claim_rows).astype({"concurrency": "Int64"})
        with_aa = pd.DataFrame(claim_rows + aa_rows).astype({"concurrency": "Int64"})
        by_look = margins_by_look(SimulatedRun(with_aa), [claim], schedule, base)  # type: ignore[arg-type]
        if not aa_in_looks:
            by_look = {look.index: by_look[0] for look in schedule}
        (verdict,) = judge_looks(frame, [claim], schedule, base, judging=Judging(), by_look=by_look)
        holds += verdict.verdict == HOLDS
        decided += verdict.verdict in (HOLDS, FAILS)
        last: Judging = by_look[schedule[-1].index].get(claim.id, Judging())
        margins += last.margin
        for pair in verdict.pairs:
            if pair.interval is not None:
                intervals += 1
                covered += pair.interval.low <= case.truth <= pair.interval.high
    return LookResult(
        case,
        aa_in_looks,
        trials,
        holds,
        decided,
        covered,
        intervals,
        margins / trials,
        case.adaptive.family_error(DECIDING_COVERAGE),
    )


LOOK_CASES = (
    # On the threshold, the claim's own noise ten times its A/A pair's: the margins (10% at
    # the least) do not protect, the looks' coverages must.
    LookCase(
        "quick's look, on the threshold, noise 10x the A/A's", truth=1.0, sigma=0.5, aa_sigma=0.05
    ),
    # The A/A spread of a hello steady cell on the quick reference (a 20% margin over 5
    # rounds), the claim's own spread half of it: an effect the base margin hides.
    LookCase("quick's look, 1.25x with a 20% base margin", truth=1.25),
    # The look's rounds given to a sibling claim and the A/A copies only: the claim's base
    # cells judged again at 96% under the look's margin.
    # On the threshold with an A/A spread whose margin the look narrows (about 20% to 12%),
    # so the look may decide the same cells the base look left open.
    LookCase(
        "quick's look, same cells, on the threshold, noise 5x the A/A's",
        truth=1.0,
        sigma=0.5,
        claim_in_look=False,
    ),
    LookCase(
        "quick's look, same cells, 1.25x with a 20% base margin", truth=1.25, claim_in_look=False
    ),
    # Two configurations, one far past the threshold (it holds over the base rounds and
    # keeps that verdict), one on it: the claim's error rests on the open one alone.
    LookCase(
        "quick's look, on the threshold beside a configuration that held",
        truth=1.0,
        sigma=0.5,
        aa_sigma=0.05,
        held_truth=5.0,
    ),
)


# A trial judges two looks through pandas (30-35 ms on the project's machine): 10 000
# trials a case and mode (issue 26's count) take about 25 minutes of `make simulate`, a
# Monte Carlo error under 0.5 points.
FULL_LOOK_TRIALS = 10_000


def run_looks(trials: int = FULL_LOOK_TRIALS, only: str = "") -> list[LookResult]:
    """Every case (or those whose name contains `only`), each in both modes."""
    results = []
    for case in (c for c in LOOK_CASES if only in c.name):
        for aa_in_looks in (True, False):
            results.append(simulate_looks(case, trials, aa_in_looks))
            print(results[-1].line(), flush=True)
    return results


def record_key(record: dict) -> tuple[str, bool]:
    return record["case"]["name"], record["aa_in_looks"]


def records(results: list[LookResult], earlier: dict | None = None) -> dict:
    """The results as simulation.json's `looks` entry, laid over the `earlier` entry's
    records of the cases not run again (each record keeps its own trial count)."""
    fresh = [
        {
            "case": {
                "name": r.case.name,
                "truth": r.case.truth,
                "sigma": r.case.sigma,
                "aa_sigma": r.case.aa_sigma,
                "base_rounds": r.case.base_rounds,
                "claim_in_look": r.case.claim_in_look,
                "held_truth": r.case.held_truth,
                "adaptive": asdict(r.case.adaptive),
            },
            "aa_in_looks": r.aa_in_looks,
            "trials": r.trials,
            "decided_share": r.decided_share,
            # Monte Carlo standard errors of the shares, as the index prints them.
            "decided_error": math.sqrt(r.decided_share * (1 - r.decided_share) / r.trials),
            "holds_share": r.holds_share,
            "holds_error": math.sqrt(r.holds_share * (1 - r.holds_share) / r.trials),
            "coverage": r.covered / r.intervals if r.intervals else None,
            "last_margin": r.last_margin,
            "family_error": r.family_error,
            "keeps_family_error": r.keeps_family_error(),
        }
        for r in results
    ]
    earlier = earlier or {}
    rerun = {record_key(record) for record in fresh}
    # Records written before each carried its own count ran the entry's count.
    kept = [
        {"trials": earlier.get("trials", 0), **r}
        for r in earlier.get("results", [])
        if record_key(r) not in rerun
    ]
    order = {(case.name, aa): i for i, case in enumerate(LOOK_CASES) for aa in (True, False)}
    merged = sorted(kept + fresh, key=lambda r: order.get(record_key(r), len(order)))
    return {"trials": min((r["trials"] for r in merged), default=0), "results": merged}


def main(argv: list[str]) -> None:
    """[trials [name]]: the look cases (those whose name contains `name`), written into the
    `looks` entry of data/reference/simulation.json over their earlier records (make
    simulate runs perflab.analysis.simulation first, then every case)."""
    from perflab.analysis.simulation import RESULTS_FILE

    trials = int(argv[0]) if argv else FULL_LOOK_TRIALS
    only = argv[1] if len(argv) > 1 else ""
    document = json.loads(RESULTS_FILE.read_text()) if RESULTS_FILE.is_file() else {}
    earlier = document.get("looks") if only else None
    document["looks"] = records(run_looks(trials, only), earlier)
    RESULTS_FILE.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
