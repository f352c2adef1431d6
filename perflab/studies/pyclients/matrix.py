"""Seed 001, pyclients: what a Python gRPC client costs, against a C++ server.

Every client (grpc.aio, betterproto 2.0.0b7 + grpclib, betterproto2 + grpclib, grpcio
sync) on each event loop it supports, in each scenario, by each method:

- seed:   the seed's timeit shape (a fresh event loop and channel per call, best of
          `seed_repeats` repeats of `seed_loops` calls), comparable to its published table;
- steady: one channel, warm-up, then `steady_calls` back-to-back calls, each timed.

The client process runs under /usr/bin/time -v, which gives max RSS, page faults,
context switches and CPU seconds of the whole process, as the seed measured.
"""

from __future__ import annotations

from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.matrix import MatrixError, require_choice, require_positive_ints

PREFIX = "perflab_matrix_pyclients"
# Numbers per call; 0 is the unary request-reply. Mirrors the clients' harness.
SCENARIOS = {"request_reply": 0, "stream_10": 10, "stream_100000": 100_000}
METHODS = ("seed", "steady")
LOOPS = ("asyncio", "uvloop", "none")  # "none": a blocking client without an event loop
PER_SCENARIO_COUNTS = ("seed_loops", "steady_calls")


def validate_clients(key: str, table: Any, known_impls: set[str]) -> dict[str, Any]:
    if not isinstance(table, dict) or not table:
        raise MatrixError(f"{key}: expected a mapping of client name to {{impl, loops}}")
    for name, entry in table.items():
        if not isinstance(entry, dict) or "impl" not in entry:
            raise MatrixError(f"{key}.{name}: expected {{impl: <language>/<folder>, loops: [...]}}")
        if entry["impl"] not in known_impls:
            raise MatrixError(
                f"{key}.{name}.impl: unknown client {entry['impl']!r}; known: {sorted(known_impls)}"
            )
        require_choice(f"{key}.{name}.loops", entry.get("loops"), LOOPS)
    return table


def validate_server(key: str, server: Any, known_impls: set[str]) -> dict[str, Any]:
    if not isinstance(server, dict) or not {"name", "impl"} <= set(server):
        raise MatrixError(f"{key}: expected {{name: <label>, impl: <language>/<folder>}}")
    if server["impl"] not in known_impls:
        raise MatrixError(
            f"{key}.impl: unknown server {server['impl']!r}; known: {sorted(known_impls)}"
        )
    return server


def validate_methods(key: str, methods: Any) -> dict[str, list[str]]:
    if not isinstance(methods, dict) or not methods:
        raise MatrixError(f"{key}: expected a mapping of method {list(METHODS)} to scenarios")
    for method, scenarios in methods.items():
        if method not in METHODS:
            raise MatrixError(f"{key}: unknown method {method!r}; choose from {list(METHODS)}")
        require_choice(f"{key}.{method}", scenarios, SCENARIOS)
    return methods


def per_scenario(key: str, table: Any, scenarios: set[str], minimum: int) -> dict[str, int]:
    """A count per scenario: every scenario that runs needs one, each an int >= minimum."""
    if not isinstance(table, dict):
        raise MatrixError(f"{key}: expected a mapping of scenario to a count")
    unknown = set(table) - set(SCENARIOS)
    if unknown:
        raise MatrixError(f"{key}: unknown scenario(s) {sorted(unknown)}")
    for scenario in sorted(scenarios):
        value = table.get(scenario)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise MatrixError(f"{key}.{scenario}: {value!r} is not an integer >= {minimum}")
    return table


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    server = validate_server(f"{PREFIX}.server", config.get("server"), known_impls)
    clients = validate_clients(f"{PREFIX}.clients", config.get("clients"), known_impls)
    selected = config.get("run_clients") or list(clients)
    require_choice(f"{PREFIX}.run_clients", selected, clients)
    run_loops = config.get("run_loops") or list(LOOPS)
    require_choice(f"{PREFIX}.run_loops", run_loops, LOOPS)
    methods = validate_methods(f"{PREFIX}.methods", config.get("methods"))
    running = {scenario for scenarios in methods.values() for scenario in scenarios}
    seed_scenarios = set(methods.get("seed", []))
    steady_scenarios = set(methods.get("steady", []))
    seed_loops = per_scenario(f"{PREFIX}.seed_loops", config.get("seed_loops"), seed_scenarios, 1)
    steady_calls = per_scenario(
        f"{PREFIX}.steady_calls", config.get("steady_calls"), steady_scenarios, 1
    )
    warmup_calls = per_scenario(f"{PREFIX}.warmup_calls", config.get("warmup_calls"), running, 0)
    seed_repeats = require_positive_ints(f"{PREFIX}.seed_repeats", [config.get("seed_repeats")])[0]
    repeats = require_positive_ints(f"{PREFIX}.repeats", [config.get("repeats")])[0]
    timeout_s = config.get("timeout_s", 600)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or timeout_s <= 0:
        raise MatrixError(f"{PREFIX}.timeout_s: {timeout_s!r} is not a positive number")

    cells = []
    for name in selected:
        entry = clients[name]
        for loop in [loop for loop in entry["loops"] if loop in run_loops]:
            for method in METHODS:
                for scenario in [s for s in SCENARIOS if s in methods.get(method, [])]:
                    options = {
                        "scenario": scenario,
                        "method": method,
                        "loop": loop,
                        "warmup_calls": warmup_calls[scenario],
                    }
                    if method == "seed":
                        options |= {
                            "seed_loops": seed_loops[scenario],
                            "seed_repeats": seed_repeats,
                        }
                    else:
                        options["steady_calls"] = steady_calls[scenario]
                    for repeat in range(1, repeats + 1):
                        cells.append(
                            CellSpec(
                                run_id=run_id,
                                study="pyclients",
                                cell_id=f"{name}-{loop}-{scenario}-{method}-r{repeat}",
                                scenario=scenario,
                                implementation=server["name"],
                                client=name,
                                params={"method": method, "loop": loop},
                                repeat=repeat,
                                server=ServerSpec(impl=server["impl"]),
                                load=LoadSpec(
                                    kind="client",
                                    client_impl=entry["impl"],
                                    client_options=dict(options),
                                    timeout_s=float(timeout_s),
                                ),
                            )
                        )
    if not cells:
        raise MatrixError(
            f"{PREFIX}: no cell to run (run_loops {run_loops} matches no client's loops)"
        )
    return cells
