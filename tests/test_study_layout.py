"""One study in one place: the registry of the studies' packages, docs/adding-a-study.md's
list of the places a study is made of checked against what every study has, and no study
named in the playbooks or the shared code."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from perflab.contract.study import Study
from perflab.studies import get_study, registry, runnable, study_ids
from tests.conftest import GROUP_VARS, REPO

DOC = REPO / "docs" / "adding-a-study.md"
SECTION = "## The places a study touches"
STUDIES_DIR = REPO / "perflab" / "studies"


def doc_places() -> list[str]:
    """The first column of the table under SECTION: one backticked path per row."""
    text = DOC.read_text()
    assert SECTION in text, f"{DOC} has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    places = [re.match(r"\| `([^`]+)` \|", row).group(1) for row in rows]
    assert places, f"no rows in the table under {SECTION!r}"
    return places


def test_a_study_is_its_package_and_four_files_of_data():
    # The package, its group_vars file, its notebook, its reference CSV, its test fixture:
    # each its own, nothing shared to register it in.
    assert doc_places() == [
        "perflab/studies/<id>/",
        "inventory/group_vars/all/<id>.yml",
        "notebooks/<id>.ipynb",
        "data/reference/<id>.csv",
        "tests/data/runs/<id>_fixture/",
    ]
    assert "DESIGN.md" not in DOC.read_text()


@pytest.mark.parametrize("study", runnable())
def test_every_listed_place_exists_for_every_study(study):
    for place in doc_places():
        path = REPO / place.replace("<id>", study)
        assert path.exists(), f"{study}: {place} -> {path.relative_to(REPO)} is missing"


def test_the_registry_is_every_package_and_calibration_its_one_pseudo_study():
    found = {path.parent.name for path in STUDIES_DIR.glob("*/__init__.py")}
    assert set(registry()) == found
    assert {s for s, study in registry().items() if study.pseudo} == {"calibration"}
    assert runnable() == sorted(found - {"calibration"})


def test_a_run_measures_every_study_of_the_registry_unless_it_names_some():
    # perflab_studies is the registry's list as study_records.yml read it, not a copy.
    studies = yaml.safe_load((GROUP_VARS / "studies.yml").read_text())["perflab_studies"]
    assert studies == "{{ perflab_known.studies }}"


@pytest.mark.parametrize("study", study_ids())
def test_study_record_says_what_it_needs(study):
    record = get_study(study)
    assert isinstance(record, Study) and record.id == study
    assert (STUDIES_DIR / study / "matrix.py").is_file()
    for role in record.builds + record.server_builds:
        assert (REPO / "roles" / role / "tasks" / "main.yml").is_file(), f"{study}: no role {role}"
    matrix = yaml.safe_load((GROUP_VARS / f"{study}.yml").read_text())[f"perflab_matrix_{study}"]
    # A ghz study's matrix has the ghz knobs, connections among them.
    assert ("connections" in matrix) == record.uses_ghz
    if record.servers_check:
        assert importlib.util.find_spec(record.servers_check[0]), record.servers_check


def test_no_playbook_is_a_study_s_and_run_all_names_none():
    playbooks = {path.stem for path in (REPO / "playbooks").glob("*.yml")}
    assert not playbooks & set(study_ids())
    imported = [
        play["ansible.builtin.import_playbook"]
        for play in yaml.safe_load((REPO / "playbooks" / "run_all.yml").read_text())
    ]
    assert "studies.yml" in imported


# Mentions of a study id outside its package that are not the study being named: none.
# The studies' own conversions of the seed tables and their own metrics' seed spellings are
# their hooks (Study.seed_rows, Study.seed_metrics).
KNOWN_MENTIONS: set[tuple[str, str]] = set()


def study_mentions(text: str, study: str) -> int:
    """How often a text names the study as code does: the id as a whole word in YAML, or in
    Python as a string equal to it, its module path or its matrix's variable."""
    names = rf"perflab[./]studies[./]{study}\b|perflab_(matrix|profiles)_{study}\b"
    return len(re.findall(rf"(['\"]){study}\1|{names}", text))


def mentions(roots: list[str], studies: list[str]) -> set[tuple[str, str]]:
    """(file, study) for every file under roots naming a study outside its own package:
    in playbooks/ any whole-word occurrence (comments too), in perflab/ study_mentions."""
    found = set()
    for root in roots:
        for path in sorted((REPO / root).rglob("*")):
            if not path.is_file() or path.suffix not in (".py", ".yml", ".yaml"):
                continue
            text, name = path.read_text(), str(path.relative_to(REPO))
            for study in studies:
                if name.startswith(f"perflab/studies/{study}/"):
                    continue
                hits = (
                    re.findall(rf"\b{study}\b", text)
                    if root == "playbooks"
                    else study_mentions(text, study)
                )
                if hits:
                    found.add((name, study))
    return found


def test_no_study_is_named_in_playbooks_or_perflab_outside_its_package():
    assert mentions(["playbooks", "perflab"], runnable()) == KNOWN_MENTIONS


def test_the_mention_count_sees_each_way_of_naming_a_study():
    assert study_mentions('cells["hello"]', "hello") == 1
    assert study_mentions("from perflab.studies.hello import analysis", "hello") == 1
    assert study_mentions("{{ perflab_matrix_hello.concurrency }}", "hello") == 1
    assert study_mentions("HELLO_RPC = GhzCall('hello.proto')", "hello") == 0
    assert study_mentions("sampler.watch('server', pid)", "watch") == 0


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
    # Beside the registry, only the records' shared lazy hook: no study is a flat module.
    assert sorted(p.name for p in STUDIES_DIR.glob("*.py")) == ["__init__.py", "lazy.py"]


# The one reader of a run's cells (perflab.contract.cell: cell_dirs, read_cell_json,
# iter_cells), and the runner, which checks the record of the cell it has just written.
CELL_READERS = {"perflab/contract/cell.py", "perflab/host/runner.py"}


def cell_listings(source: str) -> int:
    """How often Python source lists cell folders or names a cell record's file itself."""
    tree = ast.parse(source)
    return sum(
        (isinstance(node, ast.Constant) and node.value == "cell.json")
        or (isinstance(node, ast.Name | ast.Attribute) and "cell_dirs" in ast.unparse(node))
        for node in ast.walk(tree)
    )


def test_only_the_one_reader_lists_cells_or_opens_cell_json():
    listing = {
        str(path.relative_to(REPO))
        for path in (REPO / "perflab").rglob("*.py")
        if cell_listings(path.read_text())
    }
    assert listing <= CELL_READERS, sorted(listing - CELL_READERS)


def test_the_cell_listing_check_sees_both_ways_of_listing_cells():
    assert cell_listings('record = json.loads((folder / "cell.json").read_text())') == 1
    assert cell_listings("for folder in cell_dirs(run_dir): pass") == 1
    assert cell_listings("for cell in iter_cells(run_dir, include_aa=True): pass") == 0
