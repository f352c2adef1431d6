"""Seed 000, hello server: req/s and latency of a compute-only unary RPC under ghz."""

from __future__ import annotations

import copy
from typing import Any

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.matrix import (
    HELLO_RPC,
    MatrixError,
    connections_suffix,
    ghz_connections,
    require_choice,
    require_positive_ints,
    require_positive_number,
    validate_implementations,
)

SCENARIOS = ("seed_n200", "steady")
PREFIX = "perflab_matrix_hello"
# More concurrent streams than ghz can open on one host.
MAX_CONCURRENCY = 10_000


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    impls = validate_implementations(
        f"{PREFIX}.implementations", config.get("implementations"), known_impls
    )
    selected = config.get("run_implementations") or list(impls)
    require_choice(f"{PREFIX}.run_implementations", selected, impls)
    scenarios = require_choice(f"{PREFIX}.scenarios", config.get("scenarios"), SCENARIOS)
    concurrencies = require_positive_ints(f"{PREFIX}.concurrency", config.get("concurrency"))
    for concurrency in concurrencies:
        if concurrency > MAX_CONCURRENCY:
            raise MatrixError(
                f"{PREFIX}.concurrency: {concurrency} is beyond what ghz can open on one host"
            )
    connections = ghz_connections(PREFIX, config, concurrencies)
    repeats = require_positive_ints(f"{PREFIX}.repeats", [config.get("repeats")])[0]
    seed_total = require_positive_ints(f"{PREFIX}.seed_total", [config.get("seed_total")])[0]
    duration_s = require_positive_number(
        f"{PREFIX}.steady_duration_s", config.get("steady_duration_s")
    )
    warmup_s = require_positive_number(f"{PREFIX}.warmup_s", config.get("warmup_s"))

    cells = []
    for name in selected:
        entry = impls[name]
        for scenario in scenarios:
            for concurrency in concurrencies:
                for conns in connections:
                    load = HELLO_RPC.load(concurrency, conns)
                    params: dict[str, Any] = {"concurrency": concurrency, "connections": conns}
                    if scenario == "seed_n200":
                        # The seed's exact shape; the warm-up is one more such batch, discarded.
                        load.total, load.warmup_total = seed_total, seed_total
                        params["total"] = seed_total
                    else:
                        load.duration_s, load.warmup_s = duration_s, warmup_s
                        params |= {"duration_s": duration_s, "warmup_s": warmup_s}
                    for repeat in range(1, repeats + 1):
                        cells.append(
                            CellSpec(
                                run_id=run_id,
                                study="hello",
                                cell_id=f"{name}-{scenario}-c{concurrency}"
                                f"{connections_suffix(conns)}-r{repeat}",
                                scenario=scenario,
                                implementation=name,
                                client="ghz",
                                params=dict(params),
                                repeat=repeat,
                                server=ServerSpec(
                                    impl=entry["impl"], options=dict(entry.get("options", {}))
                                ),
                                load=copy.deepcopy(load),
                            )
                        )
    return cells
