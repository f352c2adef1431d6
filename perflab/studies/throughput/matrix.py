"""Seed 002, throughput: single-stream bytes/s of a huge server stream, and what TLS costs.

Cells, each one call of one client against one server (the runner's repeats give the
seed's "mean of 10 RPCs"):

- every implementation's server against its own-language client, and every client against
  the reference (C++) server, so a client's cost and a server's cost can be told apart;
- each in every security mode (none, TLS, mTLS) and payload size; `once` adds sizes (the
  10 GiB case in quick) run a single time per implementation with its own client;
- the physical floor in the same run, pinned the same way: one iperf3 TCP stream over the
  same loopback (scenario "floor_tcp") and `openssl speed` of the TLS cipher on the
  client's core (scenario "floor_cipher").

The server pre-allocates the payload, so each gRPC cell declares it as the server's memory:
a size the host cannot hold is refused before the server starts (perflab.host.runner).
"""

from __future__ import annotations

from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.matrix import (
    MatrixError,
    require_choice,
    require_positive_ints,
    require_positive_number,
)

STUDY = "throughput"
PREFIX = "perflab_matrix_throughput"
SECURITIES = ("none", "tls", "mtls")
FLOORS = {"iperf3": "floor_tcp", "openssl": "floor_cipher"}
# Seconds allowed per GiB for the server to allocate and fill its payload before READY.
READY_S_PER_GIB = 10.0
# The client's own deadline is the matrix timeout; the runner waits this much longer, so
# the client's clear error (not the runner's kill) is what a stuck call leaves behind.
RUNNER_GRACE_S = 30.0


def validate_implementations(key: str, table: Any, known_impls: set[str]) -> dict[str, Any]:
    if not isinstance(table, dict) or not table:
        raise MatrixError(f"{key}: expected a mapping of name to {{server, client}}")
    for name, entry in table.items():
        if not isinstance(entry, dict) or not {"server", "client"} <= set(entry):
            raise MatrixError(f"{key}.{name}: expected {{server: <lang>/<folder>, client: ...}}")
        for role in ("server", "client"):
            if entry[role] not in known_impls:
                raise MatrixError(
                    f"{key}.{name}.{role}: unknown implementation {entry[role]!r}; "
                    f"known: {sorted(known_impls)}"
                )
            # One folder may serve as two implementations (grpcio sync and grpc.aio).
            if not isinstance(entry.get(f"{role}_options", {}), dict):
                raise MatrixError(f"{key}.{name}.{role}_options: expected a mapping")
    return table


def validate_floor(key: str, table: Any, known_impls: set[str]) -> dict[str, Any]:
    """floor: {iperf3: {server, client, options}, openssl: {...}}; empty runs no floor cell."""
    if table in (None, {}):
        return {}
    if not isinstance(table, dict):
        raise MatrixError(f"{key}: expected a mapping of {list(FLOORS)} to {{server, client}}")
    for name, entry in table.items():
        if name not in FLOORS:
            raise MatrixError(f"{key}: unknown floor {name!r}; choose from {list(FLOORS)}")
        validate_implementations(key, {name: entry}, known_impls)
        if not isinstance(entry.get("options", {}), dict):
            raise MatrixError(f"{key}.{name}.options: expected a mapping")
    return table


def validate_once(key: str, once: Any) -> tuple[list[int], list[str], int]:
    """once: {sizes: [...], securities: [...], repeats: n}: extra sizes per own-language pair
    only (not every pair and mode), `repeats` times (default 1)."""
    if once in (None, {}):
        return [], [], 1
    if not isinstance(once, dict) or set(once) - {"sizes", "securities", "repeats"}:
        raise MatrixError(f"{key}: expected {{sizes: [bytes, ...], securities: [...], repeats: n}}")
    sizes = once.get("sizes") or []
    if not sizes:
        return [], [], 1
    require_positive_ints(f"{key}.sizes", sizes)
    securities = require_choice(f"{key}.securities", once.get("securities"), SECURITIES)
    repeats = require_positive_ints(f"{key}.repeats", [once.get("repeats", 1)])[0]
    return sizes, securities, repeats


def pairs(impls: dict[str, Any], selected: list[str], reference: str) -> list[tuple[str, str]]:
    """(server, client) names: each own-language pair, then each client on the reference."""
    own = [(name, name) for name in selected]
    cross = [(reference, name) for name in selected if name != reference and reference in impls]
    return own + cross


def grpc_cell(
    run_id: str,
    impls: dict[str, Any],
    server: str,
    client: str,
    security: str,
    size: int,
    repeat: int,
    knobs: dict[str, Any],
) -> CellSpec:
    chunk = knobs["chunk_bytes"]
    pair = "own" if server == client else "cross"
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=f"{server}-{client}-{security}-{size}-r{repeat}",
        scenario=security,
        implementation=server,
        client=client,
        params={"payload_bytes": size, "chunk_bytes": chunk, "pair": pair},
        repeat=repeat,
        server=ServerSpec(
            impl=impls[server]["server"],
            options={
                **impls[server].get("server_options", {}),
                "size": size,
                "chunk_bytes": chunk,
                "security": security,
            },
            memory_bytes=size,
            ready_timeout_s=60.0 + READY_S_PER_GIB * size / 2**30,
        ),
        load=LoadSpec(
            kind="client",
            client_impl=impls[client]["client"],
            client_options={
                **impls[client].get("client_options", {}),
                "expect_bytes": size,
                "warmup_bytes": min(knobs["warmup_bytes"], size),
                "security": security,
                "timeout_s": knobs["timeout_s"],
            },
            timeout_s=knobs["timeout_s"] + RUNNER_GRACE_S,
        ),
    )


def floor_cell(
    run_id: str, name: str, entry: dict[str, Any], repeat: int, timeout_s: float
) -> CellSpec:
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=f"floor-{name}-r{repeat}",
        scenario=FLOORS[name],
        implementation=name,
        client=name,
        params={"pair": "floor"},
        repeat=repeat,
        server=ServerSpec(impl=entry["server"]),
        load=LoadSpec(
            kind="client",
            client_impl=entry["client"],
            client_options=dict(entry.get("options", {})),
            timeout_s=timeout_s,
        ),
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    impls = validate_implementations(
        f"{PREFIX}.implementations", config.get("implementations"), known_impls
    )
    selected = config.get("run_implementations") or list(impls)
    require_choice(f"{PREFIX}.run_implementations", selected, impls)
    reference = config.get("reference_server")
    if reference not in impls:
        raise MatrixError(f"{PREFIX}.reference_server: {reference!r} is not one of {sorted(impls)}")
    securities = require_choice(f"{PREFIX}.securities", config.get("securities"), SECURITIES)
    sizes = require_positive_ints(f"{PREFIX}.sizes", config.get("sizes"))
    once_sizes, once_securities, once_repeats = validate_once(f"{PREFIX}.once", config.get("once"))
    chunk = require_positive_ints(f"{PREFIX}.chunk_bytes", [config.get("chunk_bytes")])[0]
    if chunk > config.get("max_chunk_bytes", 64 << 20):
        raise MatrixError(f"{PREFIX}.chunk_bytes: {chunk} is above the clients' 64 MiB limit")
    warmup = config.get("warmup_bytes")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise MatrixError(f"{PREFIX}.warmup_bytes: {warmup!r} is not an integer >= 0")
    timeout_s = require_positive_number(f"{PREFIX}.timeout_s", config.get("timeout_s"))
    repeats = require_positive_ints(f"{PREFIX}.repeats", [config.get("repeats")])[0]
    floor = validate_floor(f"{PREFIX}.floor", config.get("floor"), known_impls)
    floor_repeats = require_positive_ints(
        f"{PREFIX}.floor_repeats", [config.get("floor_repeats", repeats)]
    )[0]
    knobs = {"chunk_bytes": chunk, "warmup_bytes": warmup, "timeout_s": timeout_s}

    cells = []
    for repeat in range(1, repeats + 1):
        for server, client in pairs(impls, selected, reference):
            for security in securities:
                for size in sizes:
                    cells.append(
                        grpc_cell(run_id, impls, server, client, security, size, repeat, knobs)
                    )
    for repeat in range(1, once_repeats + 1):
        for name in selected:
            for security in once_securities:
                for size in once_sizes:
                    if size not in sizes:
                        cells.append(
                            grpc_cell(run_id, impls, name, name, security, size, repeat, knobs)
                        )
    for repeat in range(1, floor_repeats + 1):
        for name, entry in floor.items():
            cells.append(floor_cell(run_id, name, entry, repeat, timeout_s))
    return cells
