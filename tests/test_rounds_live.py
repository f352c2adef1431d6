"""The smoke profile's A/A cells run through the real runner, in round order, and their
drift becomes the noise floor and the margin of the run's verdicts."""

from __future__ import annotations

import pytest

from perflab.analysis.replication import index_html, replicate
from perflab.analysis.run import read as read_folder
from perflab.analysis.verdicts import MIN_MARGIN
from perflab.cli import claim_frame_hooks
from perflab.contract.cell import AA_PARAM
from perflab.contract.matrix import expand
from perflab.host.impls import discover
from perflab.host.runner import CellRunner
from perflab.studies import get_study
from tests.conftest import REPO, study_vars
from tests.fixtures_live import GHZ_VERSION

# Starts real servers, ghz and Python clients.
pytestmark = pytest.mark.live

RUN_ID = "aa-live"


def smoke_cells(study: str) -> list:
    matrix, profiles = study_vars(study)
    return expand(
        RUN_ID, get_study(study), matrix, profiles, "smoke", set(discover(REPO / "servers"))
    )


def test_aa_cells_run_and_set_the_margin(host_paths, tmp_path):
    runner = CellRunner(host_paths, tmp_path)
    for study in ("hello", "pyclients"):
        twins = [cell for cell in smoke_cells(study) if AA_PARAM in cell.params]
        # One pair per method (steady and the seed's), each copy once.
        assert sorted(cell.params[AA_PARAM] for cell in twins) == ["a", "a", "b", "b"]
        for cell in twins:
            if cell.load.kind == "ghz":
                cell.load.ghz_version = GHZ_VERSION  # this run has no calibration to pick it
            record = runner.run(cell)
            assert record is not None and record.status in ("ok", "bound"), record.error
    replication = replicate(
        read_folder(tmp_path / RUN_ID, claim_frame_hooks()), REPO / "data" / "reference"
    )
    kinds: dict[str, list] = {}
    for kind in replication.noise.kinds:
        kinds.setdefault(kind.study, []).append(kind)
    assert {study: len(found) for study, found in kinds.items()} == {"hello": 2, "pyclients": 2}
    assert sorted(kind.coordinates["scenario"] for kind in kinds["hello"]) == [
        "seed_n200",
        "steady",
    ]
    assert sorted(kind.coordinates["method"] for kind in kinds["pyclients"]) == ["seed", "steady"]
    for study, found in kinds.items():
        widest = max(kind.floor for kind in found)
        assert replication.by_study[study].margin == pytest.approx(max(MIN_MARGIN, widest))
    # Each method's claims on hello take their own pair's margin on their metric.
    for verdict in replication.verdicts:
        if verdict.claim.study == "hello" and verdict.claim.kind == "ratio":
            scenario = {"seed": "seed_n200", "steady": "steady"}[verdict.claim.method]
            (own,) = (k for k in kinds["hello"] if k.coordinates["scenario"] == scenario)
            margin = max(MIN_MARGIN, own.per_metric[verdict.claim.metric])
            assert verdict.judging.margin == pytest.approx(margin)
    assert "Noise floor" in index_html(replication, {})
    for found in kinds.values():
        for kind in found:
            print(f"{kind.kind()} ({kind.configuration}): floor {kind.floor:.1%}")
    print(replication.margin_sentence())
