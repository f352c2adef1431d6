"""Capacity: one knee search per server, run by the open-loop generator in one process.

Each cell (scenario `search`) starts a hello server and runs servers/go/capacity_load
against it: warm-up on warm connections, then steps of constant-rate (or Poisson) load,
coarse up by a factor from `search_start_rps`, then bisection until the bracket is within
`bracket`, each rate `repeats` times. The generator times every call from its intended send
and marks a step generator-bound when it lacked CPU or fell behind in a 100 ms window by
enough to explain the step's failure; at a rate where most steps were, the search stops
with a lower bound. `searches` cells per server are independent searches (one per round),
but one for the servers `searched_once` names: those whose search the generator ends on
this host, a lower bound a repeat would not narrow. Every server's first rate is the same
(`search_start_rps`): the common rate at which server CPU per call is compared. Standard
library only: the host imports it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Int,
    KeysOf,
    MatrixError,
    Number,
    knob,
    validate,
)
from perflab.contract.matrix import ServerTable

STUDY = "capacity"
PREFIX = "perflab_matrix_capacity"
GENERATOR = "go/capacity_load"
SCENARIO = "search"


@dataclass(frozen=True)
class Share:
    """A number in (0, 1)."""

    def check(self, key: str, value: Any, context: Any) -> float:
        value = Number().check(key, value, context)
        if value >= 1:
            raise MatrixError(f"{key}: {value!r} is not a fraction below 1")
        return value


@dataclass(frozen=True)
class Matrix(ServerTable):
    """perflab_matrix_capacity (inventory/group_vars/all/capacity.yml): ServerTable's keys,
    then the generator's options (each a flag of servers/go/capacity_load) and `searches`."""

    searches: int = knob(Int(), "independent knee searches per server, one per round")
    searched_once: list[str] = knob(
        Choices(KeysOf("implementations"), empty="none"),
        "servers searched in the first round only (their knee is a lower bound here)",
        [],
    )
    arrival: str = knob(Choice(("constant", "poisson")), "arrivals: constant or Poisson")
    http2_connections: int = knob(Int(), "the generator's HTTP/2 connections")
    warmup_s: float = knob(Number(), "discarded seconds at the first rate before any step")
    settle_s: float = knob(Number(), "discarded seconds at the start of every step")
    step_s: float = knob(Number(), "measured seconds per step, at least")
    min_calls: int = knob(Int(), "calls a step measures at least (its duration stretches)")
    rest_s: float = knob(Number(), "idle seconds after every step")
    repeats: int = knob(Int(3), "steps per rate (at least 3); a rate holds on their majority")
    search_start_rps: float = knob(Number(), "the first rate: every server's, the common rate")
    search_factor: float = knob(Number(), "coarse steps multiply the rate by this (> 1)")
    search_max_rps: float = knob(Number(), "the highest rate the search tries")
    search_min_rps: float = knob(Number(), "the lowest rate it tries when the first fails")
    bracket: float = knob(Share(), "bisect until high <= (1 + bracket) x low")
    max_rates: int = knob(Int(), "rates a search tries at most")
    slo_ms: float = knob(Number(), "the fixed SLO: a step holds with p99 at most this (ms)")
    achieved_within: float = knob(Share(), "and with achieved at least (1 - this) x offered")
    lag_limit_ms: float = knob(Number(), "generator-bound: a lag above this explaining a failure")
    cpu_limit: float = knob(Share(), "generator-bound: its CPU above this share of its CPUs")
    timeout_s: float = knob(Number(), "deadline of every call: a step waits for its last")


# The Matrix keys that are not the generator's options.
NOT_OPTIONS = {"implementations", "run_implementations", "searches", "searched_once"}


def read(config: dict[str, Any], known_impls: set[str]) -> Matrix:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    if matrix.search_factor <= 1:
        raise MatrixError(f"{PREFIX}.search_factor: {matrix.search_factor!r} is not above 1")
    if matrix.search_start_rps > matrix.search_max_rps:
        raise MatrixError(f"{PREFIX}.search_start_rps: above search_max_rps")
    return matrix


def search_seconds(m: Matrix) -> float:
    """A search's measuring time when its first rate holds: warm-up, then at most max_rates
    rates of `repeats` steps (settle, measured, rest). Every rate after the first is then at
    least 1.5x it (coarse steps up, then midpoints of brackets above it), so no step is
    stretched longer than at that 1.5x. Server start and the last calls' wait come on top."""

    later = (m.max_rates - 1) * rate_seconds(m, 1.5 * m.search_start_rps)
    return m.warmup_s + rate_seconds(m, m.search_start_rps) + later


def rate_seconds(m: Matrix, rate: float) -> float:
    """One rate's `repeats` steps: settle, measured (stretched to min_calls), rest."""
    return m.repeats * (m.settle_s + max(m.step_s, m.min_calls / rate) + m.rest_s)


def search_rates(m: Matrix, knee_rps: float) -> list[float]:
    """The rates a search tries against a server that holds every rate below `knee_rps` and
    none from it on: the generator's search (servers/go/capacity_load, `search`) replayed."""
    rates: list[float] = []
    low = high = 0.0
    rate = m.search_start_rps
    while len(rates) < m.max_rates:
        rates.append(rate)
        if rate < knee_rps:
            low = rate
            if high or rate * m.search_factor > m.search_max_rps:
                break
            rate *= m.search_factor
        else:
            high = rate
            if low or rate / m.search_factor < m.search_min_rps:
                break
            rate /= m.search_factor
    if not (low and high):
        return rates
    while high > (1 + m.bracket) * low and len(rates) < m.max_rates:
        mid = math.floor((low + high) / 2 + 0.5)  # Go's math.Round: halves away from zero
        rates.append(mid)
        low, high = (mid, high) if mid < knee_rps else (low, mid)
    return rates


def knee_seconds(m: Matrix, knee_rps: float) -> float:
    """A search's measuring time against a server whose knee is `knee_rps`: warm-up, then
    every step of every rate it tries (server start and the last calls' wait on top)."""
    return m.warmup_s + sum(rate_seconds(m, r) for r in search_rates(m, knee_rps))


def generator_options(m: Matrix) -> dict[str, Any]:
    """The generator's flags (impl.toml options) from the matrix."""
    options = {k: v for k, v in asdict(m).items() if k not in NOT_OPTIONS}
    options["connections"] = options.pop("http2_connections")
    return {"mode": "search", **options}


def search_id(name: str, repeat: int) -> str:
    return f"{name}-search-r{repeat}"


def search_cell(run_id: str, m: Matrix, name: str, repeat: int) -> CellSpec:
    entry = m.implementations[name]
    options = generator_options(m)
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=search_id(name, repeat),
        scenario=SCENARIO,
        implementation=name,
        client="capacity_load_go",
        # Everything the analysis judges by rides in the params: a run is read by what it
        # was set to.
        params=dict(options),
        repeat=repeat,
        server=ServerSpec(impl=entry["impl"], options=dict(entry.get("options", {}))),
        load=LoadSpec(
            kind="client",
            client_impl=GENERATOR,
            client_options=options,
            # Room for the slow paths search_seconds leaves out: rates below the first
            # (longer steps) and every step waiting for its last calls.
            timeout_s=120 + 2 * search_seconds(m) + m.max_rates * m.repeats * m.timeout_s,
        ),
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    m = read(config, known_impls)
    return [
        search_cell(run_id, m, name, repeat)
        for repeat in range(1, m.searches + 1)
        for name in m.run_implementations
        if repeat == 1 or name not in m.searched_once
    ]
