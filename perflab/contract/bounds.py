"""Which measured rates are lower bounds set by the load generator, not the server.

Host side and analysis alike: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

# A cell above this share of the load generator's ceiling is read as a lower bound (the
# runner marks it `bound` against the calibrated ceiling at run time).
BOUND_FRACTION = 0.7
# The metric that status is about (the runner compares a cell's req/s with the ceiling):
# only it is a lower bound. A bound cell's latency and CPU per call are what was measured,
# not bounds either way.
FLOORED_METRICS = frozenset({"rps"})


@dataclass(frozen=True)
class EffectiveCeiling:
    """What one ghz version is known to reach in a run: its calibration, or more.

    Calibration measures the C++ server for a few seconds; a study cell can go faster
    (up to 109% of it in the reference run), so a ceiling a cell exceeds is no ceiling.
    The effective one is the higher of the calibration and the fastest cell run with the
    same ghz version.
    """

    ghz_version: str
    calibrated_rps: float
    effective_rps: float
    fastest_cell: str  # "<study>/<cell_id>" that set it, "" when calibration did

    @property
    def bound_rps(self) -> float:
        """Rates above this are lower bounds."""
        return BOUND_FRACTION * self.effective_rps


def effective_ceiling(
    ghz_version: str, calibrated_rps: float, rates: dict[str, tuple[str, float]]
) -> EffectiveCeiling:
    """`rates`: "<study>/<cell_id>" -> (the ghz version the cell ran, its req/s)."""
    same = {cell: rps for cell, (version, rps) in rates.items() if version == ghz_version}
    fastest = max(same, key=lambda cell: same[cell], default="")
    if fastest and same[fastest] > calibrated_rps:
        return EffectiveCeiling(ghz_version, calibrated_rps, same[fastest], fastest)
    return EffectiveCeiling(ghz_version, calibrated_rps, calibrated_rps, "")


def ceiling_sentence(ceiling: EffectiveCeiling) -> str:
    """Markdown: which ceiling marks lower bounds here, generated from the numbers."""
    limit = f"{BOUND_FRACTION:.0%} of it ({ceiling.bound_rps:,.0f} req/s)"
    if not ceiling.fastest_cell:
        return (
            f"No cell ran faster than ghz {ceiling.ghz_version}'s calibrated ceiling "
            f"({ceiling.calibrated_rps:,.0f} req/s): rates above {limit} are read as lower "
            "bounds set by ghz, not the server."
        )
    share = ceiling.effective_rps / ceiling.calibrated_rps
    return (
        f"Cell `{ceiling.fastest_cell}` reached {ceiling.effective_rps:,.0f} req/s with ghz "
        f"{ceiling.ghz_version}, {share:.0%} of its calibrated ceiling "
        f"({ceiling.calibrated_rps:,.0f} req/s), so that is no ceiling: the effective one is "
        f"the fastest rate ghz reached in this run, and rates above {limit} are read as lower "
        "bounds set by ghz, not the server (the cells' recorded status used the calibration)."
    )
