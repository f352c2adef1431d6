"""The notebooks, executed by papermill on a real (small) run, render pages people can read,
and render the same tables twice from the same raw data."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from perflab.report import render_run
from tests.conftest import REPO

# papermill starts a kernel for every render.
pytestmark = pytest.mark.live

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"


def text_outputs(notebook: Path) -> list[str]:
    """What each cell showed, without images (PNG bytes carry no table)."""
    nb = nbformat.read(notebook, as_version=4)
    shown = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            shown.append(data.get("text/html") or data.get("text/plain") or output.get("text", ""))
    return shown


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    run = tmp_path_factory.mktemp("data") / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    pages = render_run(run, REPO / "data" / "reference", out, REPO / "notebooks")
    assert {p.name for p in pages} == {"hello.html", "index.html"}
    return out


def test_hello_page_has_its_tables_and_plots(rendered):
    html = (rendered / "hello.html").read_text()
    for heading in (
        "Throughput: req/s vs concurrency",
        "Latency percentiles",
        "CPU time per call",
        "Errors and failed cells",
        "Published vs measured",
    ):
        assert heading in html
    assert "(req/s)" in html  # units in the table headers
    # papermill raises on a failing cell; a warning or traceback printed by a cell is caught here.
    assert "Traceback (most recent call last)" not in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert (rendered / "figures" / "hello_rps_steady.png").stat().st_size > 10_000


def test_index_links_the_study_and_shows_the_hosts(rendered):
    html = (rendered / "index.html").read_text()
    assert 'href="hello.html"' in html
    assert "ghz" in html and "ceiling" in html
    assert "Traceback (most recent call last)" not in html


def test_rendering_twice_gives_the_same_tables(rendered, tmp_path):
    run = tmp_path / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    render_run(run, REPO / "data" / "reference", tmp_path / "again", REPO / "notebooks")

    def normalise(shown: list[str]) -> list[str]:
        # The folders differ between the two renders; nothing else may.
        return [
            s.replace(str(rendered), "OUT").replace(str(tmp_path / "again"), "OUT") for s in shown
        ]

    assert normalise(text_outputs(rendered / "hello.ipynb")) == normalise(
        text_outputs(tmp_path / "again" / "hello.ipynb")
    )
