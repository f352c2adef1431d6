"""The measurement matrix: profiles, validation, and expansion into cells.

Each study's matrix lives in inventory/group_vars/all/<study>.yml as perflab_matrix_<study>,
with its profile overrides as perflab_profiles_<study>. Every value is checked here, before
anything runs; a value that makes no sense is refused with the key that holds it.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterable
from typing import Any

from perflab.cell import CellSpec

PROFILES = ("smoke", "quick", "full")


class MatrixError(ValueError):
    """A matrix value that makes no sense; the message names the key."""


def merged_study_config(
    study: str, config: dict[str, Any], profiles: dict[str, Any], profile: str
) -> dict[str, Any]:
    """A study's matrix with the chosen profile's overrides laid over it."""
    if profile not in PROFILES:
        raise MatrixError(f"perflab_profile: unknown profile {profile!r}; choose one of {PROFILES}")
    if not isinstance(config, dict) or not config:
        raise MatrixError(f"perflab_matrix_{study}: missing or empty")
    merged = copy.deepcopy(config)
    overrides = (profiles or {}).get(profile) or {}
    unknown = set(overrides) - set(merged)
    if unknown:
        raise MatrixError(f"perflab_profiles_{study}.{profile}: unknown key(s) {sorted(unknown)}")
    merged.update(copy.deepcopy(overrides))
    return merged


def require_positive_ints(key: str, values: Any) -> list[int]:
    if not isinstance(values, list) or not values:
        raise MatrixError(f"{key}: expected a non-empty list of positive integers, got {values!r}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise MatrixError(f"{key}: {value!r} is not a positive integer")
    return values


def require_positive_number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise MatrixError(f"{key}: {value!r} is not a positive number")
    return float(value)


def require_choice(key: str, values: Any, allowed: Iterable[str]) -> list[str]:
    allowed = list(allowed)
    if not isinstance(values, list) or not values:
        raise MatrixError(f"{key}: expected a non-empty list from {allowed}, got {values!r}")
    for value in values:
        if value not in allowed:
            raise MatrixError(f"{key}: unknown value {value!r}; choose from {allowed}")
    return values


def interleave_repeats(cells: list[CellSpec]) -> list[CellSpec]:
    """Repeat 1 of every cell, then repeat 2, ...: slow drift of the host spreads over all."""
    return sorted(cells, key=lambda cell: cell.repeat)


Expander = Callable[[str, dict[str, Any], set[str]], list[CellSpec]]


def expander(study: str) -> Expander:
    """perflab.studies.<study>.expand: adding a study adds a module, not a line here."""
    if not study.isidentifier():
        raise MatrixError(f"perflab_studies: {study!r} is not a study id")
    try:
        module = importlib.import_module(f"perflab.studies.{study}")
    except ModuleNotFoundError as exc:
        raise MatrixError(
            f"perflab_studies: no study {study!r} (no perflab/studies/{study}.py)"
        ) from exc
    return module.expand


def expand(
    run_id: str,
    study: str,
    config: dict[str, Any],
    profiles: dict[str, Any],
    profile: str,
    known_impls: set[str],
) -> list[CellSpec]:
    """Every cell of one study for one profile, validated, in run order."""
    merged = merged_study_config(study, config, profiles, profile)
    return interleave_repeats(expander(study)(run_id, merged, known_impls))
