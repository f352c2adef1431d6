"""aws_io study: the fixture (a real smoke run) loads, and the notebook renders on it."""

from __future__ import annotations

import pytest

from perflab.analysis.frames import read_cells, read_run
from perflab.analysis.report import render
from perflab.analysis.run import read as read_folder
from perflab.studies.aws_io import analysis as aws_io
from tests.conftest import REPO, overclaimed_intervals

FIXTURE = REPO / "tests" / "data" / "runs" / "aws_io_fixture"


def test_fixture_is_a_complete_smoke_run_with_dependency_samples():
    frame = read_run(FIXTURE)
    assert set(frame["study"]) == {"aws_io"}
    assert "failed" not in set(frame["metric"])
    cells = read_cells(FIXTURE)
    assert sorted(zip(cells["implementation"], cells["scenario"], strict=True)) == sorted(
        (i, s) for i in aws_io.IMPLEMENTATIONS for s in aws_io.SCENARIOS
    )
    metrics = set(frame["metric"])
    assert {"rps", "ok", "dependency_s3_cpu_seconds", "dependency_mongo_cpu_seconds"} <= metrics
    assert (FIXTURE / "manifest.json").is_file()
    # Every streamed call carried the whole bucket, by the servers' own count.
    streams = aws_io.stream_messages(read_folder(FIXTURE), frame)
    assert len(streams) == 4 and set(streams["messages per call"]) == {893.0}


@pytest.mark.live
@pytest.mark.slow
def test_notebook_executes_on_the_fixture_run(tmp_path):
    params = {
        "run_dir": str(FIXTURE),
        "reference_dir": str(REPO / "data" / "reference"),
        "out_dir": str(tmp_path),
    }
    html = render(REPO / "notebooks" / "aws_io.ipynb", tmp_path, params, "aws_io")
    page = html.read_text()
    assert "Traceback" not in page
    assert "<title>aws_io: aws_io_fixture</title>" in page
    answer = aws_io.unavailable_answer(
        aws_io.error_messages(read_folder(FIXTURE)), read_run(FIXTURE)
    )
    assert answer.split(".")[0].strip("*") in page
    assert "aws api stream (ListObjectsStream), concurrency 10" in page
    assert (tmp_path / "figures" / "aws_io_rps_steady_none.png").is_file()  # a panel per scenario
    assert overclaimed_intervals(page) == []
    assert (tmp_path / "figures" / "aws_io_published_rps_list_unary.png").is_file()
