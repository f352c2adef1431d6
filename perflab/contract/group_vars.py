"""A study's matrix and profiles as Ansible reads them from inventory/group_vars/all, for
the commands that run without Ansible (perflab ab) and the tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

GROUP_VARS = Path("inventory/group_vars/all")
_WHOLE_VARIABLE = re.compile(r"\{\{\s*(perflab_\w+)\s*\}\}")


def resolve(value: Any, group_vars: Path = GROUP_VARS) -> Any:
    """A value whose whole text is "{{ perflab_<name> }}" replaced by that group variable
    (e.g. the calibration matrix's ghz_versions, kept once in ghz.yml), as Ansible would."""
    if isinstance(value, dict):
        return {key: resolve(item, group_vars) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, group_vars) for item in value]
    match = _WHOLE_VARIABLE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return value
    for path in sorted(group_vars.glob("*.yml")):
        found = yaml.safe_load(path.read_text()) or {}
        if match.group(1) in found:
            return resolve(found[match.group(1)], group_vars)
    raise KeyError(f"{value}: no such variable in {group_vars}")


def study_vars(study: str, group_vars: Path = GROUP_VARS) -> tuple[dict, dict]:
    """perflab_matrix_<study> and perflab_profiles_<study>."""
    path = group_vars / f"{study}.yml"
    if not path.is_file():
        raise KeyError(f"{path}: no such file (is {study!r} a study?)")
    data = yaml.safe_load(path.read_text()) or {}
    if f"perflab_matrix_{study}" not in data:
        raise KeyError(f"{path}: no perflab_matrix_{study}")
    return (
        resolve(data[f"perflab_matrix_{study}"], group_vars),
        resolve(data.get(f"perflab_profiles_{study}", {}), group_vars),
    )
