"""The load generator's ceiling: every pinned ghz against the C++ reference server.

Run before any ghz study with the same pinning (playbooks/calibrate.yml); `ceiling` (beside
this module) then picks the ghz that reaches the higher rate and records the ceiling that
marks cells "bound". A pseudo-study: cells, but no playbook, notebook or published table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.contract.cell import CellSpec, ServerSpec
from perflab.contract.knobs import Impl, Int, Ints, Number, Texts, knob, validate
from perflab.contract.matrix import (
    HELLO_RPC,
    connections_knob,
    connections_suffix,
)

PREFIX = "perflab_matrix_calibration"


@dataclass(frozen=True)
class Matrix:
    """perflab_matrix_calibration (inventory/group_vars/all/calibration.yml)."""

    server: str = knob(Impl(), "the reference server, <language>/<folder>")
    ghz_versions: list[str] = knob(Texts("version strings"), "every pinned ghz, measured each")
    concurrency: list[int] = knob(Ints(), "ghz -c, one cell each; the ceiling is the best")
    connections: list[int] = connections_knob()
    duration_s: float = knob(Number(), "measured seconds per cell")
    warmup_s: float = knob(Number(), "discarded ghz run before every cell")
    repeats: int = knob(Int(), "cells per version and configuration")


def expand(run_id: str, config: dict[str, Any], known_impls: set[str]) -> list[CellSpec]:
    matrix = validate(Matrix, PREFIX, config, known_impls)
    return [
        CellSpec(
            run_id=run_id,
            study="calibration",
            cell_id=f"ghz-{version}-c{concurrency}{connections_suffix(conns)}-r{repeat}",
            scenario="ceiling",
            implementation=matrix.server.replace("/", "_"),
            client=f"ghz-{version}",
            params={
                "concurrency": concurrency,
                "connections": conns,
                "duration_s": matrix.duration_s,
                "warmup_s": matrix.warmup_s,
            },
            repeat=repeat,
            server=ServerSpec(impl=matrix.server),
            load=HELLO_RPC.load(
                concurrency,
                conns,
                duration_s=matrix.duration_s,
                warmup_s=matrix.warmup_s,
                ghz_version=version,
            ),
            bound_check=False,
        )
        for repeat in range(1, matrix.repeats + 1)
        for version in matrix.ghz_versions
        for concurrency in matrix.concurrency
        for conns in matrix.connections
    ]
