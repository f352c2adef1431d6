"""Seed 000, hello server: req/s and latency of a compute-only unary RPC under ghz."""

from __future__ import annotations

from typing import Any

from perflab.cell import CellSpec, LoadSpec, ServerSpec
from perflab.matrix import (
    MatrixError,
    require_choice,
    require_positive_ints,
    require_positive_number,
)

SCENARIOS = ("seed_n200", "steady")
PROTO = "hello.proto"
CALL = "helloworld.Greeter.SayHello"
REQUEST = {"name": "perflab"}


def validate_implementations(key: str, table: Any, known_impls: set[str]) -> dict[str, Any]:
    if not isinstance(table, dict) or not table:
        raise MatrixError(f"{key}: expected a mapping of implementation name to its folder")
    for name, entry in table.items():
        if not isinstance(entry, dict) or "impl" not in entry:
            raise MatrixError(f"{key}.{name}: expected {{impl: <language>/<folder>, options: ...}}")
        if entry["impl"] not in known_impls:
            raise MatrixError(
                f"{key}.{name}.impl: unknown server {entry['impl']!r}; known: {sorted(known_impls)}"
            )
        if not isinstance(entry.get("options", {}), dict):
            raise MatrixError(f"{key}.{name}.options: expected a mapping")
    return table


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    prefix = "perflab_matrix_hello"
    impls = validate_implementations(
        f"{prefix}.implementations", config.get("implementations"), known_impls
    )
    selected = config.get("run_implementations") or list(impls)
    require_choice(f"{prefix}.run_implementations", selected, impls)
    scenarios = require_choice(f"{prefix}.scenarios", config.get("scenarios"), SCENARIOS)
    concurrencies = require_positive_ints(f"{prefix}.concurrency", config.get("concurrency"))
    repeats = require_positive_ints(f"{prefix}.repeats", [config.get("repeats")])[0]
    seed_total = require_positive_ints(f"{prefix}.seed_total", [config.get("seed_total")])[0]
    duration_s = require_positive_number(
        f"{prefix}.steady_duration_s", config.get("steady_duration_s")
    )
    warmup_s = require_positive_number(f"{prefix}.warmup_s", config.get("warmup_s"))

    cells = []
    for name in selected:
        entry = impls[name]
        for scenario in scenarios:
            for concurrency in concurrencies:
                if concurrency > 10_000:
                    raise MatrixError(
                        f"{prefix}.concurrency: {concurrency} is beyond what ghz "
                        "can open on one host"
                    )
                for repeat in range(1, repeats + 1):
                    if scenario == "seed_n200":
                        # The seed's exact shape; the warm-up is one more such batch, discarded.
                        load = LoadSpec(
                            kind="ghz",
                            proto=PROTO,
                            call=CALL,
                            data=REQUEST,
                            concurrency=concurrency,
                            total=seed_total,
                            warmup_total=seed_total,
                        )
                        params = {"concurrency": concurrency, "total": seed_total}
                    else:
                        load = LoadSpec(
                            kind="ghz",
                            proto=PROTO,
                            call=CALL,
                            data=REQUEST,
                            concurrency=concurrency,
                            duration_s=duration_s,
                            warmup_s=warmup_s,
                        )
                        params = {
                            "concurrency": concurrency,
                            "duration_s": duration_s,
                            "warmup_s": warmup_s,
                        }
                    cells.append(
                        CellSpec(
                            run_id=run_id,
                            study="hello",
                            cell_id=f"{name}-{scenario}-c{concurrency}-r{repeat}",
                            scenario=scenario,
                            implementation=name,
                            client="ghz",
                            params=params,
                            repeat=repeat,
                            server=ServerSpec(
                                impl=entry["impl"], options=dict(entry.get("options", {}))
                            ),
                            load=load,
                        )
                    )
    return cells
