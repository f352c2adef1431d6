"""watch study: the notebook renders headless on a small real run."""

from __future__ import annotations

import pytest

from perflab.analysis.frames import read_run
from perflab.analysis.report import render
from perflab.analysis.run import read as read_folder
from perflab.studies.watch import analysis as watch
from tests.conftest import REPO, overclaimed_intervals

# papermill starts a kernel.
pytestmark = pytest.mark.live

FIXTURE = REPO / "tests" / "data" / "runs" / "watch_fixture"


@pytest.mark.slow
def test_notebook_executes_on_the_fixture_run(tmp_path):
    params = {
        "run_dir": str(FIXTURE),
        "reference_dir": str(REPO / "data" / "reference"),
        "out_dir": str(tmp_path),
    }
    html = render(REPO / "notebooks" / "watch.ipynb", tmp_path, params, "watch")
    page = html.read_text()
    assert "Traceback" not in page
    # The seed's shape, generated from the same data, with its CPU from cumulative time.
    summary = watch.summarize(read_run(FIXTURE), watch.timelines(read_folder(FIXTURE)))
    assert watch.seed_shape(summary).columns[0] in page
    assert overclaimed_intervals(page) == []
    assert "time to serve all watchers (s)" in page
    for figure in ("watch_server_small", "watch_client_small", "watch_published_server_rss_peak"):
        assert (tmp_path / "figures" / f"{figure}.png").is_file(), figure
