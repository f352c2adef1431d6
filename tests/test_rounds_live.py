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
        assert [cell.params[AA_PARAM] for cell in twins] in (["a", "b"], ["b", "a"])
        for cell in twins:
            if cell.load.kind == "ghz":
                cell.load.ghz_version = GHZ_VERSION  # this run has no calibration to pick it
            record = runner.run(cell)
            assert record is not None and record.status in ("ok", "bound"), record.error
    replication = replicate(
        read_folder(tmp_path / RUN_ID, claim_frame_hooks()), REPO / "data" / "reference"
    )
    kinds = {kind.study: kind for kind in replication.noise.kinds}
    assert set(kinds) == {"hello", "pyclients"}
    assert all(kind.rounds == 1 and kind.floor >= 0 for kind in kinds.values())
    for study, kind in kinds.items():
        assert replication.by_study[study].margin == pytest.approx(max(MIN_MARGIN, kind.floor))
    assert "Noise floor" in index_html(replication, {})
    for kind in kinds.values():
        print(f"{kind.kind()}: floor {kind.floor:.1%} on {kind.widest_metric}")
    print(replication.margin_sentence())
