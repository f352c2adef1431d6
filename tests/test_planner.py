"""`perflab plan` (issue 26): the rounds a run's open claims ask for, priced from the run's
own cell times, and what the full profile's rounds would decide; on a small run folder."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from perflab.analysis.planner import full_looks_from, full_rounds_from, plan, plan_text
from perflab.analysis.simulation import Case, ratio_claim, ratio_rows
from perflab.analysis.verdicts import INCONCLUSIVE, Judging, Verdict, judge

STUDY = "simulated_ratio"
CELL_S, GAP_S = 30.0, 5.0
REPO = Path(__file__).resolve().parent.parent


def write_run(run_dir: Path, cell_ids: list[str]) -> None:
    """One cell.json per cell, each CELL_S long and GAP_S after the one before: what
    perflab.analysis.estimate prices a configuration from."""
    clock = datetime(2026, 11, 25, tzinfo=UTC)
    for cell_id in cell_ids:
        folder = run_dir / STUDY / cell_id
        folder.mkdir(parents=True)
        start, end = clock, clock + timedelta(seconds=CELL_S)
        clock = end + timedelta(seconds=GAP_S)
        implementation = cell_id.split("-")[0]
        record = {
            "cell_id": cell_id,
            "study": STUDY,
            "implementation": implementation,
            # The keys every cell.json has (contract.cell.RECORD_KEYS): the one reader
            # refuses a record without them.
            "scenario": "steady",
            "status": "ok",
            "params": {},
            "start": start.isoformat(timespec="milliseconds"),
            "end": end.isoformat(timespec="milliseconds"),
            # Sized in calls, not seconds: priced from the same configuration in the run.
            "spec": {"cell_id": cell_id, "implementation": implementation, "load": {}},
        }
        (folder / "cell.json").write_text(json.dumps(record))


def judged(claim_id: str, sigma: float, seed: int) -> tuple[Verdict, list[str]]:
    claim = replace(ratio_claim(Case("limit", truth=1.0)), id=claim_id, published=1.5)
    rows = ratio_rows(Case("run", truth=1.5, sigma=sigma), random.Random(seed))
    frame = pd.DataFrame(rows).astype({"concurrency": "Int64"})
    verdict = judge(claim, frame, judging=Judging(margin=0.10, source="test"))
    return verdict, sorted({r["cell_id"] for r in rows})


def test_the_plan_prices_the_open_claims_rounds_and_says_what_full_decides(tmp_path):
    noisy, cells = judged("noisy", sigma=0.3, seed=3)
    quiet, _ = judged("quiet", sigma=0.01, seed=1)
    assert noisy.verdict == INCONCLUSIVE
    write_run(tmp_path, cells)
    (first,) = plan([noisy, quiet], tmp_path, {STUDY: 30})
    (open_claim,) = first.open
    needs, asks = open_claim.power.needs, open_claim.power.asks
    assert open_claim.claim_id == "noisy" and needs is not None and asks is not None
    assert asks == max(needs, open_claim.power.settles or 0) and asks > 4
    # Two configurations (a and b), each asks - 3 more rounds at its cell time plus the gap.
    assert abs(first.minutes - 2 * (asks - 3) * (CELL_S + GAP_S) / 60) < 1e-6
    text = plan_text([first], "sim")
    assert f"at the effect measured with at most {asks} rounds" in text
    assert f"about {first.minutes:.1f} min more measuring" in text
    assert "full profile (30 rounds): decides 2 of 2 claims" in text
    # One round short of what the noisy claim needs, full would not decide it.
    (short,) = plan([noisy, quiet], tmp_path, {STUDY: needs - 1})
    line = short.full_line()
    assert "decides 1 of 2 claims with 80% power both ways at the observed spread" in line
    assert f"; 1 more with {needs} rounds: noisy" in line


def judged_at(claim_id: str, sigma: float, seed: int, margin: float) -> tuple[Verdict, list[str]]:
    verdict, cells = judged(claim_id, sigma, seed)
    return replace(verdict, judging=Judging(margin=margin, source="test")), cells


def test_full_is_judged_at_the_margin_its_aa_rounds_would_set(tmp_path):
    # A 1.5x claim under a 60% margin from few A/A rounds: past 1.6 no seed figure of 1.5
    # is, so no number of rounds decides it at that margin. The full profile runs its A/A
    # copies every round, and the margin they would set over 10 rounds (15%) lets it.
    wide, cells = judged_at("wide", sigma=0.05, seed=1, margin=0.6)
    write_run(tmp_path, cells)
    (kept,) = plan([wide], tmp_path, {STUDY: 10})
    assert "decides 0 of 1 claims" in kept.full_line()
    assert "1 by no design up to 30 rounds at the seed's figure" in kept.full_line()
    narrowing = {10: 0.15, 30: 0.12}

    def margin_at(claim_id: str, rounds: int) -> float | None:
        return narrowing.get(rounds, 0.6) if claim_id == "wide" else None

    (predicted,) = plan([wide], tmp_path, {STUDY: 10}, margin_at)
    assert "decides 1 of 1 claims" in predicted.full_line()
    # A prediction never widens the run's margin: one of 90% counts as the run's 60%.
    (wider,) = plan([wide], tmp_path, {STUDY: 10}, lambda claim_id, rounds: 0.9)
    assert "decides 0 of 1 claims" in wider.full_line()


def test_a_study_whose_claims_are_decided_asks_for_nothing(tmp_path):
    quiet, cells = judged("quiet", sigma=0.01, seed=1)
    write_run(tmp_path, cells)
    (first,) = plan([quiet], tmp_path, {})
    assert first.open == [] and first.minutes == 0
    assert first.lines()[0] == f"{STUDY}: 0 open claim(s)"
    assert "its rounds for this study are not stated" in first.lines()[-1]


def test_the_full_profiles_looks_come_from_the_inventory():
    looks = full_looks_from(REPO / "inventory/group_vars/all")
    assert [(look.extra_rounds, look.coverage) for look in looks] == [
        (0, 0.90),
        (10, 0.98),
        (20, 0.98),
    ]


def test_the_full_profiles_rounds_come_from_the_inventory():
    rounds = full_rounds_from(REPO / "inventory/group_vars/all", ["hello", "watch", "nothing"])
    assert rounds == {"hello": 10, "watch": 10}
