"""The load generator's ceiling: every pinned ghz against the C++ reference server.

Run before any ghz study with the same pinning (playbooks/calibrate.yml); `ceiling` (beside
this module) then picks the ghz that reaches the higher rate and records the ceiling that
marks cells "bound". A pseudo-study: cells, but no playbook, notebook or published table.
"""

from __future__ import annotations

from typing import Any

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.matrix import (
    HELLO_RPC,
    MatrixError,
    connections_suffix,
    ghz_connections,
    require_positive_ints,
    require_positive_number,
)


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    prefix = "perflab_matrix_calibration"
    server = config.get("server")
    if server not in known_impls:
        raise MatrixError(
            f"{prefix}.server: unknown server {server!r}; known: {sorted(known_impls)}"
        )
    versions = config.get("ghz_versions")
    if (
        not isinstance(versions, list)
        or not versions
        or not all(isinstance(v, str) for v in versions)
    ):
        raise MatrixError(f"{prefix}.ghz_versions: expected a list of version strings")
    concurrencies = require_positive_ints(f"{prefix}.concurrency", config.get("concurrency"))
    connections = ghz_connections(prefix, config, concurrencies)
    duration_s = require_positive_number(f"{prefix}.duration_s", config.get("duration_s"))
    warmup_s = require_positive_number(f"{prefix}.warmup_s", config.get("warmup_s"))
    repeats = require_positive_ints(f"{prefix}.repeats", [config.get("repeats")])[0]
    return [
        CellSpec(
            run_id=run_id,
            study="calibration",
            cell_id=f"ghz-{version}-c{concurrency}{connections_suffix(conns)}-r{repeat}",
            scenario="ceiling",
            implementation=server.replace("/", "_"),
            client=f"ghz-{version}",
            params={
                "concurrency": concurrency,
                "connections": conns,
                "duration_s": duration_s,
                "warmup_s": warmup_s,
            },
            repeat=repeat,
            server=ServerSpec(impl=server),
            load=HELLO_RPC.load(
                concurrency,
                conns,
                duration_s=duration_s,
                warmup_s=warmup_s,
                ghz_version=version,
            ),
            bound_check=False,
        )
        for repeat in range(1, repeats + 1)
        for version in versions
        for concurrency in concurrencies
        for conns in connections
    ]
