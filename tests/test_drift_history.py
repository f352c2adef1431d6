"""The margin from the machine's A/A history (perflab.analysis.drift_history): its random
effects against statsmodels, which runs count, and a real run judged with and without it."""

import json
import math
import random
import statistics
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import combine_effects

from perflab.analysis.drift_history import (
    MIN_RUNS,
    READINGS_HISTORY,
    AaSeries,
    HistoryError,
    machine_of,
    predict,
    read_history,
    tau2_dersimonian_laird,
)
from perflab.analysis.noise import noise_floor
from perflab.analysis.published import reference_claims
from perflab.analysis.replication import history_clause
from perflab.analysis.run import read
from perflab.analysis.sites import load_readings
from perflab.analysis.verdicts import MIN_MARGIN
from perflab.cli import claim_frame_hooks

REPO = Path(__file__).resolve().parents[1]
REFERENCE_RUN = REPO / "data" / "20261128T010419Z-quick"
HOSTS = {"localhost": {"cpu_model": "AMD EPYC", "cpus": 2, "kernel": "6.18.44-fc-v669"}}


def runs_of(drifts: list[float], rounds: int = 5, sd: float = 0.1, seed: int = 3) -> list:
    rng = random.Random(seed)
    return [
        (tuple(rng.gauss(drift, sd) for _ in range(rounds)), f"2026-11-2{i}T00:00:00Z")
        for i, drift in enumerate(drifts)
    ]


def test_between_boot_variance_and_mean_match_statsmodels():
    runs = runs_of([0.0, 0.2, -0.15, 0.05, 0.3, -0.1])
    means = [statistics.fmean(logs) for logs, _ in runs]
    variances = [statistics.variance(logs) / len(logs) for logs, _ in runs]
    theirs = combine_effects(np.array(means), np.array(variances), method_re="dl")
    assert theirs.tau2 > 0
    assert tau2_dersimonian_laird(means, variances) == pytest.approx(theirs.tau2, rel=1e-9)
    mine = predict(runs)
    assert mine.drift == pytest.approx(theirs.mean_effect_re, rel=1e-9)
    assert mine.drift_se == pytest.approx(theirs.sd_eff_w_re, rel=1e-9)
    assert mine.tau == pytest.approx(math.sqrt(theirs.tau2))


def test_runs_that_agree_leave_the_margin_at_the_floor_and_a_drifting_boot_widens_it():
    # Each run noisy within (0.1 a round), every run's mean the same: no drift between boots.
    alike = [((-0.1, 0.0, 0.1, 0.05, -0.05), f"2026-11-2{i}") for i in range(10)]
    agreeing = predict(alike)
    assert agreeing.tau == 0.0 and agreeing.margin < MIN_MARGIN
    drifting = predict([*alike[:9], ((0.5, 0.6, 0.7, 0.65, 0.55), "2026-11-29")])
    assert drifting.tau > 0.1 and drifting.margin > 2 * MIN_MARGIN


def test_too_few_runs_predict_nothing_and_a_one_round_run_does_not_count():
    runs = runs_of([0.0] * (MIN_RUNS - 1))
    assert predict(runs) is None
    assert predict([*runs, ((0.1,), "2026-11-29T00:00:00Z")]) is None
    assert predict([*runs, ((0.1, 0.0), "2026-11-29T00:00:00Z")]).runs == MIN_RUNS


def test_ignoring_boots_is_narrower_when_boots_differ():
    runs = runs_of([0.0, 0.2, -0.2, 0.1, -0.1, 0.25])
    assert predict(runs, between_boots=False).margin < predict(runs).margin


def test_a_series_key_leaves_timing_knobs_out_but_keeps_what_is_compared():
    base = {"implementation": "grpcio_sync_w10", "scenario": "steady", "client": "ghz"}
    one = AaSeries("hello", {**base, "warmup_s": "1", "duration_s": "3"}, "rps", (0.0,))
    other = AaSeries("hello", {**base, "warmup_s": "0.25"}, "rps", (0.1,))
    seed = AaSeries("hello", {**base, "method": "seed"}, "rps", (0.1,))
    assert one.key("localhost") == other.key("localhost")
    assert one.key("localhost") != seed.key("localhost")
    assert one.key("localhost") != one.key("netns")


def write_readings(folder: Path, run_id: str, start: str, hosts: dict, topology="localhost"):
    series = [{"study": "hello", "coordinates": {"a": "1"}, "metric": "rps", "log_ratios": [0, 1]}]
    document = {
        "run_id": run_id,
        "start": start,
        "topology": topology,
        "hosts": hosts,
        "aa_series": series,
    }
    (folder / f"{run_id}.json").write_text(json.dumps(document))


def test_the_history_is_earlier_runs_of_the_same_machine_and_topology(tmp_path):
    other_build = {"localhost": {**HOSTS["localhost"], "kernel": "6.18.44-fc-v657"}}
    write_readings(tmp_path, "earlier", "2026-11-27T00:00:00Z", other_build)
    write_readings(tmp_path, "later", "2026-11-29T00:00:00Z", HOSTS)
    write_readings(tmp_path, "netns", "2026-11-27T00:00:00Z", HOSTS, "netns")
    other_cpu = {"localhost": {**HOSTS["localhost"], "cpu_model": "Intel Xeon"}}
    write_readings(tmp_path, "xeon", "2026-11-27T00:00:00Z", other_cpu)
    found = read_history(tmp_path, machine_of(HOSTS), "localhost", "2026-11-28T00:00:00Z")
    assert [run.run_id for run in found] == ["earlier"]


def test_a_malformed_readings_file_is_named(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(HistoryError, match="broken.json"):
        read_history(tmp_path, machine_of(HOSTS), "localhost", "2026-11-28T00:00:00Z")


def kinds_of(history_dir: Path | None):
    run = read(REFERENCE_RUN, claim_frame_hooks(), history_dir)
    claims = reference_claims(REPO / "data" / "reference", run.seed_rows_hooks)
    return {(kind.client, kind.configuration): kind for kind in noise_floor(run, claims).kinds}


def test_the_reference_run_takes_its_margins_from_the_history_where_it_has_one():
    own, with_history = kinds_of(None), kinds_of(READINGS_HISTORY)
    assert not any(kind.history for kind in own.values())
    predicted = {
        (configuration, metric): prediction
        for configuration, kind in with_history.items()
        for metric, prediction in kind.history.items()
    }
    # This machine (AMD EPYC) had 6 earlier localhost runs with A/A series when written.
    assert len(predicted) >= 5
    for (configuration, metric), prediction in predicted.items():
        kind = with_history[configuration]
        assert prediction.runs >= MIN_RUNS
        assert kind.per_metric[metric] == prediction.margin
        assert "A/A history" in kind.judging(metric).source
        # Earlier runs and this one: the earliest began before this run did.
        assert prediction.earliest < "2026-11-28T01"
    steady = next(key for key in with_history if key[1].startswith("grpcio_sync_w10, steady,"))
    assert with_history[steady].per_metric["rps"] < own[steady].per_metric["rps"]
    unpredicted = [
        (c, m) for c, kind in with_history.items() for m in kind.per_metric if m not in kind.history
    ]
    for key, metric in unpredicted:
        assert with_history[key].per_metric[metric] == own[key].per_metric[metric]


def test_a_readings_file_keeps_its_aa_series():
    readings = load_readings(READINGS_HISTORY / "20261128T010419Z-quick.json")
    assert readings.aa_series
    first = readings.aa_series[0]
    assert {"study", "coordinates", "metric", "log_ratios"} <= set(first)
    assert len(first["log_ratios"]) >= 3


def test_the_margin_sentence_says_where_the_history_set_a_margin():
    own, with_history = kinds_of(None), kinds_of(READINGS_HISTORY)
    said = history_clause(noise_floor_of(with_history))
    assert "prediction interval" in said and "runs of this machine" in said
    alone = history_clause(noise_floor_of(own))
    assert "prediction interval" not in alone and "far end of its A/A ratio" in alone


def noise_floor_of(kinds: dict):
    from perflab.analysis.noise import NoiseFloor

    return NoiseFloor(tuple(kinds.values()))


def test_a_run_still_measuring_is_placed_by_its_hosts_and_first_cell(tmp_path):
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "runs" / "hello_fixture", folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    placed = read(folder, history_dir=tmp_path).history_place()
    assert placed[1:] == ("localhost", manifest["start"])
    (folder / "manifest.json").unlink()
    measuring = read(folder, history_dir=tmp_path)
    assert measuring.history_place() is None
    measuring.measuring_topology = "localhost"
    machine, topology, start = measuring.history_place()
    assert (machine, topology) == placed[:2]
    assert start == min(str(cell.record["start"]) for cell in measuring.cells)
