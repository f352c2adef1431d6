"""`run_all.yml` end to end with the smoke profile into a scratch data folder: setup,
calibration, every study's smoke cells, collect, report. Then the same run id again:
every complete cell is skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import study_vars
from tests.test_ansible import ansible

# Runs the whole playbook: setup, cells, collect, render.
pytestmark = pytest.mark.live

RUN_ID = "e2e-smoke"


def smoke_args(run_id: str, root: Path) -> list[str]:
    """run_all.yml on localhost in the smoke profile, writing data/ and reports/ under root."""
    return [
        "-i",
        "inventory/localhost.yml",
        "playbooks/run_all.yml",
        "-e",
        "perflab_profile=smoke",
        "-e",
        f"perflab_run_id={run_id}",
        "-e",
        f"perflab_data_dir={root / 'data'}",
        "-e",
        f"perflab_reports_dir={root / 'reports'}",
    ]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    args = smoke_args(RUN_ID, root)
    first = ansible(*args, timeout=1800)
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr[-3000:]
    return root, args, first


def test_smoke_run_writes_the_data_contract(smoke_run):
    root, _, first = smoke_run
    run = root / "data" / RUN_ID
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["profile"] == "smoke" and manifest["run_id"] == RUN_ID
    assert manifest["calibration"]["ceiling_rps"] > 0
    host = next(iter(manifest["hosts"].values()))
    assert host["cpus"] >= 1 and host["versions"]["ghz_installed"]
    hello = study_vars("hello")[0]["implementations"]
    # Two copies of each A/A configuration (one per method the study runs).
    aa = 2 * len(study_vars("hello")[0]["aa_pair"])
    cells = sorted((run / "hello").glob("*/cell.json"))
    # One smoke cell per server, the A/A pairs that measure the run's noise floor, and the
    # cells the adaptive look gave the open claims (one repeat decides nothing: every claim
    # is open, the cheapest get a second round within smoke's minute).
    (look,) = json.loads((run / "adaptive.json").read_text())["taken"]
    assert look["open_claims"] and look["cells"], look
    added = [name for name in look["cells"] if name.startswith("hello/")]
    assert all(name.endswith("-r2") and (run / name / "cell.json").is_file() for name in added)
    assert len(cells) == len(hello) + aa + len(added)
    # The look gives its rounds to the A/A copies of the claims it chose too (each look is
    # judged with its own noise floor): the run's first round of them, and the look's.
    added_aa = [name for name in added if name.split("/")[1].startswith("aa-")]
    assert added_aa, added
    assert len([path for path in cells if path.parent.name.startswith("aa-")]) == aa + len(added_aa)
    for path in cells:
        cell = json.loads(path.read_text())
        assert cell["status"] in ("ok", "bound"), (path, cell["error"])
    # Progress: Ansible labelled every cell with its position; the look said what it gave.
    assert f"[{len(hello) + aa}/{len(hello) + aa}] hello/" in first.stdout
    assert "look 1 of 1: " in first.stdout and "claim(s) open" in first.stdout
    # The matrices are validated and the run announced once, not again by every study.
    assert first.stdout.count(f"run {RUN_ID}, profile smoke") == 1
    # Once calibrated, the run said the rest at this host's pace, to Ansible and the log.
    paced = "after calibration, at this host's pace (calibration ceiling"
    assert paced in first.stdout
    assert f"estimate: {paced}" in (run / "progress.log").read_text()
    assert set(manifest["rounds"]["seeds"]) >= {"hello", "calibration"}
    assert (root / "reports" / RUN_ID / "index.html").is_file()
    index = (root / "reports" / RUN_ID / "index.html").read_text()
    assert "Noise floor" in index and "Adaptive rounds: after the base rounds" in index
    assert (root / "reports" / RUN_ID / "hello.html").is_file()


def test_rerun_with_the_same_run_id_skips_complete_cells(smoke_run):
    root, args, _ = smoke_run
    run = root / "data" / RUN_ID
    before = {p: p.read_text() for p in run.glob("*/*/cell.json")}
    again = ansible(*args, timeout=1800)
    assert again.returncode == 0, again.stdout[-4000:]
    assert {p: p.read_text() for p in run.glob("*/*/cell.json")} == before
    # Each round's runner process says so per cell: nothing measured again, nothing changed.
    assert "complete already, skipped" in again.stdout
    assert ": failed" not in again.stdout
