"""The measurement matrix: profiles, validation, and expansion into cells.

Each study's matrix lives in inventory/group_vars/all/<study>.yml as perflab_matrix_<study>,
with its profile overrides as perflab_profiles_<study>. Every value is checked here, before
anything runs; a value that makes no sense is refused with the key that holds it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec
from perflab.contract.runid import RUN_PROFILES
from perflab.contract.study import Expander, UnknownStudy, get_study


class MatrixError(ValueError):
    """A matrix value that makes no sense; the message names the key."""


def merged_study_config(
    study: str, config: dict[str, Any], profiles: dict[str, Any], profile: str
) -> dict[str, Any]:
    """A study's matrix with the chosen profile's overrides laid over it."""
    if profile not in RUN_PROFILES:
        raise MatrixError(
            f"perflab_profile: unknown profile {profile!r}; choose one of {RUN_PROFILES}"
        )
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


def require_int_at_least(key: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MatrixError(f"{key}: {value!r} is not an integer >= {minimum}")
    return value


def validate_implementations(key: str, table: Any, known_impls: set[str]) -> dict[str, Any]:
    """{name: {impl: <language>/<folder>, options: {...}}}: every impl has an impl.toml."""
    if not isinstance(table, dict) or not table:
        raise MatrixError(f"{key}: expected a mapping of implementation name to its folder")
    for name, entry in table.items():
        if not isinstance(entry, dict) or "impl" not in entry:
            raise MatrixError(f"{key}.{name}: expected {{impl: <language>/<folder>, options: ...}}")
        if entry["impl"] not in known_impls:
            raise MatrixError(
                f"{key}.{name}.impl: unknown server {entry['impl']!r}; known: {sorted(known_impls)}"
            )
        if not isinstance(entry.get("options", {}), dict):
            raise MatrixError(f"{key}.{name}.options: expected a mapping")
    return table


def validate_named_impl(key: str, entry: Any, known_impls: set[str]) -> dict[str, Any]:
    """{name: <label>, impl: <language>/<folder>}: one server or client of a study."""
    if not isinstance(entry, dict) or not {"name", "impl"} <= set(entry):
        raise MatrixError(f"{key}: expected {{name: <label>, impl: <language>/<folder>}}")
    if entry["impl"] not in known_impls:
        raise MatrixError(f"{key}.impl: unknown {entry['impl']!r}; known: {sorted(known_impls)}")
    return entry


# --- ghz studies ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GhzCall:
    """The RPC ghz calls: its proto (under proto/), method and request."""

    proto: str
    call: str
    data: dict[str, Any] = field(default_factory=dict)

    def load(self, concurrency: int, connections: int, **shape: Any) -> LoadSpec:
        """A ghz LoadSpec of this call; `shape`: total/warmup_total or duration_s/warmup_s,
        and any other LoadSpec field (ghz_version, timeout_s)."""
        return LoadSpec(
            kind="ghz",
            proto=self.proto,
            call=self.call,
            data=copy.deepcopy(self.data),
            concurrency=concurrency,
            connections=connections,
            **shape,
        )


# The compute-only hello RPC: the hello study's load and the calibration's reference.
HELLO_RPC = GhzCall("hello.proto", "helloworld.Greeter.SayHello", {"name": "perflab"})
# What the seeds ran: ghz's default, every concurrent worker on one HTTP/2 connection.
DEFAULT_CONNECTIONS = [1]


def ghz_connections(prefix: str, config: dict[str, Any], concurrencies: list[int]) -> list[int]:
    """`connections`: the HTTP/2 connections ghz spreads its concurrency over, one cell each.

    ghz gives every connection concurrency / connections workers, so a value above the
    smallest concurrency would leave connections idle: refused, naming the key.
    """
    key = f"{prefix}.connections"
    connections = require_positive_ints(key, config.get("connections", DEFAULT_CONNECTIONS))
    smallest = min(concurrencies)
    for value in connections:
        if value > smallest:
            raise MatrixError(
                f"{key}: {value} is above concurrency {smallest} (ghz spreads the concurrency "
                "over the connections)"
            )
    return connections


def connections_suffix(connections: int) -> str:
    """Cell ids of one connection stay what they were before connections was a key."""
    return "" if connections == 1 else f"-k{connections}"


def interleave_repeats(cells: list[CellSpec]) -> list[CellSpec]:
    """Repeat 1 of every cell, then repeat 2, ...: slow drift of the host spreads over all."""
    return sorted(cells, key=lambda cell: cell.repeat)


def expander(study: str) -> Expander:
    """perflab.studies.<study>.STUDY.expand: adding a study adds a package, not a line here.

    Only a missing package is refused as "no study"; an error inside a study propagates.
    """
    try:
        return get_study(study).expand
    except UnknownStudy as exc:
        raise MatrixError(f"perflab_studies: {exc}") from exc


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
