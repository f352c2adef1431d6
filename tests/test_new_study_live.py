"""Adding a study is its package plus its data: a throwaway study written into a copy of the
repository in exactly the five places docs/adding-a-study.md lists, and nothing else, runs
end to end through the real `playbooks/run_all.yml` (smoke profile, real ghz against the real
C++ hello server), and gets its page."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_ansible import ansible
from tests.test_e2e import smoke_args
from tests.test_study_layout import doc_places

# Runs the whole playbook in a copy of the repository: setup, calibration, cells, report.
pytestmark = pytest.mark.live

STUDY = "scratch"
RUN_ID = "scratch-smoke"

PACKAGE_INIT = '''"""A throwaway study: ghz against the C++ hello server."""

from perflab.contract.study import Study
from perflab.studies.scratch.matrix import expand

STUDY = Study(id="scratch", expand=expand, uses_ghz=True, builds=("cpp_build", "ghz"))
'''

PACKAGE_MATRIX = '''"""The throwaway study's matrix: every server at each concurrency, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.knobs import Ints, Number, knob, validate
from perflab.contract.matrix import HELLO_RPC, ServerTable, connections_knob

PREFIX = "perflab_matrix_scratch"


@dataclass(frozen=True)
class Matrix(ServerTable):
    concurrency: list[int] = knob(Ints(), "ghz -c, one cell each")
    connections: list[int] = connections_knob()
    duration_s: float = knob(Number(), "measured seconds per cell")
    warmup_s: float = knob(Number(), "discarded ghz run before every cell")


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    cells = []
    for name in matrix.run_implementations:
        entry = matrix.implementations[name]
        for concurrency in matrix.concurrency:
            load = HELLO_RPC.load(concurrency, 1)
            load.duration_s, load.warmup_s = matrix.duration_s, matrix.warmup_s
            cells.append(
                CellSpec(
                    run_id=run_id,
                    study="scratch",
                    cell_id=f"{name}-c{concurrency}-r1",
                    scenario="steady",
                    implementation=name,
                    client="ghz",
                    params={"concurrency": concurrency, "connections": 1},
                    repeat=1,
                    server=ServerSpec(impl=entry["impl"], options=dict(entry.get("options", {}))),
                    load=load,
                )
            )
    return cells
'''

GROUP_VARS = """# The throwaway study's matrix (tests/test_new_study_live.py).
perflab_matrix_scratch:
  implementations:
    cpp: {impl: cpp/hello}
  run_implementations: []      # empty: all of the above
  concurrency: [2, 4]          # ghz -c, one cell each
  connections: [1]             # ghz --connections
  duration_s: 1                # measured seconds per cell
  warmup_s: 0.5                # discarded ghz run before every cell

perflab_profiles_scratch:
  smoke: {concurrency: [2]}
"""

# Load, call perflab, show: the run's req/s per cell.
NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "parameters",
            "metadata": {"tags": ["parameters"]},
            "outputs": [],
            "source": 'run_dir = "data/example"\nreference_dir = "data/reference"\nout_dir = "."',
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "show",
            "metadata": {},
            "outputs": [],
            "source": "from perflab.analysis import frames\n\n"
            "frame = frames.read_run(run_dir)\n"
            "frame[(frame['study'] == 'scratch') & (frame['metric'] == 'rps')]"
            "[['implementation', 'concurrency', 'value', 'unit']]",
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}

REFERENCE = (
    "study,scenario,implementation,client,concurrency,params,repeat,metric,value,unit,source,note\n"
)


def copy_repo(dest: Path) -> Path:
    """The checkout's tracked files (what a fresh clone has), plus its venv by link."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def add_study(repo: Path) -> list[Path]:
    """The throwaway study in the five places, and nowhere else; returns what was written."""
    package = repo / "perflab" / "studies" / STUDY
    package.mkdir()
    (package / "__init__.py").write_text(PACKAGE_INIT)
    (package / "matrix.py").write_text(PACKAGE_MATRIX)
    (repo / "inventory" / "group_vars" / "all" / f"{STUDY}.yml").write_text(GROUP_VARS)
    (repo / "notebooks" / f"{STUDY}.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    (repo / "data" / "reference" / f"{STUDY}.csv").write_text(REFERENCE)
    # Its fixture: a real cell of the C++ hello server, as the hello fixture holds it.
    fixture = repo / "tests" / "data" / "runs" / f"{STUDY}_fixture"
    shutil.copytree(REPO / "tests" / "data" / "runs" / "hello_fixture", fixture)
    shutil.rmtree(fixture / "hello")
    cell = fixture / STUDY / "cpp-c10-r1"
    shutil.copytree(
        REPO / "tests" / "data" / "runs" / "hello_fixture" / "hello" / "cpp-steady-c10-r1", cell
    )
    record = json.loads((cell / "cell.json").read_text())
    (cell / "cell.json").write_text(
        json.dumps({**record, "study": STUDY, "cell_id": cell.name}, indent=2)
    )
    return [package, *(repo / place.replace("<id>", STUDY) for place in doc_places()[1:])]


@pytest.fixture(scope="module")
def scratch_run(tmp_path_factory):
    repo = copy_repo(tmp_path_factory.mktemp("repo"))
    written = add_study(repo)
    root = tmp_path_factory.mktemp("out")
    done = ansible(
        *smoke_args(RUN_ID, root),
        "-e",
        json.dumps({"perflab_studies": [STUDY]}),
        cwd=repo,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return repo, written, root / "data" / RUN_ID, root / "reports" / RUN_ID, done


def test_the_new_study_is_exactly_the_five_places(scratch_run):
    repo, written, *_ = scratch_run
    tracked = set(
        subprocess.run(
            ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    # What the copy holds beyond the checkout's files is the study's five places alone.
    extra = {
        path
        for path in repo.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and str(path.relative_to(repo)) not in tracked
    }
    assert len(written) == len(doc_places()) == 5
    assert {next(w for w in written if path.is_relative_to(w)) for path in extra} == set(written)


def test_the_new_study_runs_end_to_end_and_gets_its_page(scratch_run):
    _, _, run, reports, done = scratch_run
    cells = sorted((run / STUDY).glob("*/cell.json"))
    assert [path.parent.name for path in cells] == ["cpp-c2-r1"]
    cell = json.loads(cells[0].read_text())
    assert cell["status"] in ("ok", "bound"), cell["error"]
    # Real ghz: its raw report is there and counted calls.
    assert (run / STUDY / "cpp-c2-r1" / "ghz.json.gz").is_file() or (
        run / STUDY / "cpp-c2-r1" / "ghz.json"
    ).is_file()
    # Its record says it uses ghz: the run calibrated first, and ran nothing else.
    assert (run / "calibration.json").is_file()
    assert sorted(p.name for p in run.iterdir() if p.is_dir() and p.name != "hosts") == [
        "calibration",
        STUDY,
    ]
    assert f"{STUDY} 1 cells" in done.stdout
    page = (reports / f"{STUDY}.html").read_text()
    assert "cpp" in page and "req/s" in page
    assert (reports / "index.html").is_file()
