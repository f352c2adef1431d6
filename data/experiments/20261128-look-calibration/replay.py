"""How often does a claim the adaptive look expects to settle get settled?

For every committed run with a look, this replays the look's plan from the base rounds alone.
It uses the verdicts and margins of the base rounds (perflab.analysis.noise with the ledger's
base rounds) and the planner's own test (perflab.analysis.adaptive.settling: 80% chance of a
decision over the look's rounds, were the effect and spread the base rounds measured the
truth). For each claim the look gave rounds to, it records whether the planner expected it
to settle and whether the run's final verdict (data/readings/<run>.json) decided it. The
test is asked twice: at the deciding coverage it uses (90%), and at the look's own 96%.
Writes claims.json beside this file:

    .venv/bin/python data/experiments/20261128-look-calibration/replay.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from perflab.analysis.adaptive import judge_looks, settling  # noqa: E402
from perflab.analysis.decisions import DECIDING_COVERAGE  # noqa: E402
from perflab.analysis.noise import noise_floor  # noqa: E402
from perflab.analysis.replication import reference_claims  # noqa: E402
from perflab.analysis.run import read  # noqa: E402
from perflab.analysis.verdicts import Judging  # noqa: E402
from perflab.cli import claim_frame_hooks  # noqa: E402
from perflab.contract.adaptive import Look  # noqa: E402

# Every committed run whose ledger records a look with claims chosen.
RUNS = [
    "20261125-quick",
    "20261125-reference",
    "20261126-reference",
    "20261126T170452Z-quick",
    "20261127T012251Z-quick",
    "20261127T044109Z-quick",
    "20261127T082212Z-quick",
    "20261127T111956Z-quick",
    "20261127T210549Z-quick",
    "20261128T010419Z-quick",
    "20261126-netns",
    "20261127-netns",
    "20261128-netns",
]
DECIDED = ("holds", "does not hold")


def replay(run_id: str) -> list[dict]:
    run = read(REPO / "data" / run_id, claim_frame_hooks())
    ledger = run.ledger
    claims = reference_claims(REPO / "data" / "reference", run.seed_rows_hooks)
    floor = noise_floor(run, claims, ledger.base_rounds)
    base = judge_looks(
        run.judged_frame(claims),
        claims,
        [Look(0, 0, ledger.base_coverage)],
        ledger.base_rounds,
        run.topology,
        Judging(),
        floor.judging_by_study(),
    )
    by_id = {verdict.claim.id: verdict for verdict in base}
    look = ledger.taken[0]
    rounds = {study: n + look.extra_rounds for study, n in ledger.base_rounds.items()}
    final = json.loads((REPO / "data" / "readings" / f"{run_id}.json").read_text())["verdicts"]
    expected = {}
    for coverage in (DECIDING_COVERAGE, look.coverage):
        settles = settling(rounds, floor.margin_at, coverage)
        expected[coverage] = {claim: settles(by_id[claim]) for claim in look.chosen_claims}
    return [
        {
            "run": run_id,
            "claim": claim,
            "base_verdict": by_id[claim].verdict,
            "expected_at_90": expected[DECIDING_COVERAGE][claim],
            "expected_at_look": expected[look.coverage][claim],
            "look_coverage": look.coverage,
            "final_verdict": final[claim],
            "decided": final[claim] in DECIDED,
        }
        for claim in look.chosen_claims
    ]


def main() -> None:
    found = []
    for run_id in RUNS:
        found += replay(run_id)
        print(f"{run_id}: {sum(c['run'] == run_id for c in found)} claims", file=sys.stderr)
    (HERE / "claims.json").write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()
