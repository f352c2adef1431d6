"""The measurement matrix: profiles, validation, and expansion into cells.

Each study's matrix lives in inventory/group_vars/all/<study>.yml as perflab_matrix_<study>,
with its profile overrides as perflab_profiles_<study>. Here a profile's overrides are laid
over it and the study's expand() called; the study checks every value against its declared
record (perflab.contract.knobs) before anything runs, refusing a value that makes no sense
with the key that holds it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec
from perflab.contract.knobs import (
    Choices,
    Context,
    Implementations,
    Ints,
    KeysOf,
    MatrixError,
    NamedImpl,
    knob,
)
from perflab.contract.params import CURRENT_STACK
from perflab.contract.rounds import round_order, round_seed
from perflab.contract.runid import RUN_PROFILES
from perflab.contract.study import Study


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


def run_implementations_knob() -> Any:
    """`run_implementations`: which of the (earlier) `implementations` run; empty: all."""
    return knob(Choices(KeysOf("implementations"), empty="all"), "labels to run; empty: all", [])


@dataclass(frozen=True)
class ServerTable:
    """The first keys of a study that runs several servers (a study's Matrix extends it)."""

    implementations: dict[str, Any] = knob(
        Implementations(), "servers by label: {impl: <language>/<folder>, options}"
    )
    run_implementations: list[str] = run_implementations_knob()


@dataclass(frozen=True)
class ServerAndClient:
    """The first keys of a study with one server and one client of its own."""

    server: dict[str, str] = knob(NamedImpl(), "{name, impl} of the server")
    client: dict[str, str] = knob(NamedImpl(), "{name, impl} of the client")


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


@dataclass(frozen=True)
class GhzConnections:
    """`connections`: the HTTP/2 connections ghz spreads its concurrency over, one cell each.

    ghz gives every connection concurrency / connections workers, so a value above the
    smallest concurrency (a key declared before this one) would leave connections idle.
    """

    def check(self, key: str, value: Any, context: Context) -> list[int]:
        connections = Ints().check(key, value, context)
        smallest = min(context.checked["concurrency"])
        for count in connections:
            if count > smallest:
                raise MatrixError(
                    f"{key}: {count} is above concurrency {smallest} (ghz spreads the "
                    "concurrency over the connections)"
                )
        return connections


def connections_knob() -> Any:
    """A ghz study's `connections` key, declared after its `concurrency`."""
    return knob(GhzConnections(), "ghz --connections, one cell each", DEFAULT_CONNECTIONS)


def stack_impl_of(entry: dict[str, Any], stack: str, stack_runs_here: bool) -> str | None:
    """The impl that runs implementation `entry` on `stack`: `impl` on CURRENT_STACK, on
    another (a seed's pinned versions) the impl its `stacks: {stack: impl}` names, and only
    where `stack_runs_here` (a study's stack scenarios or latency profiles); None: none."""
    if stack == CURRENT_STACK:
        return entry["impl"]
    return entry.get("stacks", {}).get(stack) if stack_runs_here else None


def connections_suffix(connections: int) -> str:
    """Cell ids of one connection stay what they were before connections was a key."""
    return "" if connections == 1 else f"-k{connections}"


def expand(
    run_id: str,
    study: Study,
    config: dict[str, Any],
    profiles: dict[str, Any],
    profile: str,
    known_impls: set[str],
) -> list[CellSpec]:
    """Every cell of one study for one profile, validated, in run order: round by round,
    shuffled within a round from a seed of the run id (perflab.contract.rounds). The study's
    record comes from the caller (perflab.studies.get_study): the contract imports no study."""
    merged = merged_study_config(study.id, config, profiles, profile)
    return round_order(study.expand(run_id, merged, known_impls), round_seed(run_id, study.id))
