"""roles/study_run cuts a study's cells into rounds for one runner process each: every
cell in exactly one round, run order kept (the shuffle inside a round is the design), and
each round's first position is the i of the runner's [i/n] progress."""

from __future__ import annotations

from tests.conftest import REPO, load_script

PLUGIN = REPO / "roles" / "study_run" / "filter_plugins" / "rounds.py"


def load_filter():
    module = load_script(PLUGIN, "study_run_rounds")
    return module.FilterModule().filters()["perflab_rounds"]


def cells(*repeats: int) -> list[dict]:
    return [
        {"cell_id": f"c{index}-r{repeat}", "repeat": repeat} for index, repeat in enumerate(repeats)
    ]


def test_cells_are_cut_where_the_repeat_changes_keeping_their_order():
    rounds = load_filter()(cells(1, 1, 1, 2, 2, 3))
    assert [(r["repeat"], r["first"], len(r["cells"])) for r in rounds] == [
        (1, 1, 3),
        (2, 4, 2),
        (3, 6, 1),
    ]
    assert [c["cell_id"] for r in rounds for c in r["cells"]] == [
        c["cell_id"] for c in cells(1, 1, 1, 2, 2, 3)
    ]


def test_a_repeat_seen_again_later_is_a_new_round_not_merged_back():
    # Adaptive looks append rounds after the base ones; order is never regrouped.
    rounds = load_filter()(cells(1, 2, 1))
    assert [(r["repeat"], r["first"]) for r in rounds] == [(1, 1), (2, 2), (1, 3)]


def test_no_cells_no_rounds():
    assert load_filter()([]) == []
