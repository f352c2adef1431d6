"""Each inventory/group_vars/all/<study>.yml against its study's declared matrix record.

Every key of perflab_matrix_<study>, and of each profile's overrides in
perflab_profiles_<study>, must be declared in perflab/studies/<study>/matrix.py's `Matrix`,
and every value, with the overrides laid over the matrix, of the declared kind.
"""

import importlib
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from perflab.contract.knobs import MatrixError, knobs, validate
from perflab.host.impls import discover
from perflab.studies import study_ids
from tests.conftest import GROUP_VARS, REPO, resolve_group_vars

KNOWN = set(discover(REPO / "servers"))


def record(study: str) -> type:
    return importlib.import_module(f"perflab.studies.{study}.matrix").Matrix


def group_vars_problems(study: str, path: Path) -> list[str]:
    """What in `path` its study's record refuses: one line per refused matrix or profile."""
    data = yaml.safe_load(path.read_text())
    matrix = resolve_group_vars(data[f"perflab_matrix_{study}"])
    profiles = resolve_group_vars(data.get(f"perflab_profiles_{study}") or {})
    declared = knobs(record(study))
    problems = []
    for profile, overrides in {"(no profile)": {}, **profiles}.items():
        undeclared = sorted(set(overrides or {}) - set(declared))
        if undeclared:
            problems.append(f"perflab_profiles_{study}.{profile}: undeclared {undeclared}")
        try:
            validate(
                record(study), f"perflab_matrix_{study}", {**matrix, **(overrides or {})}, KNOWN
            )
        except MatrixError as exc:
            problems.append(f"{profile}: {exc}")
    return problems


@pytest.mark.parametrize("study", study_ids())
def test_every_group_vars_matrix_and_profile_matches_its_record(study):
    assert group_vars_problems(study, GROUP_VARS / f"{study}.yml") == []


@pytest.mark.parametrize("study", study_ids())
def test_every_key_is_declared_with_a_comment(study):
    for name, declared in knobs(record(study)).items():
        assert declared.comment.strip(), f"{study}.{name}: no comment"
        assert "\n" not in declared.comment, f"{study}.{name}: comment of more than one line"
    assert [item.name for item in fields(record(study))] == list(knobs(record(study)))


def rewritten(tmp_path: Path, study: str, change) -> Path:  # noqa: ANN001 - edits the YAML
    data = yaml.safe_load((GROUP_VARS / f"{study}.yml").read_text())
    change(data)
    path = tmp_path / f"{study}.yml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("study", "change", "named"),
    [
        (
            "orders",
            lambda d: d["perflab_matrix_orders"].update(concurency=[1]),
            "perflab_matrix_orders: unknown key(s) ['concurency']",
        ),
        (
            "hello",
            lambda d: d["perflab_profiles_hello"]["smoke"].update(repeat=1),
            "perflab_profiles_hello.smoke: undeclared ['repeat']",
        ),
        (
            "watch",
            lambda d: d["perflab_matrix_watch"].update(clients="25"),
            "perflab_matrix_watch.clients",
        ),
        (
            "throughput",
            lambda d: d["perflab_profiles_throughput"]["quick"].update(timeout_s="300"),
            "quick: perflab_matrix_throughput.timeout_s",
        ),
        (
            "aws_io",
            lambda d: d["perflab_profiles_aws_io"]["quick"]["latency_overrides"][
                "seed_far_s3"
            ].update(repeats=2.5),
            "perflab_matrix_aws_io.latency_overrides.seed_far_s3.repeats",
        ),
        (
            "pyclients",
            lambda d: d["perflab_matrix_pyclients"]["seed_loops"].update(stream_10=True),
            "perflab_matrix_pyclients.seed_loops.stream_10",
        ),
    ],
)
def test_a_file_with_an_undeclared_key_or_a_wrong_type_is_refused(tmp_path, study, change, named):
    problems = group_vars_problems(study, rewritten(tmp_path, study, change))
    assert problems, "the rewritten file passed"
    assert any(named in problem for problem in problems), problems
