"""The adaptive looks judged with their own A/A rounds, simulated short through the real
code (perflab.analysis.simulate_looks; `make simulate` runs it at 10 000 trials a case)."""

from __future__ import annotations

import math

import pytest

from perflab.analysis.simulate_looks import LOOK_CASES, QUICK, LookCase, simulate_looks
from perflab.contract.adaptive import read
from tests.conftest import REPO

TRIALS = 150


def test_the_simulated_schedule_is_the_quick_profile_s():
    import yaml

    knobs = yaml.safe_load((REPO / "inventory/group_vars/all/adaptive.yml").read_text())
    assert read(knobs["perflab_adaptive"], knobs["perflab_profiles_adaptive"], "quick") == QUICK


def case_of(truth_above_threshold: bool, claim_in_look: bool) -> LookCase:
    return next(
        c
        for c in LOOK_CASES
        if (c.truth > 1.0) == truth_above_threshold
        and c.claim_in_look == claim_in_look
        and c.held_truth is None
    )


def test_a_configuration_that_held_leaves_the_claim_within_the_stated_family_error():
    """A claim whose other configuration held over the base rounds (and keeps that verdict
    at the look) rests on the open one: on its threshold, decided within the family error."""
    case = next(c for c in LOOK_CASES if c.held_truth is not None)
    assert case.truth == 1.0 and case.held_truth >= 2.0
    result = simulate_looks(case, TRIALS, aa_in_looks=True)
    assert result.keeps_family_error(), result.line()


@pytest.mark.parametrize("claim_in_look", [True, False], ids=["new cells", "same cells"])
def test_a_claim_on_its_threshold_is_decided_within_the_stated_family_error(claim_in_look):
    case = case_of(False, claim_in_look)
    for aa_in_looks in (True, False):
        result = simulate_looks(case, TRIALS, aa_in_looks)
        assert result.keeps_family_error(), result.line()
        assert result.intervals == TRIALS


@pytest.mark.parametrize("claim_in_look", [True, False], ids=["new cells", "same cells"])
def test_the_look_s_own_aa_rounds_decide_what_the_base_margin_hides(claim_in_look):
    # Same cells: the look gives the claim no rounds, only its A/A copies, and judges its
    # base cells again at 96% under the narrower margin (adaptive.keeps_later).
    case = case_of(True, claim_in_look)
    own = simulate_looks(case, TRIALS, aa_in_looks=True)
    kept = simulate_looks(case, TRIALS, aa_in_looks=False)
    # Ten A/A rounds set a narrower margin than five...
    assert own.last_margin < kept.last_margin, (own.line(), kept.line())
    # ...so the same draws of the claim hold more often, beyond the Monte Carlo error of the
    # difference (the trials share their seed, so it is an upper bound).
    spread = 3 * math.sqrt(2 * 0.25 / TRIALS)
    assert own.holds_share - kept.holds_share > spread, (own.line(), kept.line())


def committed_looks(claim_in_look: bool) -> tuple[dict, dict, dict, str]:
    """The committed 1.25x records (look's A/A rounds, base margin kept), the on-threshold
    one, and their trial count as the README writes it, of the new-cells or same-cells
    cases."""
    import json

    looks = json.loads((REPO / "data/reference/simulation.json").read_text())["looks"]
    by = {
        (r["case"]["truth"], r["aa_in_looks"]): r
        for r in looks["results"]
        if r["case"].get("claim_in_look", True) == claim_in_look
        and r["case"].get("held_truth") is None
    }
    own = by[(1.25, True)]
    trials = f"{own.get('trials', looks['trials']):,}".replace(",", " ")
    return own, by[(1.25, False)], by[(1.0, True)], trials


def test_the_readme_quotes_the_committed_look_simulation():
    own, kept, null, trials = committed_looks(claim_in_look=True)
    readme = " ".join((REPO / "README.md").read_text().split())
    assert (
        f"in {own['holds_share']:.1%} of {trials} trials against {kept['holds_share']:.1%} "
        f"with the base margin kept, and a claim on its threshold in {null['decided_share']:.1%}."
    ) in readme


def test_rerunning_some_cases_keeps_the_others_records_with_their_trials():
    from perflab.analysis.simulate_looks import records

    first, second = (simulate_looks(case, 3) for case in LOOK_CASES[:2])
    earlier = records([first, second])
    earlier = {"trials": 10_000, "results": [dict(r) for r in earlier["results"]]}
    for record in earlier["results"]:
        del record["trials"]  # written before each record carried its count
    rerun = simulate_looks(LOOK_CASES[1], 5)
    merged = records([rerun], earlier)
    by_name = {r["case"]["name"]: r for r in merged["results"]}
    assert [r["case"]["name"] for r in merged["results"]] == [c.name for c in LOOK_CASES[:2]]
    assert by_name[LOOK_CASES[0].name]["trials"] == 10_000
    assert by_name[LOOK_CASES[1].name]["trials"] == 5
    assert merged["trials"] == 5


def test_the_readme_quotes_the_committed_same_cells_simulation():
    own, kept, null, trials = committed_looks(claim_in_look=False)
    readme = " ".join((REPO / "README.md").read_text().split())
    assert (
        f"is decided on its threshold in {null['decided_share']:.1%} and holds at a true 1.25x "
        f"in {own['holds_share']:.1%} against {kept['holds_share']:.1%} with the base margin "
        f"kept ({trials} trials)"
    ) in readme
