"""Readings measured before a fix to their figure are left out of pooling, and said to be."""

from __future__ import annotations

import dataclasses
import math
import subprocess
from pathlib import Path

import pytest
import yaml

from perflab.analysis.claims import read_claims
from perflab.analysis.fixes import (
    FIXES_FILE,
    FixesError,
    MeasurementFix,
    git_contains,
    holds_fix,
    measured_with_fixes,
    read_fixes,
)
from perflab.analysis.pooled import pool_claims
from perflab.analysis.pooled_page import notes, page
from perflab.analysis.simulate_pooling import CLAIM, synthetic_run
from perflab.analysis.sites import load_readings
from perflab.analysis.verdicts import NOT_MEASURED

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "data" / "reference"
FIX = MeasurementFix("f" * 40, "the clock started late", frozenset({CLAIM.id}))


def run_with(index: int, fixed: bool | None, effect: float = 1.5):
    run = synthetic_run(index, math.log(effect), 0.03)
    states = {} if fixed is None else {FIX.commit: fixed}
    return dataclasses.replace(run, fixes=states)


def test_a_run_measured_without_the_fix_loses_its_readings_of_the_fixs_claims():
    # Two runs with the fix agree; the one without it measured a biased 3x.
    runs = [run_with(0, True), run_with(1, True), run_with(2, False, effect=3.0)]
    kept, left = measured_with_fixes(runs, [FIX])
    assert [len(run.readings) for run in kept] == [1, 1, 0]
    assert kept[2].verdicts[CLAIM.id] == NOT_MEASURED
    assert "measured before fix ffffffff" in kept[2].not_measured[CLAIM.id]
    assert left.without == {FIX.commit: ["sim-2"]} and left.unchecked == {}
    (pooled,) = pool_claims([CLAIM], kept)
    assert pooled.runs == 2
    # The other way: with every run holding the fix, all three are pooled.
    (everything,) = pool_claims(
        [CLAIM], measured_with_fixes(runs[:2] + [run_with(2, True)], [FIX])[0]
    )
    assert everything.runs == 3


def test_a_run_whose_file_does_not_say_is_pooled_and_named():
    kept, left = measured_with_fixes([run_with(0, None), run_with(1, True)], [FIX])
    assert [len(run.readings) for run in kept] == [1, 1]
    assert left.unchecked == {FIX.commit: ["sim-0"]}
    sentence = left.sentence([FIX])
    assert "could not be checked for fix ffffffff" in sentence and "sim-0" in sentence
    assert "left out" not in sentence


def test_the_pooled_page_says_what_was_left_out_only_when_something_was():
    runs = [run_with(0, True), run_with(1, False)]
    kept, left = measured_with_fixes(runs, [FIX])
    said = left.sentence([FIX])
    assert said.startswith("1 run(s) measured before fix ffffffff (the clock started late)")
    assert 'class="left-out"' in page(pool_claims([CLAIM], kept), kept, {}, said)
    clean, none_left = measured_with_fixes([run_with(0, True)], [FIX])
    assert none_left.sentence([FIX]) == ""
    assert 'class="left-out"' not in page(pool_claims([CLAIM], clean), clean, {}, "")


def test_a_claims_notes_name_the_fix_once_and_leave_what_it_fixed_to_the_page():
    runs = [run_with(0, True), run_with(1, True)] + [run_with(i, False) for i in (2, 3, 4)]
    kept, left = measured_with_fixes(runs, [FIX])
    (pooled,) = pool_claims([CLAIM], kept)
    said = left.sentence([FIX])
    shown = notes(pooled, said)
    assert shown.count("measured before fix ffffffff") == 1
    assert "3 runs give nothing: measured before fix ffffffff (see the note above" in shown
    assert FIX.what not in shown and FIX.what in said
    # Without the page's note, the cell says what the fix was, still once.
    alone = notes(pooled)
    assert alone.count(f"measured before fix ffffffff: {FIX.what}") == 1


def test_a_run_resumed_across_commits_holds_a_fix_only_if_every_part_does():
    held = {"new": True, "old": False}

    def contains(fix: str, commit: str) -> bool | None:
        return held.get(commit)

    assert holds_fix("new-dirty", FIX.commit, contains) is True
    assert holds_fix("new + old", FIX.commit, contains) is False
    assert holds_fix("new + elsewhere", FIX.commit, contains) is None
    assert holds_fix("", FIX.commit, contains) is None


def test_the_fixes_file_names_only_claims_the_claims_file_has(tmp_path):
    ids = [claim.id for claim in read_claims(REFERENCE / "claims.yml")]
    (fix,) = read_fixes(REFERENCE, ids)
    assert "orders-bidi-2x-slower-than-unary" in fix.claims
    assert not any(claim.endswith("-sequential") for claim in fix.claims)
    entry = {"commit": fix.commit, "what": "x", "claims": ["no-such-claim"]}
    (tmp_path / FIXES_FILE).write_text(yaml.safe_dump([entry]))
    with pytest.raises(FixesError, match="no-such-claim"):
        read_fixes(tmp_path, ids)
    (tmp_path / FIXES_FILE).write_text(yaml.safe_dump([{**entry, "commit": "1713c63f"}]))
    with pytest.raises(FixesError, match="full commit"):
        read_fixes(tmp_path, ids)
    assert read_fixes(tmp_path / "none", ids) == []


def test_every_committed_readings_file_says_whether_it_holds_every_fix():
    ids = [claim.id for claim in read_claims(REFERENCE / "claims.yml")]
    fixes = read_fixes(REFERENCE, ids)
    unsaid = {
        path.name: [fix.short() for fix in fixes if fix.commit not in readings.fixes]
        for path in sorted((REPO / "data" / "readings").glob("*.json"))
        for readings in [load_readings(path)]
    }
    assert {name: said for name, said in unsaid.items() if said} == {}


@pytest.mark.live  # starts git
def test_git_says_which_commits_hold_the_orders_clock_fix():
    fix = "1713c63f8946497ceb72405608a738d55e6523d0"
    contains = git_contains(REPO)
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert contains(fix, head) is True
    assert contains(fix, f"{fix}~1") is False
    assert contains(fix, "0" * 40) is None


def test_perflab_readings_refuses_a_malformed_fixes_file_before_judging(tmp_path, capsys):
    from perflab.cli import main

    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "claims.yml").write_text((REFERENCE / "claims.yml").read_text())
    (reference / FIXES_FILE).write_text(yaml.safe_dump([{"commit": "1713c63f", "claims": ["x"]}]))
    out = tmp_path / "readings"
    argv = ["readings", "--run", "data/no-such-run", "--reference", str(reference)]
    assert main([*argv, "--out", str(out)]) == 2
    assert "needs a full commit" in capsys.readouterr().err
    assert not out.exists()
