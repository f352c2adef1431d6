"""Seed 001, pyclients: what a Python gRPC client costs, against a C++ server.

Every client (grpc.aio, betterproto 2.0.0b7 + grpclib, betterproto2 + grpclib, grpcio
sync) on each event loop it supports, in each scenario, by each method:

- seed:   the seed's timeit shape (a fresh event loop and channel per call, best of
          `seed_repeats` repeats of `seed_loops` calls), comparable to its published table;
- steady: one channel, warm-up, then `steady_calls` back-to-back calls, each timed.

The client process runs under /usr/bin/time -v, which gives max RSS, page faults,
context switches and CPU seconds of the whole process, as the seed measured.

Each cell names its library `stack`: "current" (servers/python/requirements.txt) or
"seed001" (the versions seed 001 measured, servers/python/requirements-seed001.txt, in a
second venv). A client that names an impl for a stack runs on it, on `stack_loops`, so a
result that differs from the seed is attributed to the library versions or to the machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Context,
    Impl,
    Implementations,
    Int,
    KeysOf,
    Knob,
    MatrixError,
    NamedImpl,
    Number,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.matrix import stack_impl_of
from perflab.contract.params import CURRENT_STACK
from perflab.contract.rounds import aa_cells

PREFIX = "perflab_matrix_pyclients"
# Numbers per call; 0 is the unary request-reply. Mirrors the clients' harness.
SCENARIOS = {"request_reply": 0, "stream_10": 10, "stream_100000": 100_000}
METHODS = ("seed", "steady")
LOOPS = ("asyncio", "uvloop", "none")  # "none": a blocking client without an event loop
STACKS = (CURRENT_STACK, "seed001")


@dataclass(frozen=True)
class Clients:
    """{name: {impl: <language>/<folder>, loops: [...], stacks: {<stack>: <impl>}}}: each
    client, its event loops and, optionally, its impl on each other library stack."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        Implementations().check(key, value, context)
        for name, entry in value.items():
            Choices(LOOPS).check(f"{key}.{name}.loops", entry.get("loops"), context)
            stacks = entry.get("stacks", {})
            if not isinstance(stacks, dict):
                raise MatrixError(f"{key}.{name}.stacks: expected a mapping of stack to impl")
            for stack, impl in stacks.items():
                if stack not in STACKS or stack == CURRENT_STACK:
                    raise MatrixError(
                        f"{key}.{name}.stacks: unknown stack {stack!r}; choose from "
                        f"{list(STACKS[1:])} (the current stack is `impl`)"
                    )
                Impl().check(f"{key}.{name}.stacks.{stack}", impl, context)
        return value


@dataclass(frozen=True)
class Methods:
    """{seed: [scenario, ...], steady: [...]}: the scenarios each method runs."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, list[str]]:
        if not isinstance(value, dict) or not value:
            raise MatrixError(f"{key}: expected a mapping of method {list(METHODS)} to scenarios")
        for method, scenarios in value.items():
            if method not in METHODS:
                raise MatrixError(f"{key}: unknown method {method!r}; choose from {list(METHODS)}")
            Choices(SCENARIOS).check(f"{key}.{method}", scenarios, context)
        return value


@dataclass(frozen=True)
class PerScenario:
    """A count per scenario, each an integer >= minimum: every scenario that `methods` (an
    earlier key) runs by one of `for_methods` needs one."""

    minimum: int
    for_methods: tuple[str, ...] = METHODS

    def check(self, key: str, value: Any, context: Context) -> dict[str, int]:
        if not isinstance(value, dict):
            raise MatrixError(f"{key}: expected a mapping of scenario to a count")
        unknown = set(value) - set(SCENARIOS)
        if unknown:
            raise MatrixError(f"{key}: unknown scenario(s) {sorted(unknown)}")
        methods = context.checked["methods"]
        running = {s for method in self.for_methods for s in methods.get(method, [])}
        for scenario in sorted(running):
            Int(self.minimum).check(f"{key}.{scenario}", value.get(scenario), context)
        return value


@dataclass(frozen=True)
class Matrix:
    """perflab_matrix_pyclients (inventory/group_vars/all/pyclients.yml)."""

    server: dict[str, str] = knob(NamedImpl(), "{name, impl} of the server every client calls")
    clients: dict[str, Any] = knob(Clients(), "clients by label: {impl, loops}")
    run_clients: list[str] = knob(
        Choices(KeysOf("clients"), empty="all"), "labels to run; empty: all", []
    )
    run_loops: list[str] = knob(
        Choices(LOOPS, empty="all"), "event loops to run; empty: every loop a client lists", []
    )
    methods: dict[str, list[str]] = knob(Methods(), "the scenarios seed and steady each run")
    seed_loops: dict[str, int] = knob(PerScenario(1, ("seed",)), "calls per timeit repeat")
    steady_calls: dict[str, int] = knob(PerScenario(1, ("steady",)), "timed calls, steady")
    warmup_calls: dict[str, int] = knob(PerScenario(0), "discarded calls first")
    seed_repeats: int = knob(Int(), "timeit repeats, the best counts (the seed's 5)")
    repeats: int = knob(Int(), "cells per configuration")
    timeout_s: float = knob(Number(), "a client that takes longer fails its cell", 600)
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        client=Knob(Choice(KeysOf("clients")), "the client"),
        loop=Knob(Choice(LOOPS), "its event loop"),
        scenario=Knob(Choice(SCENARIOS), "a scenario its method runs"),
        method=Knob(Choice(METHODS), "seed or steady"),
    )
    stacks: list[str] = knob(Choices(STACKS), "library stacks to run", [CURRENT_STACK])
    stack_loops: list[str] = knob(
        Choices(LOOPS), "event loops a stack other than current runs on", ["asyncio"]
    )


def stack_impl(matrix: Matrix, name: str, stack: str) -> str | None:
    """The impl that runs client `name` on `stack`; None: the client has none there."""
    return stack_impl_of(matrix.clients[name], stack, True)


def runs(matrix: Matrix, name: str, stack: str, loop: str) -> bool:
    """Whether client `name` runs on `stack` and `loop`."""
    if loop not in matrix.run_loops or stack_impl(matrix, name, stack) is None:
        return False
    return stack == CURRENT_STACK or loop in matrix.stack_loops


def client_options(matrix: Matrix, scenario: str, method: str, loop: str) -> dict[str, Any]:
    """What the client harness is told: one scenario by one method on one loop."""
    options = {
        "scenario": scenario,
        "method": method,
        "loop": loop,
        "warmup_calls": matrix.warmup_calls[scenario],
    }
    if method == "seed":
        return options | {
            "seed_loops": matrix.seed_loops[scenario],
            "seed_repeats": matrix.seed_repeats,
        }
    return options | {"steady_calls": matrix.steady_calls[scenario]}


@dataclass(frozen=True)
class Config:
    """One client configuration: which client, on which stack and loop."""

    name: str
    stack: str
    loop: str

    @property
    def label(self) -> str:
        # The current stack's cell ids stay as before the stacks existed.
        suffix = "" if self.stack == CURRENT_STACK else f"-{self.stack}"
        return f"{self.name}{suffix}-{self.loop}"


def cell(
    run_id: str, matrix: Matrix, config: Config, scenario: str, method: str, repeat: int
) -> CellSpec:
    loop = config.loop
    return CellSpec(
        run_id=run_id,
        study="pyclients",
        cell_id=f"{config.label}-{scenario}-{method}-r{repeat}",
        scenario=scenario,
        implementation=matrix.server["name"],
        client=config.name,
        params={"method": method, "loop": loop, "stack": config.stack},
        repeat=repeat,
        server=ServerSpec(impl=matrix.server["impl"]),
        load=LoadSpec(
            kind="client",
            client_impl=str(stack_impl(matrix, config.name, config.stack)),
            client_options=client_options(matrix, scenario, method, loop),
            timeout_s=matrix.timeout_s,
        ),
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    configs = [
        Config(name, stack, loop)
        for name in matrix.run_clients
        for stack in matrix.stacks
        for loop in matrix.clients[name]["loops"]
        if runs(matrix, name, stack, loop)
    ]
    cells = [
        cell(run_id, matrix, config, scenario, method, repeat)
        for config in configs
        for method in METHODS
        for scenario in SCENARIOS
        if scenario in matrix.methods.get(method, [])
        for repeat in range(1, matrix.repeats + 1)
    ]
    if not cells:
        raise MatrixError(
            f"{PREFIX}: no cell to run (run_loops {matrix.run_loops} and stacks "
            f"{matrix.stacks} match no client's loops and stacks)"
        )
    return cells + aa_pair_cells(run_id, matrix)


def aa_pair_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """The A/A cells: configurations the matrix's counts cover (each method runs its scenario)."""
    return [twin for aa in matrix.aa_pair for twin in aa_pair_of(run_id, matrix, aa)]


def aa_pair_of(run_id: str, matrix: Matrix, aa: dict[str, Any]) -> list[CellSpec]:
    if aa["scenario"] not in matrix.methods.get(aa["method"], []):
        raise MatrixError(
            f"{PREFIX}.aa_pair: method {aa['method']} does not run {aa['scenario']} "
            f"(methods: {matrix.methods})"
        )
    if aa["loop"] not in matrix.clients[aa["client"]]["loops"]:
        raise MatrixError(f"{PREFIX}.aa_pair: {aa['client']} does not run on {aa['loop']}")
    return aa_cells(
        lambda repeat: cell(
            run_id,
            matrix,
            Config(aa["client"], CURRENT_STACK, aa["loop"]),
            aa["scenario"],
            aa["method"],
            repeat,
        ),
        matrix.repeats,
    )
