"""Rendering leaves nothing machine- or time-specific in a page: papermill's metadata and the
random id of its parameters cell are dropped, and a page naming a local path is refused.
(tests/test_notebooks.py renders a fixture run twice and compares the bytes.)"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from perflab.analysis.report import (
    INJECTED,
    ReportError,
    machine_paths,
    refuse_machine_paths,
    repeatable,
)


def executed_notebook() -> nbformat.NotebookNode:
    """The shape papermill writes: run-level and per-cell timings, an inserted cell."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"start_time": "2026-11-24T02:00:00", "duration": 3.2}
    params = nbformat.v4.new_code_cell('run_dir = "data/x"', metadata={"tags": ["parameters"]})
    injected = nbformat.v4.new_code_cell('run_dir = "../x"', metadata={"tags": [INJECTED]})
    shown = nbformat.v4.new_code_cell("1 + 1")
    # The notebook's own cells keep the ids they have in notebooks/; papermill's is new.
    params.id, shown.id = "b30c8045", "f3403d2c"
    for cell in (params, injected, shown):
        cell.metadata["papermill"] = {"duration": 0.1, "exception": False, "status": "completed"}
        cell.metadata["execution"] = {"iopub.execute_input": "2026-11-24T02:00:01"}
    nb.cells = [params, injected, shown]
    return nb


def test_two_executions_of_the_same_cells_become_the_same_notebook():
    first, second = executed_notebook(), executed_notebook()
    assert first.cells[1].id != second.cells[1].id  # nbformat gives new cells random ids
    second.metadata["papermill"]["duration"] = 9.9
    first, second = repeatable(first), repeatable(second)
    assert first == second
    assert "papermill" not in first.metadata
    assert all("papermill" not in c.metadata and "execution" not in c.metadata for c in first.cells)
    assert first.cells[1].id == INJECTED
    nbformat.validate(first)


def test_a_page_naming_a_local_folder_is_refused(tmp_path: Path):
    page = tmp_path / "hello.html"
    run_dir = tmp_path / "data" / "run1"
    page.write_text(f"<p>read {run_dir}/hello/cell.json</p>")
    with pytest.raises(ReportError, match=f"shows the absolute path {run_dir} "):
        refuse_machine_paths(page, machine_paths(run_dir))
    page.write_text(f"<pre>{sys.prefix}/lib/python3.11/site-packages/x.py: FutureWarning</pre>")
    with pytest.raises(ReportError, match="absolute path"):
        refuse_machine_paths(page, machine_paths(run_dir))
    page.write_text("<p>read ../../data/run1/hello/cell.json</p>")
    refuse_machine_paths(page, machine_paths(run_dir))


def test_a_render_starts_from_an_empty_figures_folder(tmp_path):
    from perflab.analysis.report import FIGURES, clear_figures

    figures = tmp_path / FIGURES
    figures.mkdir()
    (figures / "old_plot.png").write_bytes(b"png")
    (tmp_path / "index.html").write_text("kept")
    clear_figures(tmp_path)
    assert not list(figures.glob("*.png"))
    assert (tmp_path / "index.html").read_text() == "kept"
    clear_figures(tmp_path / "never-rendered")  # nothing to clear is fine


def test_a_table_without_its_index_renders_the_same_twice():
    import pandas as pd

    from perflab.analysis.tables import hide_index

    table = pd.DataFrame({"server": ["cpp", "go"], "req/s": [1.5, 2.5]})
    first, again = hide_index(table).to_html(), hide_index(table.copy()).to_html()
    assert first == again  # pandas would draw a random table id each time
    other = hide_index(table.assign(**{"req/s": [9.0, 9.5]})).to_html()
    assert first.split('id="', 1)[1][:12] != other.split('id="', 1)[1][:12]


def test_the_overview_links_the_pages_the_renderer_writes_not_those_it_finds(tmp_path):
    from perflab.analysis.report import largest_first, study_links, study_pages

    run_dir = tmp_path / "run"
    for study, cells in (("hello", 3), ("orders", 5)):
        for n in range(cells):
            (run_dir / study / f"cell-{n}").mkdir(parents=True)
    out = tmp_path / "out"
    out.mkdir()
    # A page of an earlier render lingers; the pages of this render are not written yet.
    (out / "watch.html").write_text("stale")
    assert study_pages(out, "hello,orders") == {"hello": "hello.html", "orders": "orders.html"}
    assert 'href="orders.html"' in study_links(run_dir, out, "hello,orders")
    # Without a plan (JupyterLab on a run) the pages found beside the index are linked.
    assert study_pages(out) == {"watch": "watch.html"}
    assert study_links(run_dir, out).startswith("<p>No study page")
    assert "calibration" not in study_links(run_dir, out, "hello,orders")
    # Calibration has cells and no page: named, unlinked, as the status table names it.
    (run_dir / "calibration" / "ghz-c10-r1").mkdir(parents=True)
    listed = study_links(run_dir, out, "hello,orders")
    assert "<li>calibration: the load generator's ceiling" in listed
    assert 'href="calibration' not in listed
    assert listed.index("orders.html") < listed.index("calibration")
    assert largest_first(run_dir, ["hello", "orders"]) == ["orders", "hello"]


def test_hosts_on_one_boot_are_said_to_be_one_machine():
    from perflab.analysis.report import hosts_note

    netns = {
        "hosts": {
            "perflab-client": {"boot_id": "27a7c4d7-x"},
            "perflab-server": {"boot_id": "27a7c4d7-x"},
        }
    }
    said = hosts_note(netns)
    assert said.startswith("`perflab-client` and `perflab-server` are one machine (boot 27a7c4d7)")
    two = {"hosts": {"a": {"boot_id": "b1"}, "b": {"boot_id": "b2"}}}
    assert hosts_note(two) == "" and hosts_note({"hosts": {"localhost": {"boot_id": "b1"}}}) == ""


@pytest.mark.live
def test_kernels_rendered_side_by_side_talk_over_their_own_sockets_not_tcp(tmp_path):
    """Over TCP two kernels started at once can draw the same free port and one dies
    ("Address already in use"); each render's kernel must use Unix sockets of its own."""
    from perflab.analysis.report import render_side_by_side

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell("page = 0", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "from ipykernel.kernelapp import IPKernelApp\n"
            "app = IPKernelApp.instance()\n"
            "print('transport', app.transport, 'page', page, 'socket', app.ip)"
        ),
    ]
    notebook = tmp_path / "which_transport.ipynb"
    nbformat.write(nb, notebook)
    jobs = [(notebook, tmp_path / "out", {"page": str(n)}, f"page{n}") for n in range(3)]
    sockets = set()
    for n, page in enumerate(render_side_by_side(jobs)):
        shown = next(line for line in page.read_text().splitlines() if "transport " in line)
        assert f"transport ipc page {n} socket " in shown
        sockets.add(shown.rsplit("socket ", 1)[1])
    assert len(sockets) == 3  # no two kernels share a socket path
