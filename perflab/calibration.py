"""Pick the load generator by calibration, and record the ceiling that marks cells "bound"."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from perflab.parsers import parse_ghz, read_raw_text


@dataclass
class Calibration:
    ghz_version: str
    ceiling_rps: float
    ceiling_concurrency: int
    # version -> concurrency -> the req/s of each repeat
    rps_by_version: dict[str, dict[int, list[float]]]
    server: str
    reason: str


def calibrate(run_dir: Path) -> Calibration:
    """The fastest ghz against the reference server, at the concurrency it does best.

    Per version and concurrency the median over repeats; a version's ceiling is its best
    concurrency (a fixed one underestimates it: ghz peaks below its own maximum
    concurrency on a small host); the version with the highest ceiling wins.
    """
    by_version: dict[str, dict[int, list[float]]] = {}
    server = ""
    for cell_json in sorted((run_dir / "calibration").glob("*/cell.json")):
        cell = json.loads(cell_json.read_text())
        if cell["status"] == "failed":
            continue
        server = cell["implementation"]
        ghz_path = cell_json.parent / "ghz.json"
        rps = next(
            m.value for m in parse_ghz(read_raw_text(ghz_path), ghz_path) if m.metric == "rps"
        )
        version = cell["spec"]["load"]["ghz_version"]
        concurrency = int(cell["spec"]["load"]["concurrency"])
        by_version.setdefault(version, {}).setdefault(concurrency, []).append(rps)
    if not by_version:
        raise RuntimeError(
            f"{run_dir / 'calibration'}: no successful calibration cell; see their cell.json errors"
        )
    best_of = {
        version: max((statistics.median(v), c) for c, v in levels.items())
        for version, levels in by_version.items()
    }
    best = max(best_of, key=lambda version: best_of[version][0])
    ceiling, concurrency = best_of[best]
    others = ", ".join(
        f"ghz {v}: {r:.0f} req/s" for v, (r, _) in sorted(best_of.items()) if v != best
    )
    reason = (
        f"ghz {best} reached {ceiling:.0f} req/s (concurrency {concurrency}) against {server} "
        "with the run's pinning"
        + (f" (vs {others})" if others else "")
        + "; the faster generator makes fewer cells bound by the load tool itself"
    )
    return Calibration(best, ceiling, concurrency, by_version, server, reason)


def write_calibration(run_dir: Path) -> Calibration:
    result = calibrate(run_dir)
    (run_dir / "calibration.json").write_text(json.dumps(asdict(result), indent=2))
    return result
