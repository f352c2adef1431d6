"""The adaptive looks judged with their own A/A rounds, simulated short through the real
code (perflab.analysis.simulate_looks; `make simulate` runs it at 10 000 trials a case)."""

from __future__ import annotations

import math

from perflab.analysis.simulate_looks import LOOK_CASES, QUICK, simulate_looks
from perflab.contract.adaptive import read
from tests.conftest import REPO

TRIALS = 150


def test_the_simulated_schedule_is_the_quick_profile_s():
    import yaml

    knobs = yaml.safe_load((REPO / "inventory/group_vars/all/adaptive.yml").read_text())
    assert read(knobs["perflab_adaptive"], knobs["perflab_profiles_adaptive"], "quick") == QUICK


def test_a_claim_on_its_threshold_is_decided_within_the_stated_family_error():
    case = next(c for c in LOOK_CASES if c.truth == 1.0)
    for aa_in_looks in (True, False):
        result = simulate_looks(case, TRIALS, aa_in_looks)
        assert result.keeps_family_error(), result.line()
        assert result.intervals == TRIALS


def test_the_look_s_own_aa_rounds_decide_what_the_base_margin_hides():
    case = next(c for c in LOOK_CASES if c.truth > 1.0)
    own = simulate_looks(case, TRIALS, aa_in_looks=True)
    kept = simulate_looks(case, TRIALS, aa_in_looks=False)
    # Ten A/A rounds set a narrower margin than five...
    assert own.last_margin < kept.last_margin, (own.line(), kept.line())
    # ...so the same draws of the claim hold more often, beyond the Monte Carlo error of the
    # difference (the trials share their seed, so it is an upper bound).
    spread = 3 * math.sqrt(2 * 0.25 / TRIALS)
    assert own.holds_share - kept.holds_share > spread, (own.line(), kept.line())


def test_the_readme_quotes_the_committed_look_simulation():
    import json

    looks = json.loads((REPO / "data/reference/simulation.json").read_text())["looks"]
    by = {(r["case"]["truth"], r["aa_in_looks"]): r for r in looks["results"]}
    own, kept, null = by[(1.25, True)], by[(1.25, False)], by[(1.0, True)]
    readme = " ".join((REPO / "README.md").read_text().split())
    trials = f"{looks['trials']:,}".replace(",", " ")
    assert (
        f"in {own['holds_share']:.1%} of {trials} trials against {kept['holds_share']:.1%} "
        f"with the base margin kept, and a claim on its threshold in {null['decided_share']:.1%}."
    ) in readme
