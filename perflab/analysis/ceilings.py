"""Which measured rates are lower bounds set by ghz: the run's effective ceiling.

Shared by the hello page (which names the lower bounds) and the verdict engine (which
keeps only the decisions a lower bound cannot overturn), so both use one rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from perflab.contract.bounds import effective_ceiling
from perflab.contract.cell import RunCell

if TYPE_CHECKING:
    import pandas as pd


def ghz_rates(frame: pd.DataFrame, cells: Iterable[RunCell]) -> dict[str, tuple[str, float]]:
    """ "<study>/<cell_id>" -> (the ghz version it ran, its req/s) for every ghz cell of the
    run (`cells`: the run's, A/A cells left out), calibration included (its cells name their
    version; a study cell records the one it used under tool_versions)."""
    rps = frame[frame["metric"] == "rps"].set_index(["study", "cell_id"])["value"]
    rates = {}
    for _, cell in cells:
        key = (cell["study"], cell["cell_id"])
        version = cell.get("spec", {}).get("load", {}).get("ghz_version") or cell.get(
            "tool_versions", {}
        ).get("ghz")
        if version and key in rps.index:
            rates[f"{key[0]}/{key[1]}"] = (str(version), float(rps[key]))
    return rates


def run_ceiling(manifest: dict[str, Any], frame: pd.DataFrame, cells: Iterable[RunCell]):
    """The run's effective ghz ceiling (`EffectiveCeiling`), or None without calibration."""
    cal = manifest.get("calibration") or {}
    if not cal.get("ghz_version") or not cal.get("ceiling_rps"):
        return None
    return effective_ceiling(
        str(cal["ghz_version"]), float(cal["ceiling_rps"]), ghz_rates(frame, cells)
    )
