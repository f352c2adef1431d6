"""The measurement matrix: profiles, validation, and expansion into cells.

The matrix lives in inventory/group_vars/all/matrix.yml. Every value is checked here,
before anything runs; a value that makes no sense is refused with the key that holds it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from perflab.cell import CellSpec

PROFILES = ("smoke", "quick", "full")


class MatrixError(ValueError):
    """A matrix value that makes no sense; the message names the key."""


def merged_study_config(
    matrix: dict[str, Any], profiles: dict[str, Any], profile: str, study: str
) -> dict[str, Any]:
    """The study's matrix with the profile's overrides for that study laid over it."""
    if profile not in PROFILES:
        raise MatrixError(f"perflab_profile: unknown profile {profile!r}; choose one of {PROFILES}")
    if study not in matrix:
        raise MatrixError(f"perflab_matrix: no study {study!r}; it has {sorted(matrix)}")
    config = copy.deepcopy(matrix[study])
    overrides = (profiles.get(profile) or {}).get(study) or {}
    unknown = set(overrides) - set(config)
    if unknown:
        raise MatrixError(f"perflab_profiles.{profile}.{study}: unknown key(s) {sorted(unknown)}")
    config.update(copy.deepcopy(overrides))
    return config


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


def expanders() -> dict[str, Expander]:
    from perflab.studies import calibration, hello

    return {"hello": hello.expand, "calibration": calibration.expand}


def expand(
    run_id: str,
    study: str,
    matrix: dict[str, Any],
    profiles: dict[str, Any],
    profile: str,
    known_impls: set[str],
) -> list[CellSpec]:
    """Every cell of one study for one profile, validated, in run order."""
    config = merged_study_config(matrix, profiles, profile, study)
    table = expanders()
    if study not in table:
        raise MatrixError(f"perflab_matrix.{study}: no expander for this study in perflab.studies")
    return interleave_repeats(table[study](run_id, config, known_impls))
