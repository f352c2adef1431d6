"""Calibration picks the faster ghz from real calibration cells and records why."""

import json
import shutil

import pytest

from perflab.contract.parsers import parse_ghz, read_raw_text
from perflab.studies.calibration.ceiling import calibrate, write_calibration
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


def test_a_level_on_more_connections_is_its_own_and_old_cells_ran_one(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    cells = sorted((run / "calibration").iterdir(), key=measured_rps)
    fastest = cells[-1] / "cell.json"
    cell = json.loads(fastest.read_text())
    assert "connections" not in cell["spec"]["load"]  # recorded before connections was a key
    assert calibrate(run).ceiling_connections == 1
    cell["spec"]["load"]["connections"] = 4
    fastest.write_text(json.dumps(cell))
    result = calibrate(run)
    assert result.ceiling_connections == 4
    assert result.ceiling_rps == pytest.approx(measured_rps(cells[-1]))
    concurrency = cell["spec"]["load"]["concurrency"]
    assert f"{concurrency}x4" in result.rps_by_version[cell["spec"]["load"]["ghz_version"]]
    assert "4 connections" in result.reason
