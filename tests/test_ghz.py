"""ghz: one list of versions for the role that installs them and the calibration that
measures them, every command line carries the cell's HTTP/2 connection count, and a
warm-up's report becomes the counts its cell records."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import yaml

from perflab.contract.cell import LoadSpec
from perflab.host.ghz import ghz_argv, warmup_note, warmup_summary
from tests.conftest import GROUP_VARS, REPO, study_vars

ONE_SOURCE = "{{ perflab_ghz_versions }}"


def test_installed_and_calibrated_ghz_versions_come_from_one_variable():
    role = yaml.safe_load((REPO / "roles" / "ghz" / "defaults" / "main.yml").read_text())
    calibration = yaml.safe_load((GROUP_VARS / "calibration.yml").read_text())
    # Both refer to the variable rather than holding a list: they cannot diverge.
    assert role["ghz_versions"] == ONE_SOURCE
    assert calibration["perflab_matrix_calibration"]["ghz_versions"] == ONE_SOURCE
    versions = yaml.safe_load((GROUP_VARS / "ghz.yml").read_text())["perflab_ghz_versions"]
    assert versions and all(isinstance(v, str) and v.count(".") == 2 for v in versions)
    assert study_vars("calibration")[0]["ghz_versions"] == versions
    # The variable is defined once across the group variables.
    defined = [
        path.name
        for path in GROUP_VARS.glob("*.yml")
        if "perflab_ghz_versions" in (yaml.safe_load(path.read_text()) or {})
    ]
    assert defined == ["ghz.yml"]


def load(**changes: object) -> LoadSpec:
    spec = LoadSpec(
        kind="ghz",
        proto="hello.proto",
        call="helloworld.Greeter.SayHello",
        concurrency=50,
        duration_s=2,
    )
    for key, value in changes.items():
        setattr(spec, key, value)
    return spec


def test_ghz_spreads_the_concurrency_over_the_cells_connections():
    args = ghz_argv(Path("ghz"), load(connections=5), Path("proto"), "h:1", 2, Path("o.json"))
    assert "--connections=5" in args and "--concurrency=50" in args
    default = ghz_argv(Path("ghz"), load(), Path("proto"), "h:1", 2, Path("o.json"))
    assert "--connections=1" in default  # ghz's own default, what the seeds ran, now on record


def test_a_warm_up_runs_at_its_own_concurrency_and_the_window_at_the_cells():
    capped = load(warmup_s=1, warmup_concurrency=10, connections=5)
    warm = ghz_argv(Path("ghz"), capped, Path("proto"), "h:1", 2, Path("w.json"), warmup=True)
    window = ghz_argv(Path("ghz"), capped, Path("proto"), "h:1", 2, Path("o.json"))
    assert "--concurrency=10" in warm and "--duration=1s" in warm
    assert "--concurrency=50" in window and "--connections=5" in window
    # Never more connections than the warm-up has workers for.
    one = load(warmup_s=1, warmup_concurrency=1, connections=5)
    assert "--connections=1" in ghz_argv(
        Path("ghz"), one, Path("proto"), "h:1", 2, Path("w.json"), warmup=True
    )
    uncapped = ghz_argv(Path("ghz"), load(warmup_s=1), Path("p"), "h:1", 2, Path("w"), True)
    assert "--concurrency=50" in uncapped


DATA = Path(__file__).parent / "data"


def test_an_answered_warm_up_records_its_calls_and_time_and_notes_nothing():
    report = json.loads(gzip.decompress((DATA / "ghz_real.json.gz").read_bytes()))
    load = LoadSpec(kind="ghz", proto="hello.proto", call="c", warmup_s=0.5)
    summary = warmup_summary(report, load)
    assert summary == {
        "configured_s": 0.5,
        "configured_calls": 0,
        "concurrency": 1,
        "seconds": round(report["total"] / 1e9, 3),
        "calls": report["count"],
        "ok": report["count"],
        "not_ok_by_code": {},
    }
    assert warmup_note(summary) == ""


def test_failed_warm_up_calls_are_counted_by_code_and_noted():
    """A real ghz report whose 20 calls met no server: discarded, but said."""
    report = json.loads((DATA / "ghz_all_unavailable.json").read_text())
    load = LoadSpec(kind="ghz", proto="hello.proto", call="c", warmup_total=20)
    summary = warmup_summary(report, load)
    assert summary["configured_calls"] == 20
    assert (summary["calls"], summary["ok"]) == (20, 0)
    assert summary["not_ok_by_code"] == {"Unavailable": 20}
    assert warmup_note(summary) == (
        "warm-up: 20 of 20 calls failed (20 Unavailable); discarded with the warm-up, "
        "as its answered calls are"
    )
