"""The simulation suite, short: the engine's intervals keep their labelled coverage through
the real judging code, and lose it when a correction is removed (issue 26, item 4). The
full suite (10 000 trials a case) is `make simulate`, written to data/reference/simulation.json."""

from __future__ import annotations

import pytest

from perflab.analysis.simulation import CASES, simulate
from perflab.contract.cell import iter_cells

TRIALS = 200
BY_NAME = {case.name: case for case in CASES}
# The cases whose correction matters: unequal spreads unpaired (the Moses interval assumes
# a shift only), and failures clustered in cells counted as independent calls.
NEEDS_CORRECTION = ("SD ratio 10, 3 rounds", "error rate 20%, clustered (ICC 0.3)")


@pytest.mark.parametrize(
    "name",
    [
        "SD ratio 10, 3 rounds",
        "SD ratio 10, round effects, 4 configurations",
        "error rate 20%, clustered (ICC 0.3)",
    ],
)
def test_intervals_keep_their_labelled_coverage(name):
    result = simulate(BY_NAME[name], TRIALS)
    assert result.passes(), result.line()
    # A claim on its own limit is decided no more often than the interval's two tails allow.
    allowed = 1 - result.label + 3 * (result.label * (1 - result.label) / result.trials) ** 0.5
    assert result.decided / result.trials <= allowed, result.line()


@pytest.mark.parametrize("name", NEEDS_CORRECTION)
def test_the_suite_fails_when_the_correction_is_removed(name):
    result = simulate(BY_NAME[name], TRIALS, corrections=False)
    assert not result.passes(), result.line()


def test_runs_written_as_cell_folders_judge_as_the_in_memory_rows(tmp_path):
    # The --write path: each trial's cells written as a run folder (cell.json + client.json)
    # and read back through the loader every run goes through. The same draws must give the
    # same intervals and verdicts, so the suite's coverage is that of the real pipeline.
    case = next(c for c in CASES if c.name == "SD ratio 10, 3 rounds")
    rate = next(c for c in CASES if c.kind == "error_rate" and c.icc > 0)
    for each, trials in ((case, 200), (rate, 60)):
        in_memory = simulate(each, trials)
        written = simulate(each, trials, written=tmp_path / "run")
        assert written == in_memory and written.intervals >= trials
        assert written.passes()
    # The folder the last trial left is a run folder the cell reader takes.
    cells = list(iter_cells(tmp_path / "run"))
    assert len(cells) == rate.rounds and {c.record["study"] for c in cells} == {"simulated_errors"}
