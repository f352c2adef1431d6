"""The one reader of a run's cells (`perflab.contract.cell.iter_cells`): complete cells of
one study or of all, each with its checked cell.json; unfinished and malformed ones named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from perflab.contract.cell import iter_cells
from perflab.contract.parsers import MalformedRawFile

FIXTURE = Path(__file__).parent / "data" / "runs" / "hello_fixture"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "run")
    return tmp_path / "run"


def test_every_complete_cell_in_folder_order_or_one_studys():
    every = [folder for folder, _ in iter_cells(FIXTURE)]
    assert every and every == sorted(path.parent for path in FIXTURE.glob("*/*/cell.json"))
    assert {folder.parent.name for folder in every} == {"calibration", "hello"}
    hello = list(iter_cells(FIXTURE, "hello"))
    assert hello and {cell.record["study"] for cell in hello} == {"hello"}
    assert [cell.folder for cell in hello] == [f for f in every if f.parent.name == "hello"]
    assert list(iter_cells(FIXTURE, "watch")) == []


def test_an_unfinished_cell_is_not_read(run: Path):
    first = next(iter_cells(run, "hello")).folder
    shutil.copytree(first, first.with_name(f".partial-{first.name}"))
    assert ".partial-" not in " ".join(str(cell.folder) for cell in iter_cells(run))
    assert len(list(iter_cells(run, "hello"))) == len(list(iter_cells(FIXTURE, "hello")))


def rewrite(cell_json: Path, **changes: object) -> None:
    record = json.loads(cell_json.read_text())
    record.update(changes)
    cell_json.write_text(json.dumps({k: v for k, v in record.items() if v is not None}))


def test_a_record_lacking_a_key_is_named(run: Path):
    victim = next(iter_cells(run, "hello")).folder / "cell.json"
    rewrite(victim, status=None)
    with pytest.raises(MalformedRawFile, match=r"cell.json: cell record lacks \['status'\]"):
        list(iter_cells(run, "hello"))


@pytest.mark.parametrize("text", ["{", "[]"])
def test_an_unreadable_record_is_named(run: Path, text: str):
    victim = next(iter_cells(run, "hello")).folder / "cell.json"
    victim.write_text(text)
    with pytest.raises(MalformedRawFile, match=f"{victim.parent.name}/cell.json"):
        list(iter_cells(run))


def test_a_record_of_another_study_in_a_studys_folder_is_refused(run: Path):
    victim = next(iter_cells(run, "hello")).folder / "cell.json"
    rewrite(victim, study="watch")
    with pytest.raises(MalformedRawFile, match="a cell of study 'watch' under hello/"):
        list(iter_cells(run, "hello"))
