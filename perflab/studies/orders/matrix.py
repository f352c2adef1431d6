"""Seed 003, orders: many clients sending stamped orders to a grpcio server.

Cells: mode (unary, bidi lock-step, bidi pipelined) x clients x orders x security
(plaintext, tls) x latency profile, on the topology the inventory names. Profiles that
add a delay run their own sizes (`delayed_clients`, `delayed_orders`). `orders` is the
total over all clients, as the seed's --count was; a cell needs orders >= clients. A
bidi stream holds one server thread for its whole life, so a cell gets at least one worker
per client; every mode gets the same, so unary and bidi are compared on the same server
(the `workers` param says what ran). Unary needs no thread per client (a call holds a
worker only while it runs), so `seed_unary_*` adds unary cells on exactly `workers`
threads, the seed's server, whatever the client count.

`client_order` says how a cell's clients ran: `parallel`, started together (the seed's
prose), or `sequential`, one after another (its log's reading, docs/orders-sequential-
clients.md). `sequential_*` adds the sequential cells on the seed's server (10 workers,
plaintext), each client with its own `sequential_orders_per_client` orders, so `orders` is
clients x that; sequential clients do not interact, so a sample of clients stands in for
the seed's 1 000.
"""

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
    Knob,
    MatrixError,
    Number,
    SameAs,
    Text,
    aa_pair_knob,
    knob,
    validate,
)
from perflab.contract.latency import LATENCY_PROFILES
from perflab.contract.matrix import ServerAndClient
from perflab.contract.rounds import aa_cells

PREFIX = "perflab_matrix_orders"
MODES = ("unary", "bidi", "bidi_pipelined")
SECURITY = ("plaintext", "tls")


@dataclass(frozen=True)
class Matrix(ServerAndClient):
    """perflab_matrix_orders (group_vars/all/orders.yml): server and client, then these."""

    modes: list[str] = knob(Choices(MODES), "unary, bidi (lock-step), bidi_pipelined")
    security: list[str] = knob(Choices(SECURITY), "plaintext and/or tls")
    latency_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES), "delays between client and server", ["none"]
    )
    clients: list[int] = knob(Ints(), "clients started together")
    orders: list[int] = knob(Ints(), "orders in total over the clients (the seed's --count)")
    workers: int = knob(Int(), "server threads; every cell gets at least one per client")
    warmup: int = knob(Int(minimum=0), "orders each client sends first, discarded")
    reuse_servers: bool = knob(
        Flag(), "one server per configuration of it and round, kept between its cells", False
    )
    warmup_max_total: int = knob(
        Int(), "warm-up orders over all clients at most (each client sends one at least)", 1000
    )
    repeats: int = knob(Int(), "cells per configuration")
    topology: str = knob(Text("a topology name"), "where client and server ran", "localhost")
    tls_dir: str = knob(Text("a path", empty_ok=True), "certificates; empty: the host's", "")
    timeout_s: float = knob(Number(), "a client that takes longer fails its cell", 600)
    # A delay makes each order slow: cells with a delayed profile take their own, smaller sizes.
    delayed_clients: list[int] = knob(Ints(), "clients of a delayed profile", SameAs("clients"))
    delayed_orders: list[int] = knob(Ints(), "orders of a delayed profile", SameAs("orders"))
    aa_pair: list[dict[str, Any]] = aa_pair_knob(
        mode=Knob(Choice(MODES), "unary, bidi or bidi_pipelined"),
        security=Knob(Choice(SECURITY), "plaintext or tls"),
        clients=Knob(Int(), "clients started together"),
        orders=Knob(Int(), "orders in total, at least one per client"),
        latency_profile=Knob(Choice(LATENCY_PROFILES), "the delay", "none"),
    )
    # Unary cells on exactly `workers` threads (the seed's 10 at 100 clients too), so that
    # the client count is not confounded with the server's threads; [] profiles: none.
    seed_unary_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES, empty="none"), "profiles of the seed-server unary cells", []
    )
    seed_unary_clients: list[int] = knob(Ints(), "their clients", SameAs("clients"))
    seed_unary_orders: list[int] = knob(Ints(), "their orders", SameAs("orders"))
    seed_unary_security: list[str] = knob(Choices(SECURITY), "their security", SameAs("security"))
    # The seed's regime for bidi against unary: many clients, each mode at the same client
    # count on as many threads as the grid gives it, plaintext, no delay; [] modes: none.
    scale_modes: list[str] = knob(
        Choices(MODES, empty="none"), "modes of the seed-scale cells (many clients)", []
    )
    scale_clients: list[int] = knob(Ints(), "their clients", [1000])
    scale_orders: list[int] = knob(Ints(), "their orders", [10000])
    # The log's reading: clients one after another, unary on the seed's server; [] profiles:
    # none. A sequential cell's time grows with clients x orders per client.
    sequential_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES, empty="none"), "profiles of the sequential-client cells", []
    )
    sequential_clients: list[int] = knob(Ints(), "clients run one after another", [1, 10])
    sequential_orders_per_client: int = knob(Int(), "orders of each sequential client", 1000)
    # Lock-step bidi run the same way, for bidi against unary on that reading; []: none.
    sequential_bidi_profiles: list[str] = knob(
        Choices(LATENCY_PROFILES, empty="none"), "profiles of sequential bidi cells", []
    )


def warmup_per_client(matrix: Matrix, n_clients: int) -> int:
    """Warm-up orders each client sends: `warmup`, cut so that all clients together send at
    most `warmup_max_total`, but never below one, which is what warms a client's own
    connection (its first call opens the HTTP/2 stream). At 1 000 clients 10 each were
    10 000 discarded orders, 3 s a cell against a 0.1-3 s measured window; 1 each still has
    every connection carry a call and the server serve 1 000 orders first."""
    if not matrix.warmup:
        return 0
    return max(1, min(matrix.warmup, matrix.warmup_max_total // n_clients))


def size_pairs(matrix: Matrix) -> dict[bool, list[tuple[int, int]]]:
    """(clients, orders) of the cells without and with a delay: orders >= clients."""
    sizes = {
        False: [(c, n) for c in matrix.clients for n in matrix.orders if n >= c],
        True: [(c, n) for c in matrix.delayed_clients for n in matrix.delayed_orders if n >= c],
    }
    for delayed, key in ((False, "orders"), (True, "delayed_orders")):
        if not sizes[delayed]:
            raise MatrixError(f"{PREFIX}.{key}: every value is below every clients value")
    return sizes


def latency_proxies(profile: str) -> list[dict[str, Any]]:
    one_way_ms = LATENCY_PROFILES[profile]
    return [] if one_way_ms is None else [{"caller": "load", "one_way_ms": one_way_ms}]


def cell(
    run_id: str,
    matrix: Matrix,
    profile: str,
    mode: str,
    sec: str,
    n_clients: int,
    n_orders: int,
    repeat: int,
    cell_workers: int | None = None,
    client_order: str = "parallel",
) -> CellSpec:
    # The same for every mode: more threads on one side would confound them.
    default_workers = max(matrix.workers, n_clients)
    cell_workers = default_workers if cell_workers is None else cell_workers
    params = {
        "mode": mode,
        "clients": n_clients,
        "orders": n_orders,
        "security": sec,
        "workers": cell_workers,
        "topology": matrix.topology,
        "latency_profile": profile,
        "client_order": client_order,
    }
    server_options: dict[str, Any] = {"workers": cell_workers, "security": sec}
    client_options: dict[str, Any] = {
        "mode": mode,
        "clients": n_clients,
        "orders": n_orders,
        "warmup": warmup_per_client(matrix, n_clients),
        "security": sec,
        "client_order": client_order,
    }
    if matrix.tls_dir:
        server_options["tls_dir"] = client_options["tls_dir"] = matrix.tls_dir
    suffix = ("" if client_order == "parallel" else "-seq") + (
        "" if profile == "none" else f"-{profile}"
    )
    return CellSpec(
        run_id=run_id,
        study="orders",
        cell_id=f"{mode}-{sec}-c{n_clients}-n{n_orders}"
        f"{'' if cell_workers == default_workers else f'-w{cell_workers}'}{suffix}-r{repeat}",
        scenario=f"{matrix.topology}_{mode}",
        implementation=matrix.server["name"],
        client=matrix.client["name"],
        params=params,
        repeat=repeat,
        server=ServerSpec(impl=matrix.server["impl"], options=server_options),
        load=LoadSpec(
            kind="client",
            client_impl=matrix.client["impl"],
            client_options=client_options,
            timeout_s=matrix.timeout_s,
        ),
        # The runner puts the profile's proxy between client and server ("none": no proxy).
        latency_proxies=latency_proxies(profile),
        reuse_server=matrix.reuse_servers,
    )


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    sizes = size_pairs(matrix)
    cells = [
        cell(run_id, matrix, profile, mode, sec, n_clients, n_orders, repeat)
        for profile in matrix.latency_profiles
        for mode in matrix.modes
        for sec in matrix.security
        for n_clients, n_orders in sizes[bool(LATENCY_PROFILES[profile])]
        for repeat in range(1, matrix.repeats + 1)
    ]
    seen = {spec.cell_id for spec in cells}
    # A seed-server cell the grid above already has (clients <= workers) is not run twice.
    extra = seed_unary_cells(run_id, matrix) + scale_cells(run_id, matrix)
    for spec in extra + sequential_cells(run_id, matrix):
        if spec.cell_id not in seen:
            cells.append(spec)
            seen.add(spec.cell_id)
    return cells + aa_pair_cells(run_id, matrix)


def scale_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """Each scale mode at every scale size, plaintext and undelayed (orders >= clients)."""
    return [
        cell(run_id, matrix, "none", mode, "plaintext", n_clients, n_orders, repeat)
        for mode in matrix.scale_modes
        for n_clients in matrix.scale_clients
        for n_orders in matrix.scale_orders
        if n_orders >= n_clients
        for repeat in range(1, matrix.repeats + 1)
    ]


def seed_unary_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """Unary on exactly `workers` threads at every seed_unary_* size (orders >= clients)."""
    return [
        cell(run_id, matrix, profile, "unary", sec, n_clients, n_orders, repeat, matrix.workers)
        for profile in matrix.seed_unary_profiles
        for sec in matrix.seed_unary_security
        for n_clients in matrix.seed_unary_clients
        for n_orders in matrix.seed_unary_orders
        if n_orders >= n_clients
        for repeat in range(1, matrix.repeats + 1)
    ]


def sequential_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """Clients one after another on exactly `workers` threads, plaintext: unary at every
    sequential profile, lock-step bidi at every sequential bidi profile."""
    per_client = matrix.sequential_orders_per_client
    modes = [("unary", p) for p in matrix.sequential_profiles]
    modes += [("bidi", p) for p in matrix.sequential_bidi_profiles]
    return [
        cell(
            run_id,
            matrix,
            profile,
            mode,
            "plaintext",
            n_clients,
            n_clients * per_client,
            repeat,
            matrix.workers,
            client_order="sequential",
        )
        for mode, profile in modes
        for n_clients in matrix.sequential_clients
        for repeat in range(1, matrix.repeats + 1)
    ]


def aa_pair_cells(run_id: str, matrix: Matrix) -> list[CellSpec]:
    """The A/A cells of `aa_pair`: a size the client can run (orders >= clients)."""
    return [twin for aa in matrix.aa_pair for twin in aa_pair_of(run_id, matrix, aa)]


def aa_pair_of(run_id: str, matrix: Matrix, aa: dict[str, Any]) -> list[CellSpec]:
    if aa["orders"] < aa["clients"]:
        raise MatrixError(f"{PREFIX}.aa_pair.orders: {aa['orders']} is below its clients")
    return aa_cells(
        lambda repeat: cell(
            run_id,
            matrix,
            aa["latency_profile"],
            aa["mode"],
            aa["security"],
            aa["clients"],
            aa["orders"],
            repeat,
        ),
        matrix.repeats,
    )
