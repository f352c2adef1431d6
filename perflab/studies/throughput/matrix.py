"""Seed 002, throughput: single-stream bytes/s of a huge server stream, and what TLS costs.

Cells, each one client's timed calls against one server, one after another on one channel
(the seed's throughput is "the average of 10 RPCs"; the runner's repeats, the rounds, are
the unit a claim's interval is taken over):

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

import math
from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.knobs import (
    Choice,
    Choices,
    Context,
    Impl,
    Int,
    Ints,
    KeysOf,
    Knob,
    MatrixError,
    Number,
    SameAs,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.matrix import run_implementations_knob
from perflab.contract.rounds import aa_cells

STUDY = "throughput"
PREFIX = "perflab_matrix_throughput"
SECURITIES = ("none", "tls", "mtls")
FLOORS = {"iperf3": "floor_tcp", "openssl": "floor_cipher"}
# Seconds allowed per GiB for the server to allocate and fill its payload before READY.
READY_S_PER_GIB = 10.0
# The `gather` of the cells whose payload is at least gather_bytes (perflab.contract.rounds).
LARGE_PAYLOADS = "large_payload"
# The client's own deadline is the matrix timeout; the runner waits this much longer, so
# the client's clear error (not the runner's kill) is what a stuck call leaves behind.
RUNNER_GRACE_S = 30.0


@dataclass(frozen=True)
class Pairs:
    """{name: {server, client, server_options?, client_options?}}: each implementation's
    server and own-language client, every one with an impl.toml."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        if not isinstance(value, dict) or not value:
            raise MatrixError(f"{key}: expected a mapping of name to {{server, client}}")
        for name, entry in value.items():
            if not isinstance(entry, dict) or not {"server", "client"} <= set(entry):
                raise MatrixError(
                    f"{key}.{name}: expected {{server: <lang>/<folder>, client: ...}}"
                )
            for role in ("server", "client"):
                Impl().check(f"{key}.{name}.{role}", entry[role], context)
                # One folder may serve as two implementations (grpcio sync and grpc.aio).
                if not isinstance(entry.get(f"{role}_options", {}), dict):
                    raise MatrixError(f"{key}.{name}.{role}_options: expected a mapping")
        return value


@dataclass(frozen=True)
class Floor:
    """{iperf3: {server, client, options}, openssl: {...}}; empty runs no floor cell."""

    def check(self, key: str, value: Any, context: Context) -> dict[str, Any]:
        if value in (None, {}):
            return {}
        if not isinstance(value, dict):
            raise MatrixError(f"{key}: expected a mapping of {list(FLOORS)} to {{server, client}}")
        for name, entry in value.items():
            if name not in FLOORS:
                raise MatrixError(f"{key}: unknown floor {name!r}; choose from {list(FLOORS)}")
            Pairs().check(key, {name: entry}, context)
            if not isinstance(entry.get("options", {}), dict):
                raise MatrixError(f"{key}.{name}.options: expected a mapping")
        return value


@dataclass(frozen=True)
class OnceSizes:
    """Extra sizes run per own-language pair only (not every pair and mode)."""

    sizes: list[int]
    securities: list[str]
    repeats: int
    # Which of run_implementations take them; empty: all.
    implementations: list[str]
    # Whole-payload calls a cell of these sizes times on its one server (0: as
    # measured_bytes says for every cell).
    calls: int = 0


@dataclass(frozen=True)
class Once:
    """once: {sizes: [...], securities: [...], repeats: n (default 1), implementations:
    [...] (default: every one that runs), calls: n (default 0: measured_bytes')}; no
    sizes: none."""

    def check(self, key: str, value: Any, context: Context) -> OnceSizes:
        if value in (None, {}):
            return OnceSizes([], [], 1, [])
        keys = {"sizes", "securities", "repeats", "implementations", "calls"}
        if not isinstance(value, dict) or set(value) - keys:
            raise MatrixError(
                f"{key}: expected {{sizes: [bytes, ...], securities: [...], repeats: n, "
                "implementations: [...], calls: n}"
            )
        if not value.get("sizes"):
            return OnceSizes([], [], 1, [])
        return OnceSizes(
            Ints().check(f"{key}.sizes", value["sizes"], context),
            Choices(SECURITIES).check(f"{key}.securities", value.get("securities"), context),
            Int().check(f"{key}.repeats", value.get("repeats", 1), context),
            Choices(KeysOf("implementations"), empty="none").check(
                f"{key}.implementations", value.get("implementations"), context
            ),
            Int(minimum=0).check(f"{key}.calls", value.get("calls", 0), context),
        )


@dataclass(frozen=True)
class Matrix:
    """perflab_matrix_throughput (inventory/group_vars/all/throughput.yml)."""

    implementations: dict[str, Any] = knob(Pairs(), "by name: {server, client, *_options}")
    run_implementations: list[str] = run_implementations_knob()
    reference_server: str = knob(
        Choice(KeysOf("implementations")), "the server every client also runs against"
    )
    securities: list[str] = knob(Choices(SECURITIES), "none, tls, mtls")
    sizes: list[int] = knob(Ints(), "payload bytes, every pair and security")
    once: OnceSizes = knob(Once(), "extra sizes per own-language pair only", {})
    max_chunk_bytes: int = knob(Int(), "the clients' largest message", 64 << 20)
    chunk_bytes: int = knob(Int(), "bytes per message")
    warmup_bytes: int = knob(Int(minimum=0), "a discarded stream before the timed calls")
    measured_bytes: int = knob(
        Int(minimum=0), "bytes a cell's timed calls stream at least, in whole payloads", 0
    )
    gather_bytes: int = knob(
        Int(minimum=0), "payloads this large run one after another in a round; 0: none", 0
    )
    timeout_s: float = knob(Number(), "the client's deadline")
    repeats: int = knob(Int(), "cells per configuration")
    floor: dict[str, Any] = knob(Floor(), "iperf3 / openssl floor cells; empty: none", {})
    floor_repeats: int = knob(Int(), "cells per floor", SameAs("repeats"))
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        server=Knob(Choice(KeysOf("implementations")), "the server"),
        client=Knob(Choice(KeysOf("implementations")), "the client"),
        security=Knob(Choice(SECURITIES), "none, tls or mtls"),
        size=Knob(Int(), "payload bytes"),
    )


def checked(config: dict[str, Any], known_impls: set[str]) -> Matrix:
    """The record, and what relates two keys: a chunk the clients can take."""
    matrix = validate(Matrix, PREFIX, config, known_impls)
    if matrix.chunk_bytes > matrix.max_chunk_bytes:
        raise MatrixError(
            f"{PREFIX}.chunk_bytes: {matrix.chunk_bytes} is above the clients' "
            f"{matrix.max_chunk_bytes} byte limit"
        )
    return matrix


def pairs(matrix: Matrix) -> list[tuple[str, str]]:
    """(server, client) names: each own-language pair, then each client on the reference."""
    selected, reference = matrix.run_implementations, matrix.reference_server
    own = [(name, name) for name in selected]
    cross = [(reference, name) for name in selected if name != reference]
    return own + cross


def grpc_cell(
    run_id: str,
    matrix: Matrix,
    server: str,
    client: str,
    security: str,
    size: int,
    repeat: int,
    calls: int = 0,
) -> CellSpec:
    impls = matrix.implementations
    pair = "own" if server == client else "cross"
    return CellSpec(
        run_id=run_id,
        study=STUDY,
        cell_id=f"{server}-{client}-{security}-{size}-r{repeat}",
        scenario=security,
        implementation=server,
        client=client,
        params={"payload_bytes": size, "chunk_bytes": matrix.chunk_bytes, "pair": pair},
        repeat=repeat,
        server=ServerSpec(
            impl=impls[server]["server"],
            options={
                **impls[server].get("server_options", {}),
                "size": size,
                "chunk_bytes": matrix.chunk_bytes,
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
                "calls": calls or timed_calls(matrix.measured_bytes, size),
                "warmup_bytes": min(matrix.warmup_bytes, size),
                "security": security,
                "timeout_s": matrix.timeout_s,
            },
            timeout_s=matrix.timeout_s + RUNNER_GRACE_S,
        ),
        gather=LARGE_PAYLOADS if 0 < matrix.gather_bytes <= size else "",
    )


def timed_calls(measured_bytes: int, size: int) -> int:
    """How many whole-payload calls a cell times: enough to stream `measured_bytes`, at least
    one. Several calls average a second's hiccup within the cell, but on this 2-core VM
    three 1 GiB calls bought no more than the same minutes of rounds
    (data/experiments/20261128-throughput-calls-ab), so the profiles keep one."""
    return max(1, math.ceil(measured_bytes / size))


def floor_cell(run_id: str, matrix: Matrix, name: str, repeat: int) -> CellSpec:
    entry = matrix.floor[name]
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
            timeout_s=matrix.timeout_s,
        ),
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = checked(config, known_impls)
    once = matrix.once
    every_pair = [
        grpc_cell(run_id, matrix, server, client, security, size, repeat)
        for repeat in range(1, matrix.repeats + 1)
        for server, client in pairs(matrix)
        for security in matrix.securities
        for size in matrix.sizes
    ]
    own_pair_once = [
        grpc_cell(run_id, matrix, name, name, security, size, repeat, once.calls)
        for repeat in range(1, once.repeats + 1)
        for name in matrix.run_implementations
        if not once.implementations or name in once.implementations
        for security in once.securities
        for size in once.sizes
        if size not in matrix.sizes
    ]
    floor = [
        floor_cell(run_id, matrix, name, repeat)
        for repeat in range(1, matrix.floor_repeats + 1)
        for name in matrix.floor
    ]
    twins = [
        twin
        for aa in matrix.aa_pair
        for twin in aa_cells(
            lambda repeat, aa=aa: grpc_cell(
                run_id, matrix, aa["server"], aa["client"], aa["security"], aa["size"], repeat
            ),
            matrix.repeats,
        )
    ]
    return every_pair + own_pair_once + floor + twins
