"""docs/architecture.md's module list is the tree under perflab/: every module listed, no
row naming a module that is not there. A row names one file, or with `<id>` that file in
every study package that has one, so a new study with the usual modules needs no row."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

DOC = REPO / "docs" / "architecture.md"
SECTION = "## Modules"
ROW = re.compile(r"^\| `(perflab/[^`]+\.py)` \|", re.MULTILINE)


def doc_rows(text: str) -> list[str]:
    """The module column of the table under SECTION."""
    assert SECTION in text, f"{DOC.name} has no section {SECTION!r}"
    return ROW.findall(text.split(SECTION, 1)[1].split("\n## ", 1)[0])


def tree_modules(root: Path) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for path in (root / "perflab").rglob("*.py")
        if "__pycache__" not in path.parts
    }


def row_matches(row: str, module: str) -> bool:
    if "<id>" not in row:
        return row == module
    before, after = row.split("<id>", 1)
    middle = module.removeprefix(before).removesuffix(after)
    return module.startswith(before) and module.endswith(after) and middle.isidentifier()


def mismatches(rows: list[str], modules: set[str]) -> list[str]:
    """What the doc and the tree disagree on, one line each; [] when they agree."""
    said = [f"listed twice: {row}" for row in sorted({r for r in rows if rows.count(r) > 1})]
    said += [
        f"not in the doc (add a row under {SECTION}): {module}"
        for module in sorted(modules)
        if not any(row_matches(row, module) for row in rows)
    ]
    said += [
        f"in the doc, not in the tree: {row}"
        for row in rows
        if not any(row_matches(row, module) for module in modules)
    ]
    return said


def test_the_doc_lists_every_module_of_the_tree_and_no_other():
    assert mismatches(doc_rows(DOC.read_text()), tree_modules(REPO)) == []


def test_a_missing_a_stale_and_a_doubled_row_are_each_named():
    rows = ["perflab/cli.py", "perflab/gone.py", "perflab/cli.py", "perflab/studies/<id>/matrix.py"]
    modules = {"perflab/cli.py", "perflab/new.py", "perflab/studies/capacity/matrix.py"}
    assert mismatches(rows, modules) == [
        "listed twice: perflab/cli.py",
        f"not in the doc (add a row under {SECTION}): perflab/new.py",
        "in the doc, not in the tree: perflab/gone.py",
    ]


def test_a_study_row_covers_study_packages_only():
    assert row_matches("perflab/studies/<id>/matrix.py", "perflab/studies/capacity/matrix.py")
    assert not row_matches("perflab/studies/<id>/matrix.py", "perflab/studies/a/b/matrix.py")
    assert not row_matches("perflab/studies/<id>/matrix.py", "perflab/contract/matrix.py")
