"""One study in one place: the studies' packages, and docs/adding-a-study.md's list of the
places a study touches checked against what every study actually has."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from perflab.contract.study import Study, get_study, study_ids
from tests.conftest import GROUP_VARS, REPO

DOC = REPO / "docs" / "adding-a-study.md"
SECTION = "## The places a study touches"
STUDIES_DIR = REPO / "perflab" / "studies"


def listed_studies() -> list[str]:
    return yaml.safe_load((GROUP_VARS / "studies.yml").read_text())["perflab_studies"]


def doc_places() -> list[str]:
    """The first column of the table under SECTION: one backticked path per row."""
    text = DOC.read_text()
    assert SECTION in text, f"{DOC} has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    places = [re.match(r"\| `([^`]+)` \|", row).group(1) for row in rows]
    assert places, f"no rows in the table under {SECTION!r}"
    return places


def test_the_doc_lists_about_six_kinds_of_place():
    places = doc_places()
    own = [p for p in places if "<id>" in p]
    folders = {p.split("/")[0] for p in own}
    # The study's own files sit in a handful of top-level folders, and the doc names no
    # file the repo does not hold (it once named a DESIGN.md).
    assert folders <= {"perflab", "inventory", "playbooks", "notebooks", "data", "tests"}
    assert "DESIGN.md" not in DOC.read_text()


@pytest.mark.parametrize("study", listed_studies())
def test_every_listed_place_exists_for_every_study(study):
    for place in doc_places():
        path = REPO / place.replace("<id>", study)
        if "<id>" in place:
            assert path.exists(), f"{study}: {place} -> {path.relative_to(REPO)} is missing"
        else:
            # A shared file: the study is registered there by its id.
            assert re.search(rf"\b{study}\b", path.read_text()), f"{place} does not name {study}"


def test_every_study_package_is_known_and_every_listed_study_has_one():
    assert set(listed_studies()) <= set(study_ids())
    # calibration is the one pseudo-study: cells (calibrate.yml), but no page of its own.
    pseudo = {s for s in study_ids() if get_study(s).pseudo}
    assert pseudo == {"calibration"}
    assert set(study_ids()) - pseudo == set(listed_studies())


@pytest.mark.parametrize("study", study_ids())
def test_study_record_says_what_it_needs(study):
    record = get_study(study)
    assert isinstance(record, Study) and record.id == study
    assert (STUDIES_DIR / study / "matrix.py").is_file()
    for role in record.builds:
        assert (REPO / "roles" / role / "tasks" / "main.yml").is_file(), f"{study}: no role {role}"
    matrix = yaml.safe_load((GROUP_VARS / f"{study}.yml").read_text())[f"perflab_matrix_{study}"]
    # The services it needs are the ones its matrix has the cells start and sample.
    assert set(record.services) == set(matrix.get("dependencies") or [])
    # A ghz study's matrix has the ghz knobs, connections among them.
    assert ("connections" in matrix) == record.uses_ghz


@pytest.mark.parametrize("study", listed_studies())
def test_a_ghz_study_calibrates_first_and_only_a_ghz_study_does(study):
    plays = yaml.safe_load((REPO / "playbooks" / f"{study}.yml").read_text())
    imported = {play.get("ansible.builtin.import_playbook") for play in plays}
    assert ("calibrate.yml" in imported) == get_study(study).uses_ghz
    assert "study_start.yml" in imported


def study_imports_block(studies: list[str]) -> str:
    """run_all.yml's study imports as perflab_studies makes them: one import per study."""
    return "".join(
        f"- name: {study.capitalize()} study\n  ansible.builtin.import_playbook: {study}.yml\n"
        for study in studies
    )


def run_all_mismatch(plays: list[dict], studies: list[str]) -> str:
    """'' when run_all.yml's study imports are perflab_studies' (same studies, same order);
    otherwise what differs and the block to paste in their place."""
    imported = [
        Path(play["ansible.builtin.import_playbook"]).stem
        for play in plays
        if Path(str(play.get("ansible.builtin.import_playbook", ""))).stem in set(study_ids())
    ]
    if imported == studies:
        return ""
    return (
        f"run_all.yml imports the studies {imported}, perflab_studies lists {studies}; "
        f"paste this as its study imports:\n{study_imports_block(studies)}"
    )


def test_run_all_imports_the_listed_studies_in_their_order():
    plays = yaml.safe_load((REPO / "playbooks" / "run_all.yml").read_text())
    assert run_all_mismatch(plays, listed_studies()) == ""
    # The block as written: the names too are the derived ones.
    assert study_imports_block(listed_studies()) in (REPO / "playbooks" / "run_all.yml").read_text()


def test_a_study_missing_from_run_all_is_named_with_the_block_to_paste():
    plays = [{"ansible.builtin.import_playbook": f"{s}.yml"} for s in ("setup", "orders", "hello")]
    said = run_all_mismatch(plays, ["hello", "orders", "watch"])
    assert "imports the studies ['orders', 'hello']" in said
    assert said.endswith(study_imports_block(["hello", "orders", "watch"]))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("study", study_ids())
def test_a_study_imports_shared_code_never_another_study(study):
    others = {s for s in study_ids() if s != study}
    for path in (STUDIES_DIR / study).glob("*.py"):
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[:2] == ["perflab", "studies"] and len(parts) > 2:
                assert parts[2] not in others, f"{path.relative_to(REPO)} imports {module}"


@pytest.mark.parametrize("study", study_ids())
def test_the_host_side_of_a_study_needs_no_analysis_packages(study):
    """What the benchmark host imports (the package and its matrix) names no pandas, numpy
    or matplotlib; only analysis.py may."""
    for name in ("__init__.py", "matrix.py"):
        heavy = {m.split(".")[0] for m in imported_modules(STUDIES_DIR / study / name)} & {
            "pandas",
            "numpy",
            "matplotlib",
        }
        assert not heavy, f"perflab/studies/{study}/{name} imports {heavy}"


def test_no_flat_study_module_is_left_behind():
    flat = {p.stem for p in (REPO / "perflab").glob("*.py")}
    assert not flat & set(study_ids())
    assert [p.name for p in STUDIES_DIR.glob("*.py")] == ["__init__.py"]
