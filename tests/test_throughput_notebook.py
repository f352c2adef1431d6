"""throughput study: the notebook renders headless on a small real run (smoke profile)."""

from __future__ import annotations

import pytest

from perflab.analysis.frames import read_run
from perflab.analysis.report import render
from perflab.studies.throughput import analysis as throughput
from tests.conftest import REPO

# papermill starts a kernel.
pytestmark = pytest.mark.live

FIXTURE = REPO / "tests" / "data" / "runs" / "throughput_fixture"


@pytest.mark.slow
def test_notebook_executes_on_the_fixture_run(tmp_path):
    params = {
        "run_dir": str(FIXTURE),
        "reference_dir": str(REPO / "data" / "reference"),
        "out_dir": str(tmp_path),
    }
    html = render(REPO / "notebooks" / "throughput.ipynb", tmp_path, params, "throughput")
    page = html.read_text()
    assert "Traceback" not in page
    # The closing note in the page is the one the package generates from the same data.
    note = throughput.closing_note(throughput.summarize(read_run(FIXTURE)))
    assert note.split(" GiB/s")[0] in page
    for heading in (
        "The floor",
        "Published vs measured",
        "Fraction of the floor",
        "CPU and memory",
    ):
        assert heading in page
    assert "server peak RSS (MiB)" in page
    assert (tmp_path / "figures" / "throughput_bars_16777216.png").is_file()
