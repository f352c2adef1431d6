"""Seed 003, orders: many clients sending stamped orders to a grpcio server.

Cells: mode (unary, bidi lock-step, bidi pipelined) x clients x orders x security
(plaintext, tls) x latency profile, on the topology the inventory names. Profiles that
add a delay run their own sizes (`delayed_clients`, `delayed_orders`). `orders` is the
total over all clients, as the seed's --count was; a cell needs orders >= clients. A
bidi stream holds one server thread for its whole life, so a cell gets at least one worker
per client; every mode gets the same, so unary and bidi are compared on the same server
(the `workers` param says what ran).
"""

from __future__ import annotations

from typing import Any

from perflab.contract.cell import CellSpec, LoadSpec, ServerSpec
from perflab.contract.latency import LATENCY_PROFILES
from perflab.contract.matrix import (
    MatrixError,
    require_choice,
    require_int_at_least,
    require_positive_ints,
    validate_named_impl,
)

PREFIX = "perflab_matrix_orders"
MODES = ("unary", "bidi", "bidi_pipelined")
SECURITY = ("plaintext", "tls")


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    server = validate_named_impl(f"{PREFIX}.server", config.get("server"), known_impls)
    client = validate_named_impl(f"{PREFIX}.client", config.get("client"), known_impls)
    modes = require_choice(f"{PREFIX}.modes", config.get("modes"), MODES)
    security = require_choice(f"{PREFIX}.security", config.get("security"), SECURITY)
    profiles = require_choice(
        f"{PREFIX}.latency_profiles", config.get("latency_profiles", ["none"]), LATENCY_PROFILES
    )
    clients = require_positive_ints(f"{PREFIX}.clients", config.get("clients"))
    orders = require_positive_ints(f"{PREFIX}.orders", config.get("orders"))
    workers = require_int_at_least(f"{PREFIX}.workers", config.get("workers"))
    warmup = require_int_at_least(f"{PREFIX}.warmup", config.get("warmup"), minimum=0)
    repeats = require_int_at_least(f"{PREFIX}.repeats", config.get("repeats"))
    topology = config.get("topology", "localhost")
    if not isinstance(topology, str) or not topology:
        raise MatrixError(f"{PREFIX}.topology: {topology!r} is not a topology name")
    tls_dir = config.get("tls_dir", "")
    if not isinstance(tls_dir, str):
        raise MatrixError(f"{PREFIX}.tls_dir: {tls_dir!r} is not a path")
    timeout_s = config.get("timeout_s", 600)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or timeout_s <= 0:
        raise MatrixError(f"{PREFIX}.timeout_s: {timeout_s!r} is not a positive number")

    # A delay makes each order slow: cells with a delayed profile take their own, smaller sizes.
    delayed_clients = require_positive_ints(
        f"{PREFIX}.delayed_clients", config.get("delayed_clients", clients)
    )
    delayed_orders = require_positive_ints(
        f"{PREFIX}.delayed_orders", config.get("delayed_orders", orders)
    )
    sizes = {
        False: [(c, n) for c in clients for n in orders if n >= c],
        True: [(c, n) for c in delayed_clients for n in delayed_orders if n >= c],
    }
    for delayed, key in ((False, "orders"), (True, "delayed_orders")):
        if not sizes[delayed]:
            raise MatrixError(f"{PREFIX}.{key}: every value is below every clients value")
    cells = []
    for profile in profiles:
        pairs = sizes[bool(LATENCY_PROFILES[profile])]
        one_way_ms = LATENCY_PROFILES[profile]
        # The runner puts the profile's proxy between client and server ("none": no proxy).
        proxies = [] if one_way_ms is None else [{"caller": "load", "one_way_ms": one_way_ms}]
        for mode in modes:
            for sec in security:
                for n_clients, n_orders in pairs:
                    # The same for every mode: more threads on one side would confound them.
                    cell_workers = max(workers, n_clients)
                    params = {
                        "mode": mode,
                        "clients": n_clients,
                        "orders": n_orders,
                        "security": sec,
                        "workers": cell_workers,
                        "topology": topology,
                        "latency_profile": profile,
                    }
                    server_options = {"workers": cell_workers, "security": sec}
                    client_options = {
                        "mode": mode,
                        "clients": n_clients,
                        "orders": n_orders,
                        "warmup": warmup,
                        "security": sec,
                    }
                    if tls_dir:
                        server_options["tls_dir"] = client_options["tls_dir"] = tls_dir
                    for repeat in range(1, repeats + 1):
                        suffix = "" if profile == "none" else f"-{profile}"
                        cells.append(
                            CellSpec(
                                run_id=run_id,
                                study="orders",
                                cell_id=f"{mode}-{sec}-c{n_clients}-n{n_orders}{suffix}-r{repeat}",
                                scenario=f"{topology}_{mode}",
                                implementation=server["name"],
                                client=client["name"],
                                params=dict(params),
                                repeat=repeat,
                                server=ServerSpec(
                                    impl=server["impl"],
                                    options=dict(server_options),
                                ),
                                load=LoadSpec(
                                    kind="client",
                                    client_impl=client["impl"],
                                    client_options=dict(client_options),
                                    timeout_s=float(timeout_s),
                                ),
                                latency_proxies=[dict(e) for e in proxies],
                            )
                        )
    return cells
