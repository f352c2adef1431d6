"""Seed 000, hello server: req/s and latency of a compute-only unary RPC under ghz."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Flag,
    Int,
    Ints,
    KeysOf,
    Knob,
    Number,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.matrix import (
    CURRENT_STACK,
    HELLO_RPC,
    ServerTable,
    connections_knob,
    connections_suffix,
    stack_impl_of,
)
from perflab.contract.rounds import aa_cells

SCENARIOS = ("seed_n200", "steady")
PREFIX = "perflab_matrix_hello"
# More concurrent streams than ghz can open on one host.
MAX_CONCURRENCY = 10_000
# Library stacks: "current" (servers/python/requirements.txt) and seed 000's grpcio 1.28.1
# (requirements-seed000.txt, roles/seed000_stack), run by the servers whose implementation
# names an impl for it (`stacks`), in the scenarios of `stack_scenarios`.
STACKS = (CURRENT_STACK, "seed000")


@dataclass(frozen=True)
class Matrix(ServerTable):
    """perflab_matrix_hello (inventory/group_vars/all/hello.yml): ServerTable's keys, then these."""

    scenarios: list[str] = knob(Choices(SCENARIOS), "seed_n200: ghz -n; steady: a duration")
    concurrency: list[int] = knob(
        Ints(MAX_CONCURRENCY, "what ghz can open on one host"), "ghz -c, one cell each"
    )
    connections: list[int] = connections_knob()
    seed_total: int = knob(Int(), "ghz -n of a seed_n200 cell, and of its warm-up")
    steady_duration_s: float = knob(Number(), "measured seconds per steady cell")
    warmup_s: float = knob(Number(), "discarded ghz run before every steady cell")
    repeats: int = knob(Int(), "cells per configuration")
    stacks: list[str] = knob(Choices(STACKS), "library stacks to run", [CURRENT_STACK])
    stack_scenarios: list[str] = knob(
        Choices(SCENARIOS), "scenarios a stack other than current runs", ["seed_n200"]
    )
    reuse_servers: bool = knob(
        Flag(), "one server per implementation and round, kept between its cells", False
    )
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        implementation=Knob(Choice(KeysOf("implementations")), "the server"),
        scenario=Knob(Choice(SCENARIOS), "seed_n200 or steady"),
        concurrency=Knob(Int(), "ghz -c"),
        connections=Knob(Int(), "ghz --connections", 1),
    )


def ghz_load(
    matrix: Matrix, scenario: str, concurrency: int, conns: int
) -> tuple[LoadSpec, dict[str, Any]]:
    """One cell's ghz load and the params that say what it was."""
    spec = HELLO_RPC.load(concurrency, conns)
    params: dict[str, Any] = {"concurrency": concurrency, "connections": conns}
    if scenario == "seed_n200":
        # The seed's exact shape; the warm-up is one more such batch, discarded.
        spec.total, spec.warmup_total = matrix.seed_total, matrix.seed_total
        params["total"] = matrix.seed_total
    else:
        spec.duration_s, spec.warmup_s = matrix.steady_duration_s, matrix.warmup_s
        params |= {"duration_s": matrix.steady_duration_s, "warmup_s": matrix.warmup_s}
    return spec, params


def stack_impl(matrix: Matrix, name: str, stack: str, scenario: str) -> str | None:
    """The impl that runs server `name` on `stack` in `scenario`; None: none there."""
    here = scenario in matrix.stack_scenarios
    return stack_impl_of(matrix.implementations[name], stack, here)


def cell(
    run_id: str,
    matrix: Matrix,
    name: str,
    at: tuple[str, int, int],
    repeat: int,
    stack: str = CURRENT_STACK,
) -> CellSpec:
    """One server's cell at (scenario, concurrency, connections) in one round."""
    scenario, concurrency, conns = at
    entry = matrix.implementations[name]
    load_spec, params = ghz_load(matrix, scenario, concurrency, conns)
    # The current stack's cells keep their ids and params (a missing `stack` reads as current).
    on_stack = "" if stack == CURRENT_STACK else f"-{stack}"
    if on_stack:
        params["stack"] = stack
    return CellSpec(
        run_id=run_id,
        study="hello",
        cell_id=f"{name}-{scenario}-c{concurrency}{connections_suffix(conns)}{on_stack}-r{repeat}",
        scenario=scenario,
        implementation=name,
        client="ghz",
        params=params,
        repeat=repeat,
        server=ServerSpec(
            impl=stack_impl(matrix, name, stack, scenario) or entry["impl"],
            options=dict(entry.get("options", {})),
        ),
        load=load_spec,
        reuse_server=matrix.reuse_servers,
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    cells = [
        cell(run_id, matrix, name, (scenario, concurrency, conns), repeat, stack)
        for name in matrix.run_implementations
        for stack in matrix.stacks
        for scenario in matrix.scenarios
        if stack_impl(matrix, name, stack, scenario)
        for concurrency in matrix.concurrency
        for conns in matrix.connections
        for repeat in range(1, matrix.repeats + 1)
    ]
    for aa in matrix.aa_pair:
        at = (aa["scenario"], aa["concurrency"], aa["connections"])
        cells += aa_cells(
            lambda repeat, aa=aa, at=at: cell(run_id, matrix, aa["implementation"], at, repeat),
            matrix.repeats,
        )
    return cells
