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
    rps_by_version: dict[str, list[float]]
    server: str
    reason: str


def calibrate(run_dir: Path) -> Calibration:
    """Median req/s of every ghz version against the reference server; the fastest wins."""
    by_version: dict[str, list[float]] = {}
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
        by_version.setdefault(cell["spec"]["load"]["ghz_version"], []).append(rps)
    if not by_version:
        raise RuntimeError(
            f"{run_dir / 'calibration'}: no successful calibration cell; see their cell.json errors"
        )
    medians = {version: statistics.median(values) for version, values in by_version.items()}
    best = max(medians, key=medians.__getitem__)
    others = ", ".join(f"ghz {v}: {r:.0f} req/s" for v, r in sorted(medians.items()) if v != best)
    reason = (
        f"ghz {best} reached {medians[best]:.0f} req/s against {server} with the run's pinning"
        + (f" (vs {others})" if others else "")
        + "; the faster generator makes fewer cells bound by the load tool itself"
    )
    return Calibration(best, medians[best], by_version, server, reason)


def write_calibration(run_dir: Path) -> Calibration:
    result = calibrate(run_dir)
    (run_dir / "calibration.json").write_text(json.dumps(asdict(result), indent=2))
    return result
