"""The manifest says when and from which commit a run's cells ran, not when it was collected."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from perflab.contract.cell import CellRecord
from perflab.host.manifest import build_manifest, stack_facts, venv_distributions

COLLECTED = {"start": "2026-11-23T14:45:00Z", "end": "2026-11-23T14:49:00Z", "git_sha": "bbb"}


def write_cell(run_dir: Path, study: str, cell_id: str, **fields) -> None:
    folder = run_dir / study / cell_id
    folder.mkdir(parents=True)
    # The keys every cell.json has (perflab.contract.cell.RECORD_KEYS), then the test's.
    record = {"scenario": "s", "implementation": "i", "status": "ok", "params": {}}
    (folder / "cell.json").write_text(
        json.dumps({"study": study, "cell_id": cell_id, **record, **fields})
    )


def test_times_and_revision_are_the_cells_own(tmp_path):
    write_cell(
        tmp_path,
        "orders",
        "a",
        start="2026-11-23T14:15:00+00:00",
        end="2026-11-23T14:20:00+00:00",
        code_revision="aaa",
    )
    write_cell(
        tmp_path,
        "orders",
        "b",
        start="2026-11-23T14:30:00+00:00",
        end="2026-11-23T14:42:00+00:00",
        code_revision="aaa",
    )
    # A half-written cell never finished: it says nothing about the run.
    write_cell(
        tmp_path,
        "orders",
        ".partial-c",
        start="2026-11-23T15:00:00+00:00",
        end="2026-11-23T15:10:00+00:00",
        code_revision="ccc",
    )
    manifest = build_manifest(tmp_path, "quick", "netns", COLLECTED)
    assert manifest["start"] == "2026-11-23T14:15:00+00:00"
    assert manifest["end"] == "2026-11-23T14:42:00+00:00"
    assert manifest["git_sha"] == "aaa"
    assert manifest["collected"] == COLLECTED


def test_a_resume_across_commits_names_every_revision(tmp_path):
    write_cell(tmp_path, "hello", "a", start="2026-11-23T14:15:00+00:00", code_revision="aaa")
    write_cell(tmp_path, "hello", "b", start="2026-11-23T16:00:00+00:00", code_revision="ddd-dirty")
    assert build_manifest(tmp_path, "quick", "localhost", COLLECTED)["git_sha"] == "aaa + ddd-dirty"


def test_cells_without_records_fall_back_to_the_collecting_invocation(tmp_path):
    write_cell(tmp_path, "hello", "a")
    manifest = build_manifest(tmp_path, "quick", "localhost", COLLECTED)
    assert (manifest["start"], manifest["end"], manifest["git_sha"]) == (
        "2026-11-23T14:45:00Z",
        "2026-11-23T14:49:00Z",
        "bbb",
    )


def test_cells_read_the_revision_the_host_copy_recorded(tmp_path):
    assert CellRecord.revision_of(tmp_path) == ""
    (tmp_path / "REVISION.json").write_text('{"git_sha": "abc", "dirty": false}')
    assert CellRecord.revision_of(tmp_path) == "abc"
    # Ansible's template may hand the flag over as text.
    (tmp_path / "REVISION.json").write_text('{"git_sha": "abc", "dirty": "True"}')
    assert CellRecord.revision_of(tmp_path) == "abc-dirty"


def test_stack_facts_carry_each_stack_roles_record_and_its_venvs_versions(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    absent = {"stack": "seed000", "installed": False, "python": "", "looked_for": ["python3.8"]}
    (stacks / "seed000.json").write_text(json.dumps(absent))
    assert stack_facts(tmp_path) == {"seed000": absent}
    # The other way: installed, so the versions its venv holds are read (none: no venv here).
    present = {**absent, "installed": True, "python": "3.8.18", "venv": str(tmp_path / "v")}
    (stacks / "seed000.json").write_text(json.dumps(present))
    assert stack_facts(tmp_path)["seed000"] == {
        **present,
        "python_packages": {},
        "python_distributions": {},
    }
    # A record that cannot be read says so, and counts as not installed.
    (stacks / "seed000.json").write_text("{")
    assert stack_facts(tmp_path)["seed000"]["installed"] is False
    assert stack_facts(tmp_path / "nowhere") == {}


@pytest.mark.live  # it starts the venv's python
def test_venv_distributions_name_the_transitive_libraries_at_their_versions(tmp_path):
    # The controller's own venv: pytest's dependency pluggy is in no pin of ours.
    found = venv_distributions(Path(sys.executable))
    assert found["pluggy"] == importlib.metadata.version("pluggy")
    assert found["numpy"] == importlib.metadata.version("numpy")
    assert venv_distributions(tmp_path / "no-python") == {}
