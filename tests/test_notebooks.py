"""The notebooks, executed by papermill on a real (small) run, render pages people can read,
and render the same bytes twice from the same raw data, wherever the folders are."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from perflab.analysis.report import render_run
from perflab.cli import claim_frame_hooks
from tests.conftest import REPO

# papermill starts a kernel for every render.
pytestmark = pytest.mark.live

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"
# Where a machine keeps checkouts and scratch files; a committed page names none of them.
MACHINE_PATH = re.compile(r"(?<![\w.])/(root|home|tmp|work)/")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    run = tmp_path_factory.mktemp("data") / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    pages = render_run(
        run, REPO / "data" / "reference", out, REPO / "notebooks", claim_frame_hooks()
    )
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


def test_rendering_twice_elsewhere_gives_the_same_bytes(rendered, tmp_path):
    # Another copy of the data, deeper in another folder, rendered later: nothing may differ.
    run = tmp_path / "elsewhere" / "data" / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    time.sleep(1)
    again = tmp_path / "elsewhere" / "reports" / "again"
    render_run(run, REPO / "data" / "reference", again, REPO / "notebooks", claim_frame_hooks())

    def files(folder: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
        }

    first, second = files(rendered), files(again)
    # The HTML and figures are the report; executed notebooks (papermill timings) are not kept.
    assert {"hello.html", "index.html", "figures/hello_rps_steady.png"} <= set(first)
    assert not [name for name in first if name.endswith(".ipynb")]
    assert first == second, [name for name in first if first[name] != second.get(name)]
    for name in ("hello.html", "index.html"):
        leaked = MACHINE_PATH.findall(first[name].decode())
        assert not leaked, f"{name} names absolute paths of this machine: {leaked[:3]}"
