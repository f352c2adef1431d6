"""Every notebook cell carries a fixed id: nbformat gives a cell without one a random id
each time it renders, and the committed reports would then differ on every re-render."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_a_fixed_id(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    missing = [i for i, cell in enumerate(cells) if "id" not in cell]
    assert not missing, f"{notebook.name}: cells {missing} have no id"
    ids = [cell["id"] for cell in cells]
    assert len(set(ids)) == len(ids), f"{notebook.name}: repeated cell ids"
