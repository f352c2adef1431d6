"""Hostile or mistaken input is refused in one line naming the value and what is accepted,
before anything is created: run ids (make, playbooks, the perflab CLI), studies, profiles,
and the run folder a report is rendered from."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from perflab import runargs
from perflab.cli import parser
from perflab.contract.runid import RUN_ID_PATTERN, validate_run_id
from tests.conftest import REPO
from tests.test_ansible import ansible

SAFE = ["20261123T101500Z-quick", "20261123-reference-netns", "my_run.v2", "A"]
HOSTILE = [
    "../../tmp/evil",
    "..",
    ".hidden",
    "-rf",
    "a/b",
    "a..b",
    "",
    "x" * 129,
    "a b",
    "a\nb",
    "run\n",
    "$(reboot)",
    "run;id",
]


@pytest.mark.parametrize("value", SAFE)
def test_safe_run_ids_pass(value: str) -> None:
    assert validate_run_id(value) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_run_ids_are_refused_in_one_line(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate_run_id(value)
    message = str(refused.value)
    assert repr(value) in message and RUN_ID_PATTERN in message
    assert "\n" not in message.replace(repr(value), "")


def test_run_start_asserts_the_same_pattern() -> None:
    [play] = [
        play
        for play in yaml.safe_load((REPO / "playbooks" / "run_start.yml").read_text())
        if "tasks" in play
    ]
    assert play["vars"]["run_start_run_id_pattern"] == RUN_ID_PATTERN
    asserted = [
        task
        for task in play["tasks"]
        if "ansible.builtin.assert" in task
        and "run_start_run_id_pattern" in str(task["ansible.builtin.assert"]["that"])
    ]
    assert len(asserted) == 1


def test_known_profiles_are_the_matrix_profiles() -> None:
    from perflab.contract.runid import RUN_PROFILES

    assert runargs.RUN_PROFILES == RUN_PROFILES


def test_the_known_studies_are_the_registry_s_but_its_pseudo_studies() -> None:
    from perflab.studies import registry

    known = runargs.known()
    assert known["studies"] == [s for s, study in registry().items() if not study.pseudo]
    assert "hello" in known["studies"] and "calibration" not in known["studies"]
    # Every record the playbooks read, calibration's among them.
    assert set(known["records"]) == set(registry())
    assert known["records"]["calibration"]["uses_ghz"] is True


@pytest.mark.parametrize(
    ("run_id", "profile", "studies", "message"),
    [
        ("../x", "quick", [], "run id '../x' refused"),
        ("", "fastest", [], "profile 'fastest' refused: known profiles are smoke, quick, full"),
        ("", "quick", ["hello", "nonexistent"], "study 'nonexistent' refused: known studies are"),
    ],
)
def test_run_args_refusals_name_the_value_and_the_choices(
    run_id: str, profile: str, studies: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match="refused") as refused:
        runargs.check_run_args(run_id, profile, studies)
    assert message in str(refused.value)
    if studies:
        assert "hello" in str(refused.value)  # the known studies are listed


def test_run_dir_must_exist_and_be_named_by_a_run_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist; give RUN=data/<run_id>"):
        runargs.check_run_dir(str(tmp_path / "nope"))
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ValueError, match="does not exist"):
        runargs.check_run_dir(str(tmp_path / "a-file"))
    with pytest.raises(ValueError, match="its name is not a run id"):
        runargs.check_run_dir(str(tmp_path / ".."))
    (tmp_path / "run-1").mkdir()
    assert runargs.check_run_dir(str(tmp_path / "run-1")) == tmp_path / "run-1"


def test_cli_refuses_a_hostile_run_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parser().parse_args(["matrix", "--study=hello", "--profile=quick", "--run-id=../x"])
    assert exited.value.code == 2
    assert "run id '../x' refused" in capsys.readouterr().err
    with pytest.raises(argparse.ArgumentTypeError):
        from perflab.cli import run_id_arg

        run_id_arg("-rf")


# --- make and the playbooks, for real --------------------------------------------------------
def make(*args: str) -> subprocess.CompletedProcess[str]:
    """make with the playbook replaced by an echo: should a check ever let a bad value
    through, nothing is set up or run, and the echo shows it. The checks run on the system
    Python (make's PYTHON), as on a fresh machine."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MAKE")}
    return subprocess.run(
        ["make", "--no-print-directory", *args, "PLAYBOOK=echo PLAYBOOK-REACHED"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.iterdir()} if path.is_dir() else set()


@pytest.mark.live
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["RUN_ID=../../tmp/evil"], "run id '../../tmp/evil' refused: a run id matches"),
        (["RUN_ID=-rf"], "run id '-rf' refused"),
        (
            ["STUDIES=nonexistent"],
            "study 'nonexistent' refused: known studies are aws_io, capacity, hello, orders",
        ),
        (["PROFILE=fastest"], "profile 'fastest' refused: known profiles are smoke, quick, full"),
    ],
)
def test_make_run_refuses_before_anything_is_created(args: list[str], message: str) -> None:
    before_data, before_reports = tree(REPO / "data"), tree(REPO / "reports")
    evil = (REPO / "data" / "../../tmp/evil").resolve()
    existed = evil.exists()
    done = make("run", *args)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if not line.startswith("make: ***")]
    assert lines == [lines[0]] and message in lines[0], done.stderr
    assert "PLAYBOOK-REACHED" not in done.stdout and "Traceback" not in done.stderr
    assert tree(REPO / "data") == before_data and tree(REPO / "reports") == before_reports
    assert evil.exists() == existed


@pytest.mark.live
def test_make_run_with_good_values_reaches_the_playbook() -> None:
    # The control for the refusals above: the same command with safe values gets past the
    # checks to the (echoed) playbook, so a refusal there really is the check's doing.
    done = make("run", "RUN_ID=hostile-input-control", "STUDIES=hello", "PROFILE=smoke")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PLAYBOOK-REACHED playbooks/run_all.yml -e perflab_profile=smoke" in done.stdout
    assert "perflab_run_id=hostile-input-control" in done.stdout
    assert not (REPO / "data" / "hostile-input-control").exists()


@pytest.mark.live
@pytest.mark.parametrize("target", ["report", "lab"])
def test_make_report_and_lab_refuse_a_missing_run_folder(target: str) -> None:
    before = tree(REPO / "reports")
    done = make(target, "RUN=data/nope")
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if not line.startswith("make: ***")]
    assert lines == [
        "run folder 'data/nope' does not exist; give RUN=data/<run_id>, a readable "
        "run folder" + lines[0].split("a readable run folder", 1)[1]
    ]
    assert "Traceback" not in done.stdout + done.stderr
    assert tree(REPO / "reports") == before and not (REPO / "tmp" / "lab" / "nope").exists()


@pytest.mark.live
def test_perflab_report_cli_refuses_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab",
            "report",
            "--run-dir",
            str(tmp_path / "nope"),
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        line for line in done.stderr.strip().splitlines() if "does not exist; give RUN=" in line
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.live
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("perflab_run_id=../../tmp/evil", "run id '../../tmp/evil' refused: a run id matches"),
        ('{"perflab_studies": ["nonexistent"]}', "known studies are aws_io, capacity, hello"),
        ("perflab_profile=fastest", "known profiles are smoke, quick, full"),
    ],
)
def test_run_start_refuses_before_anything_runs(extra: str, message: str, tmp_path: Path) -> None:
    done = ansible(
        "-i",
        "inventory/localhost.yml",
        "playbooks/run_all.yml",
        "-e",
        extra,
        "-e",
        f"perflab_data_dir={tmp_path}",
    )
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
    assert "Validate and expand each study's matrix" not in done.stdout
    assert list(tmp_path.iterdir()) == []
