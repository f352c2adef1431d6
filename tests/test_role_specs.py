"""Every role says what it takes: meta/argument_specs.yml declares each knob of its
defaults/main.yml (type and description; Ansible checks the types when the role starts),
and an input without a default is required. A role gets its inputs as variables from the
playbook that calls it, never by reading another play's state (hostvars['localhost'])."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

ROLES = sorted(path.parents[1] for path in (REPO / "roles").glob("*/tasks/main.yml"))
# hostvars['localhost'] or hostvars["localhost"] or hostvars.localhost: the controller play's facts.
ANOTHER_PLAYS_STATE = re.compile(r"""hostvars\s*(\[\s*['"]localhost['"]\s*\]|\.localhost)""")


def spec_problems(defaults: dict, specs: dict | None) -> list[str]:
    """What a role's argument specs get wrong about its defaults; [] when nothing."""
    if specs is None:
        return ["no meta/argument_specs.yml"] if defaults else []
    options = specs.get("argument_specs", {}).get("main", {}).get("options") or {}
    problems = [
        f"{key}: in defaults/main.yml, not declared" for key in defaults if key not in options
    ]
    for key, option in options.items():
        if not option.get("type") or not option.get("description"):
            problems.append(f"{key}: needs a type and a description")
        if key not in defaults and not option.get("required"):
            problems.append(f"{key}: no default and not required")
    return problems


def read_yaml(path: Path) -> dict | None:
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else None


@pytest.mark.parametrize("role", ROLES, ids=lambda path: path.name)
def test_a_role_declares_every_input(role):
    defaults = read_yaml(role / "defaults" / "main.yml") or {}
    assert defaults, f"{role.name}: a role with no knob at all? give it defaults/main.yml"
    assert spec_problems(defaults, read_yaml(role / "meta" / "argument_specs.yml")) == []


def test_a_knob_left_undeclared_is_named():
    specs = {
        "argument_specs": {
            "main": {
                "options": {
                    "role_dir": {"type": "str", "description": "where"},
                    "role_cells": {"type": "list"},
                    "role_run": {"type": "str", "description": "the run"},
                }
            }
        }
    }
    assert spec_problems({"role_dir": "/x", "role_port": 1, "role_cells": []}, specs) == [
        "role_port: in defaults/main.yml, not declared",
        "role_cells: needs a type and a description",
        "role_run: no default and not required",
    ]
    assert spec_problems({"role_dir": "/x"}, None) == ["no meta/argument_specs.yml"]


@pytest.mark.parametrize("role", ROLES, ids=lambda path: path.name)
def test_a_role_reads_no_other_play_s_state(role):
    readers = [
        str(path.relative_to(REPO))
        for path in sorted(role.rglob("*.yml"))
        if ANOTHER_PLAYS_STATE.search(path.read_text())
    ]
    assert readers == []


def test_the_state_pattern_sees_each_spelling():
    for text in (
        "hostvars['localhost']['perflab_run']",
        'hostvars[ "localhost" ]',
        "hostvars.localhost",
    ):
        assert ANOTHER_PLAYS_STATE.search(text), text
    assert not ANOTHER_PLAYS_STATE.search("hostvars[groups['servers'][0]]['perflab_data_address']")


STUDY_PLAYBOOKS = sorted(
    path for path in (REPO / "playbooks").glob("*.yml") if "study_run_study:" in path.read_text()
)


@pytest.mark.parametrize("playbook", STUDY_PLAYBOOKS, ids=lambda p: p.stem)
def test_every_study_playbook_passes_the_runner_role_its_required_inputs(playbook):
    plays = yaml.safe_load(playbook.read_text())
    assert study_run_calls(plays)
    assert not missing_study_run_inputs(plays)


def test_no_playbook_reads_the_controller_play_s_state():
    readers = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "playbooks").rglob("*.yml"))
        if ANOTHER_PLAYS_STATE.search(path.read_text())
    ]
    assert readers == []


def study_run_calls(plays: list) -> list[dict]:
    """The vars of every call of study_run: `role:` entries and include_role tasks, blocks
    included."""
    calls = []
    for play in plays:
        calls += [
            role.get("vars", {})
            for role in play.get("roles", [])
            if isinstance(role, dict) and role.get("role") == "study_run"
        ]
        tasks = list(play.get("tasks", []))
        while tasks:
            task = tasks.pop()
            tasks += task.get("block", [])
            if task.get("ansible.builtin.include_role", {}).get("name") == "study_run":
                calls.append(task.get("vars", {}))
    return calls


def missing_study_run_inputs(plays: list) -> list[str]:
    """Required study_run inputs a playbook's calls of the role leave out."""
    spec = yaml.safe_load((REPO / "roles/study_run/meta/argument_specs.yml").read_text())
    required = {
        k for k, v in spec["argument_specs"]["main"]["options"].items() if v.get("required")
    }
    return [name for call in study_run_calls(plays) for name in sorted(required - set(call))]


def test_the_input_check_names_a_missing_input():
    plays = [{"roles": [{"role": "study_run", "vars": {"study_run_study": "x"}}]}]
    assert missing_study_run_inputs(plays) == ["study_run_cells", "study_run_id"]
    included = {
        "ansible.builtin.include_role": {"name": "study_run"},
        "vars": {"study_run_id": "r", "study_run_cells": []},
    }
    plays = [{"tasks": [{"block": [included]}]}]
    assert missing_study_run_inputs(plays) == ["study_run_study"]
