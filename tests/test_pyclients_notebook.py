"""pyclients study: the notebook renders headless on a small real run, findings included."""

from __future__ import annotations

import pytest

from perflab.analysis.frames import read_run
from perflab.analysis.report import render
from perflab.studies.pyclients import analysis as pyclients
from tests.conftest import REPO, overclaimed_intervals

FIXTURE = REPO / "tests" / "data" / "runs" / "pyclients_fixture"


def test_fixture_run_is_complete_and_loads():
    frame = read_run(FIXTURE)
    assert set(frame["study"]) == {"pyclients"}
    assert "failed" not in set(frame["metric"])
    assert {"time_per_call", "client_max_rss", "numbers_per_s"} <= set(frame["metric"])
    assert (FIXTURE / "manifest.json").is_file()


@pytest.mark.live
@pytest.mark.slow
def test_notebook_executes_on_the_fixture_run(tmp_path):
    params = {
        "run_dir": str(FIXTURE),
        "reference_dir": str(REPO / "data" / "reference"),
        "out_dir": str(tmp_path),
    }
    html = render(REPO / "notebooks" / "pyclients.ipynb", tmp_path, params, "pyclients")
    page = html.read_text()
    # The findings in the page are the ones the package generates from the same data.
    findings = pyclients.findings(pyclients.summarize(read_run(FIXTURE)))
    first = findings.split("\n")[0].removeprefix("- ")
    assert "is fastest" in first and first.split(" (")[0] in page
    assert overclaimed_intervals(page) == []
    # The fixture predates the seed stack: the page says so rather than attributing anything.
    assert "No claim was measured on both library stacks" in page
    assert "Traceback" not in page
    assert (tmp_path / "figures" / "pyclients_published_time_per_call.png").is_file()
