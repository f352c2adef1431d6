"""Capacity: a closed-loop probe per server, then open-loop steps at fractions of its rate.

The probe (scenario `probe`) is closed-loop ghz, as the hello study runs it: the rate the
server reaches when ghz waits for every answer. Each step (scenario `step`) is open-loop ghz
at `fraction` x that rate, resolved by the runner when the step runs (LoadSpec.rate_of) and
recorded in its params (`offered_rps`, `reference_rps`, `duration_s`). Every step of a
server shares its one probe, so every repeat offers the same rates and the knee's interval
over repeats compares like with like. Standard library only: the benchmark host imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import Int, Ints, MatrixError, Number, knob, validate
from perflab.contract.matrix import HELLO_RPC, ServerTable

STUDY = "capacity"
PREFIX = "perflab_matrix_capacity"
# An offered rate above this many times the probe's is no longer a step toward the knee.
MAX_FRACTION = 3.0
# A probe runs before the steps of its round: they read its rate (perflab.contract.rounds).
PROBE_PHASE, STEP_PHASE = 0, 1


@dataclass(frozen=True)
class Fractions:
    """An increasing, non-empty list of fractions of the probe's rate, each at most MAX_FRACTION."""

    def check(self, key: str, values: Any, context: Any) -> list[float]:
        if not isinstance(values, list) or not values:
            raise MatrixError(f"{key}: expected a non-empty list of fractions of the probe's rate")
        for value in values:
            Number().check(key, value, context)
            if value > MAX_FRACTION:
                raise MatrixError(f"{key}: {value!r} is above {MAX_FRACTION} x the probe's rate")
        if sorted(values) != values or len(set(values)) != len(values):
            raise MatrixError(f"{key}: expected increasing fractions, got {values!r}")
        return [float(v) for v in values]


@dataclass(frozen=True)
class Fraction:
    """A number in (0, 1)."""

    def check(self, key: str, value: Any, context: Any) -> float:
        value = Number().check(key, value, context)
        if value >= 1:
            raise MatrixError(f"{key}: {value!r} is not a fraction below 1")
        return value


@dataclass(frozen=True)
class Matrix(ServerTable):
    """perflab_matrix_capacity (inventory/group_vars/all/capacity.yml): ServerTable's keys, then
    these. The analysis's knobs (SLOs) are checked here too, so a bad one is refused before
    anything runs."""

    connections: list[int] = knob(
        Ints(), "ghz --connections: one value, every step shares one probe", [1]
    )
    probe_concurrency: int = knob(Int(), "ghz -c of the closed-loop probe")
    probe_duration_s: float = knob(Number(), "measured seconds of the probe")
    warmup_s: float = knob(Number(), "discarded ghz run before the probe and every step")
    fractions: list[float] = knob(Fractions(), "offered rates, as fractions of the probe's")
    step_concurrency: int = knob(Int(), "ghz workers of a step (--async: not the load)")
    step_duration_s: float = knob(Number(), "measured seconds per step, at least")
    min_calls: int = knob(Int(), "calls a step makes at least (its duration stretches)")
    slo_ms: float = knob(Number(), "the fixed SLO on p99, in ms")
    slo_unloaded_multiple: float = knob(Number(), "the relative SLO: x the unloaded p50")
    achieved_within: float = knob(Fraction(), "how far below offered the achieved rate may be")
    repeats: int = knob(Int(), "steps per fraction (the probe runs once per server)")


def read(config: dict[str, Any], known_impls: set[str]) -> Matrix:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    if len(matrix.connections) != 1:
        raise MatrixError(f"{PREFIX}.connections: one value (the steps share one probe)")
    if matrix.connections[0] > min(matrix.probe_concurrency, matrix.step_concurrency):
        raise MatrixError(f"{PREFIX}.connections: more connections than concurrent calls")
    return matrix


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


def server_cells(run_id: str, m: Matrix, name: str) -> list[CellSpec]:
    """One probe (round 1, phase PROBE_PHASE), then every step of every repeat."""
    entry = m.implementations[name]
    probe = cell(run_id, name, entry, "probe", probe_id(name), 1)
    probe.phase = PROBE_PHASE
    probe.load = HELLO_RPC.load(
        m.probe_concurrency, m.connections[0], duration_s=m.probe_duration_s, warmup_s=m.warmup_s
    )
    probe.params = {
        "concurrency": m.probe_concurrency,
        "connections": m.connections[0],
        "duration_s": m.probe_duration_s,
    }
    cells = [probe]
    # The analysis's knobs ride with the steps, so a run is judged by what it was set to.
    judged = {
        "slo_ms": m.slo_ms,
        "slo_unloaded_multiple": m.slo_unloaded_multiple,
        "achieved_within": m.achieved_within,
    }
    for repeat in range(1, m.repeats + 1):
        for fraction in m.fractions:
            step = cell(run_id, name, entry, "step", step_id(name, fraction, repeat), repeat)
            step.phase = STEP_PHASE
            step.load = HELLO_RPC.load(
                m.step_concurrency,
                m.connections[0],
                duration_s=m.step_duration_s,
                warmup_s=m.warmup_s,
                rate_of={"cell": probe.cell_id, "fraction": fraction, "min_calls": m.min_calls},
            )
            # offered_rps, reference_rps and the stretched duration_s join when it runs.
            step.params = {
                "concurrency": m.step_concurrency,
                "connections": m.connections[0],
                "fraction": fraction,
                "duration_s": m.step_duration_s,
                **judged,
            }
            cells.append(step)
    return cells


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    m = read(config, known_impls)
    return [c for name in m.run_implementations for c in server_cells(run_id, m, name)]
