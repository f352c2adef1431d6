"""Calibration picks the faster ghz from real calibration cells and records why."""

import json
import shutil

import pytest

from perflab.calibration import calibrate, write_calibration
from perflab.parsers import parse_ghz, read_raw_text
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"


def measured_rps(cell_dir):
    path = cell_dir / "ghz.json"
    return next(m.value for m in parse_ghz(read_raw_text(path), path) if m.metric == "rps")


def test_the_faster_version_wins_and_its_rate_is_the_ceiling(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    rates = {
        json.loads((d / "cell.json").read_text())["spec"]["load"]["ghz_version"]: measured_rps(d)
        for d in (run / "calibration").iterdir()
    }
    result = write_calibration(run)
    assert result.ghz_version == max(rates, key=rates.get)
    assert result.ceiling_rps == pytest.approx(max(rates.values()))
    assert "vs ghz" in result.reason  # the loser is named with its rate
    assert json.loads((run / "calibration.json").read_text())["ghz_version"] == result.ghz_version


def test_no_successful_calibration_cell_is_an_error_naming_the_folder(tmp_path):
    (tmp_path / "calibration").mkdir()
    with pytest.raises(RuntimeError, match="no successful calibration cell"):
        calibrate(tmp_path)
