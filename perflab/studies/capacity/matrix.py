"""Capacity: a closed-loop probe per server, then open-loop steps at fractions of its rate.

The probe (scenario `probe`) is closed-loop ghz, as the hello study runs it: the rate the
server reaches when ghz waits for every answer. Each step (scenario `step`) is open-loop ghz
at `fraction` x that rate, resolved by the runner when the step runs (LoadSpec.rate_of) and
recorded in its params (`offered_rps`, `reference_rps`, `duration_s`). Every step of a
server shares its one probe, so every repeat offers the same rates and the knee's interval
over repeats compares like with like. Standard library only: the benchmark host imports it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from perflab.cell import CellSpec, LoadSpec, ServerSpec
from perflab.matrix import (
    HELLO_RPC,
    MatrixError,
    ghz_connections,
    require_choice,
    require_int_at_least,
    require_positive_ints,
    require_positive_number,
    validate_implementations,
)

STUDY = "capacity"
PREFIX = "perflab_matrix_capacity"
# An offered rate above this many times the probe's is no longer a step toward the knee.
MAX_FRACTION = 3.0


@dataclass(frozen=True)
class CapacityMatrix:
    """Every knob of perflab_matrix_capacity, checked once (`read`)."""

    implementations: dict[str, Any]
    selected: list[str]
    connections: int
    probe_concurrency: int
    probe_duration_s: float
    warmup_s: float
    fractions: list[float]
    step_concurrency: int
    step_duration_s: float
    min_calls: int
    repeats: int
    slo_ms: float
    slo_multiple: float
    within: float


def require_fractions(key: str, values: Any) -> list[float]:
    if not isinstance(values, list) or not values:
        raise MatrixError(f"{key}: expected a non-empty list of fractions of the probe's rate")
    for value in values:
        require_positive_number(key, value)
        if value > MAX_FRACTION:
            raise MatrixError(f"{key}: {value!r} is above {MAX_FRACTION} x the probe's rate")
    if sorted(values) != values or len(set(values)) != len(values):
        raise MatrixError(f"{key}: expected increasing fractions, got {values!r}")
    return [float(v) for v in values]


def read(config: dict[str, Any], known_impls: set[str]) -> CapacityMatrix:
    impls = validate_implementations(
        f"{PREFIX}.implementations", config.get("implementations"), known_impls
    )
    selected = config.get("run_implementations") or list(impls)
    require_choice(f"{PREFIX}.run_implementations", selected, impls)
    probe_c = require_positive_ints(
        f"{PREFIX}.probe_concurrency", [config.get("probe_concurrency")]
    )
    step_c = require_positive_ints(f"{PREFIX}.step_concurrency", [config.get("step_concurrency")])
    connections = ghz_connections(PREFIX, config, [probe_c[0], step_c[0]])
    if len(connections) != 1:
        raise MatrixError(f"{PREFIX}.connections: one value (the steps share one probe)")
    # The analysis's knobs are checked here too, so a bad SLO is refused before anything runs.
    slo_ms = require_positive_number(f"{PREFIX}.slo_ms", config.get("slo_ms"))
    multiple = require_positive_number(
        f"{PREFIX}.slo_unloaded_multiple", config.get("slo_unloaded_multiple")
    )
    within = require_positive_number(f"{PREFIX}.achieved_within", config.get("achieved_within"))
    if within >= 1:
        raise MatrixError(f"{PREFIX}.achieved_within: {within!r} is not a fraction below 1")
    return CapacityMatrix(
        implementations=impls,
        selected=selected,
        connections=connections[0],
        probe_concurrency=probe_c[0],
        probe_duration_s=require_positive_number(
            f"{PREFIX}.probe_duration_s", config.get("probe_duration_s")
        ),
        warmup_s=require_positive_number(f"{PREFIX}.warmup_s", config.get("warmup_s")),
        fractions=require_fractions(f"{PREFIX}.fractions", config.get("fractions")),
        step_concurrency=step_c[0],
        step_duration_s=require_positive_number(
            f"{PREFIX}.step_duration_s", config.get("step_duration_s")
        ),
        min_calls=require_int_at_least(f"{PREFIX}.min_calls", config.get("min_calls")),
        repeats=require_int_at_least(f"{PREFIX}.repeats", config.get("repeats")),
        slo_ms=slo_ms,
        slo_multiple=multiple,
        within=within,
    )


def probe_id(name: str) -> str:
    return f"{name}-probe"


def step_id(name: str, fraction: float, repeat: int) -> str:
    """e.g. go-step-f115-r2: the fraction in percent, so ids sort with the rate."""
    return f"{name}-step-f{round(fraction * 100):03d}-r{repeat}"


def cell(
    run_id: str, name: str, entry: dict[str, Any], scenario: str, cell_id: str, repeat: int
) -> CellSpec:
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=cell_id,
        scenario=scenario,
        implementation=name,
        client="ghz",
        params={},
        repeat=repeat,
        server=ServerSpec(impl=entry["impl"], options=dict(entry.get("options", {}))),
        load=LoadSpec(kind="ghz"),
    )


def server_cells(run_id: str, m: CapacityMatrix, name: str) -> list[CellSpec]:
    """One probe, then every step of every repeat (interleave_repeats keeps the probe first:
    it is repeat 1 and comes before the steps in this list)."""
    entry = m.implementations[name]
    probe = cell(run_id, name, entry, "probe", probe_id(name), 1)
    probe.load = HELLO_RPC.load(
        m.probe_concurrency, m.connections, duration_s=m.probe_duration_s, warmup_s=m.warmup_s
    )
    probe.params = {
        "concurrency": m.probe_concurrency,
        "connections": m.connections,
        "duration_s": m.probe_duration_s,
    }
    cells = [probe]
    # The analysis's knobs ride with the steps, so a run is judged by what it was set to.
    judged = {
        "slo_ms": m.slo_ms,
        "slo_unloaded_multiple": m.slo_multiple,
        "achieved_within": m.within,
    }
    for repeat in range(1, m.repeats + 1):
        for fraction in m.fractions:
            step = cell(run_id, name, entry, "step", step_id(name, fraction, repeat), repeat)
            step.load = HELLO_RPC.load(
                m.step_concurrency,
                m.connections,
                duration_s=m.step_duration_s,
                warmup_s=m.warmup_s,
                rate_of={"cell": probe.cell_id, "fraction": fraction, "min_calls": m.min_calls},
            )
            # offered_rps, reference_rps and the stretched duration_s join when it runs.
            step.params = {
                "concurrency": m.step_concurrency,
                "connections": m.connections,
                "fraction": fraction,
                "duration_s": m.step_duration_s,
                **judged,
            }
            cells.append(step)
    return cells


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    m = read(config, known_impls)
    return [copy.deepcopy(c) for name in m.selected for c in server_cells(run_id, m, name)]
