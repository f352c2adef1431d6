"""Replaying a run's look at other caps (perflab.analysis.look_budget): the base view, the
accounting of what each cap decides, and the committed replays of the quick references."""

from __future__ import annotations

import json

import pytest

from perflab.analysis.adaptive import plan_look
from perflab.analysis.decisions import HOLDS, INCONCLUSIVE
from perflab.analysis.ledger import Ledger
from perflab.analysis.look_budget import base_view, replay, table
from perflab.analysis.run import read as read_folder
from perflab.analysis.verdicts import Judging
from tests.conftest import REPO
from tests.test_adaptive import CLAIMS, ONE_LOOK, OPEN, SETTLED, run_dir, write_cell

assert run_dir  # the fixture, imported for this module's tests

EXPERIMENT = REPO / "data" / "experiments" / "20261202-look-budget" / "look_budget.json"


def plan_first(run, knobs):
    return plan_look(run, CLAIMS, knobs, 1, Judging())


def with_look(run_dir, knobs) -> Ledger:
    """The run after a look of `knobs`: recorded, and its cells measured."""
    plan = plan_look(read_folder(run_dir), CLAIMS, knobs, 1, Judging())
    for cell in plan.cells:
        impl = cell.cell_id.split("-steady")[0]
        write_cell(run_dir, impl, cell.repeat, 2400 if impl == "grpclib_asyncio" else 2000)
    return Ledger.read(run_dir)


def test_the_base_view_holds_the_base_rounds_and_no_ledger(run_dir, tmp_path):
    ledger = with_look(run_dir, ONE_LOOK)
    view = tmp_path / "view"
    view.mkdir()
    assert base_view(run_dir, view) == ledger
    cells = sorted(p.name for p in (view / "hello").iterdir())
    assert len(cells) == 9 and not any(name.endswith(("-r4", "-r5")) for name in cells)
    assert not (view / "adaptive.json").exists()


def test_each_cap_counts_what_its_look_would_have_decided(run_dir):
    with_look(run_dir, ONE_LOOK)
    before = (run_dir / "adaptive.json").read_text()
    verdicts = {SETTLED.id: HOLDS, OPEN.id: HOLDS}
    result = replay(run_dir, [0.01, 5], {}, plan_first, lambda run: verdicts)
    tiny, recorded = result.replays
    # Too small a cap gives the open claim nothing: it counts undecided.
    assert tiny.chosen == tiny.decided == []
    # The recorded cap chooses as the recorded look did; its claim held with those rounds.
    assert recorded.chosen == result.recorded_chosen == [OPEN.id]
    assert recorded.decided == [OPEN.id] and recorded.unmeasured == []
    assert result.decided_without_look == 1  # SETTLED, decided on the base rounds
    assert result.base_rounds == {"hello": 3}
    assert (run_dir / "adaptive.json").read_text() == before  # the run itself untouched
    assert "| run1 | 0 of 0, 1 | 1 of 1, 2 |" in table([result])
    # Turned around: the claim the look chose stays open, and the cap decides nothing.
    still_open = {SETTLED.id: HOLDS, OPEN.id: INCONCLUSIVE}
    again = replay(run_dir, [5], {}, plan_first, lambda run: still_open)
    assert again.replays[0].decided == []


def test_a_claim_the_recorded_look_never_measured_counts_undecided_and_is_named(run_dir):
    from perflab.contract.adaptive import Adaptive

    with_look(run_dir, Adaptive(**{**ONE_LOOK.__dict__, "max_minutes": 0.01}))
    verdicts = {SETTLED.id: HOLDS, OPEN.id: HOLDS}
    (larger,) = replay(run_dir, [5], {}, plan_first, lambda run: verdicts).replays
    assert larger.chosen == larger.unmeasured == [OPEN.id]
    assert larger.decided == []


def test_a_run_without_a_look_is_refused_by_name(run_dir):
    with pytest.raises(ValueError, match="no adaptive.json"):
        replay(run_dir, [5], {}, plan_first, lambda run: {})


def test_the_committed_replays_hold_what_the_quick_cap_rests_on():
    """data/experiments/20261202-look-budget (perflab look-budget on the committed quick
    runs): on the run taken with today's chooser the recorded cap replays its own look
    exactly, and each cap's counts add up from the claims they list."""
    runs = json.loads(EXPERIMENT.read_text())["runs"]
    reference = next(r for r in runs if r["run_id"] == "20261201T230535Z-quick")
    ledger = Ledger.read(REPO / "data" / reference["run_id"])
    cap = ledger.adaptive.max_minutes
    at_recorded = next(r for r in reference["replays"] if r["minutes"] == cap)
    assert at_recorded["chosen"] == sorted(ledger.taken[0].chosen_claims)
    assert at_recorded["priced_s"] == ledger.taken[0].estimate_s
    for run in runs:
        for one in run["replays"]:
            assert set(one["decided"]) <= set(one["chosen"]) - set(one["unmeasured"])
            assert set(one["chosen"]) - set(one["unmeasured"]) <= set(run["recorded_chosen"])


def test_the_readme_states_the_replayed_means_as_they_come_out():
    import statistics

    runs = json.loads(EXPERIMENT.read_text())["runs"]

    def mean_decided(cap: float) -> float:
        return statistics.fmean(
            run["decided_without_look"]
            + len(next(r for r in run["replays"] if r["minutes"] == cap)["decided"])
            for run in runs
        )

    readme = " ".join((REPO / "README.md").read_text().split())
    said = f"6 minutes decide {mean_decided(6):.1f} claims where 12 decided {mean_decided(12):.1f}"
    assert said in readme
    assert mean_decided(6) < mean_decided(12)  # the larger cap does decide more
