"""Pick the load generator by calibration, and record the ceiling that marks cells "bound".

Host side (`perflab calibrate`, run by playbooks/calibrate.yml): standard library only.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from perflab.contract.bounds import (
    BOUND_FRACTION,
    EffectiveCeiling,
    ceiling_sentence,
    effective_ceiling,
)
from perflab.contract.cell import iter_cells
from perflab.contract.parsers import parse_ghz, read_raw_text

# The effective ceiling (a cell faster than the calibration raises it) lives in
# perflab.contract.bounds, shared with the study pages that say which rates are lower bounds.
__all__ = [
    "BOUND_FRACTION",
    "Calibration",
    "EffectiveCeiling",
    "calibrate",
    "ceiling_sentence",
    "effective_ceiling",
    "write_calibration",
]


@dataclass
class Calibration:
    ghz_version: str
    ceiling_rps: float
    ceiling_concurrency: int
    # version -> level -> the req/s of each repeat; a level is the concurrency, or
    # "<concurrency>x<connections>" for a cell on more than one HTTP/2 connection.
    rps_by_version: dict[str, dict[int | str, list[float]]]
    server: str
    reason: str
    ceiling_connections: int = 1


def level(concurrency: int, connections: int) -> int | str:
    """How a calibration level is keyed: runs on one connection read as they always did."""
    return concurrency if connections == 1 else f"{concurrency}x{connections}"


def level_of(key: int | str) -> tuple[int, int]:
    """(concurrency, connections) of a level key."""
    concurrency, _, connections = str(key).partition("x")
    return int(concurrency), int(connections or 1)


def calibrate(run_dir: Path) -> Calibration:
    """The fastest ghz against the reference server, at the concurrency it does best.

    Per version and level (concurrency, and connections when more than one) the median over
    repeats; a version's ceiling is its best level (a fixed one underestimates it: ghz peaks
    below its own maximum concurrency on a small host); the version with the highest
    ceiling wins. Cells recorded before connections was a key ran one connection.
    """
    by_version: dict[str, dict[int | str, list[float]]] = {}
    server = ""
    for folder, cell in iter_cells(run_dir, "calibration"):
        if cell["status"] == "failed":
            continue
        server = cell["implementation"]
        ghz_path = folder / "ghz.json"
        rps = next(
            m.value for m in parse_ghz(read_raw_text(ghz_path), ghz_path) if m.metric == "rps"
        )
        load = cell["spec"]["load"]
        version = load["ghz_version"]
        key = level(int(load["concurrency"]), int(load.get("connections", 1)))
        by_version.setdefault(version, {}).setdefault(key, []).append(rps)
    if not by_version:
        raise RuntimeError(
            f"{run_dir / 'calibration'}: no successful calibration cell; see their cell.json errors"
        )
    best_of = {
        version: max((statistics.median(v), level_of(key)) for key, v in levels.items())
        for version, levels in by_version.items()
    }
    best = max(best_of, key=lambda version: best_of[version][0])
    ceiling, (concurrency, connections) = best_of[best]
    others = ", ".join(
        f"ghz {v}: {r:.0f} req/s" for v, (r, _) in sorted(best_of.items()) if v != best
    )
    reason = (
        f"ghz {best} reached {ceiling:.0f} req/s (concurrency {concurrency}"
        + (f", {connections} connections" if connections != 1 else "")
        + f") against {server} "
        "with the run's pinning"
        + (f" (vs {others})" if others else "")
        + "; the faster generator makes fewer cells bound by the load tool itself"
    )
    return Calibration(best, ceiling, concurrency, by_version, server, reason, connections)


def write_calibration(run_dir: Path) -> Calibration:
    result = calibrate(run_dir)
    (run_dir / "calibration.json").write_text(json.dumps(asdict(result), indent=2))
    return result
