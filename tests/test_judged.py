"""A report reads each cell.json once and judges each run once: the renderer judges the run
and its reference run (perflab.analysis.judged), and every notebook loads that."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from perflab.analysis import judged, replication
from perflab.analysis import run as run_module
from perflab.cli import claim_frame_hooks
from perflab.contract import cell
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"


@pytest.fixture
def counted(monkeypatch, tmp_path: Path):
    """A run and its reference run (two copies of the hello fixture, the reference named
    for the topology), with every cell.json read and every run judged counted."""
    reference = tmp_path / "reference"
    shutil.copytree(REPO / "data" / "reference", reference)
    (reference / "reference_runs.yml").write_text("localhost: ref-run\n")
    shutil.copytree(FIXTURE, tmp_path / "ref-run")
    shutil.copytree(FIXTURE, tmp_path / "run")
    reads: Counter[Path] = Counter()
    parsed: Counter[Path] = Counter()
    judged_runs: Counter[str] = Counter()
    read_cell_json, judge_run_looks = cell.read_cell_json, replication.judge_run_looks
    cell_metrics = run_module.cell_metrics

    def counting_parse(folder: Path, record: dict):
        parsed[folder / "cell.json"] += 1
        return cell_metrics(folder, record)

    def counting_read(path: Path):
        reads[path] += 1
        return read_cell_json(path)

    def counting_judge(run, *args, **kwargs):
        judged_runs[run.run_id] += 1
        return judge_run_looks(run, *args, **kwargs)

    monkeypatch.setattr(cell, "read_cell_json", counting_read)
    monkeypatch.setattr(replication, "judge_run_looks", counting_judge)
    monkeypatch.setattr(run_module, "cell_metrics", counting_parse)
    return tmp_path, reference, reads, judged_runs, parsed


def test_a_report_reads_each_cell_once_and_judges_each_run_once(counted):
    root, reference, reads, judged_runs, parsed = counted
    result = judged.judge(root / "run", reference, claim_frame_hooks())
    out = root / "out"
    out.mkdir()
    judged.write_cache(result, reference, out)
    # Every notebook of the report opens the run this way (perflab.analysis.report).
    for study in ("hello", "overview"):
        opened = judged.open_judged(root / "run", reference, out, claim_frame_hooks())
        page = opened.replication if study == "overview" else opened.study(study)
        assert page.verdicts
    cells = sorted(root.glob("*/*/*/cell.json"))
    assert len(cells) == 2 * len(list(FIXTURE.glob("*/*/cell.json"))) > 0
    assert reads == Counter({path: 1 for path in cells})
    # Each cell's raw files parsed once too, though the run builds two frames of them.
    assert parsed == Counter({path: 1 for path in cells})
    assert judged_runs == Counter({"run": 1, "ref-run": 1})
    assert result.replication.reference_id == "ref-run"


def test_without_a_cache_of_this_content_the_notebook_reads_and_judges_itself(counted):
    root, reference, reads, judged_runs, _ = counted
    out = root / "out"
    out.mkdir()
    judged.write_cache(judged.judge(root / "run", reference, claim_frame_hooks()), reference, out)
    # The run changed after the cache was written: the cache is not taken.
    first = next((root / "run").glob("hello/*/cell.json"))
    first.write_text(json.dumps(json.loads(first.read_text())) + "\n")
    judged.open_judged(root / "run", reference, out, claim_frame_hooks())
    assert judged_runs["run"] == 2
    assert reads[first] == 2


def test_no_notebook_reads_or_judges_the_run_itself():
    for notebook in sorted((REPO / "notebooks").glob("*.ipynb")):
        source = "".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"])
        assert "open_judged(" in source, notebook.name
        for reader in ("read_run(", "read_cells(", "replicate(", "iter_cells(", "read_manifest("):
            assert reader not in source, f"{notebook.name} calls {reader}"
