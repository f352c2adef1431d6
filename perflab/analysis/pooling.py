"""Random-effects pooling of one reading's effect across sites, on the log scale.

Each site brings an effect (the log of its ratio) and its standard error. The common effect
and the between-site variance tau^2 come from statsmodels' `combine_effects` with the
Paule-Mandel estimator of tau^2 (a kept implementation, checked against R's metafor). On
top of it, each with the coverage its method gives:

- the interval of the common effect: Hartung-Knapp-Sidik-Jonkman, t on k-1 degrees of
  freedom, never narrower than the plain random-effects interval (the "modified" HKSJ of
  Roever et al. 2015): with a handful of sites the normal interval covers far less than
  it says;
- the prediction interval for a new site: mu +- t(k-2) sqrt(tau^2 + se(mu)^2) (Higgins,
  Thompson and Spiegelhalter 2009), only with at least three sites;
- the interval of tau: the Q-profile (Viechtbauer 2007), exact under the normal model with
  the sites' standard errors taken as known; `make simulate-pooling` shows its coverage.

Pure numbers in, a record out: what a reading is and which runs make a site is
perflab.analysis.sites'.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

POOLED_COVERAGE = 0.95
TAU_METHOD = "Paule-Mandel"


@dataclass(frozen=True)
class Pooled:
    """One reading pooled over `k` sites, every figure on the log scale."""

    k: int
    estimate: float
    se: float
    low: float
    high: float
    coverage: float
    tau: float
    tau_low: float
    tau_high: float
    i2: float
    # None with fewer than three sites: t on k-2 degrees of freedom needs k >= 3.
    prediction: tuple[float, float] | None
    # The typical within-site standard error (the median), what tau is held against.
    within_se: float

    @property
    def depends_on_machine(self) -> bool:
        """The between-site spread is real (its interval excludes 0) and larger than the
        noise a single run sees of its own effect."""
        return self.k >= 2 and self.tau_low > 0 and self.tau > self.within_se

    def method(self) -> str:
        if self.k == 1:
            return "one site: its own interval"
        return (
            f"random effects over {self.k} sites ({TAU_METHOD} tau, Hartung-Knapp t on "
            f"{self.k - 1} df)"
        )


def inverse_variance(effects: Sequence[float], ses: Sequence[float]) -> tuple[float, float]:
    """The fixed-effect mean and its standard error: how runs of one site combine (they
    share the machine; only their own noise sets them apart)."""
    weights = [1 / se**2 for se in ses]
    total = math.fsum(weights)
    mean = math.fsum(w * y for w, y in zip(weights, effects, strict=True)) / total
    return mean, 1 / math.sqrt(total)


def generalized_q(effects: Sequence[float], variances: Sequence[float], tau2: float) -> float:
    weights = [1 / (v + tau2) for v in variances]
    mean = math.fsum(w * y for w, y in zip(weights, effects, strict=True)) / math.fsum(weights)
    return math.fsum(w * (y - mean) ** 2 for w, y in zip(weights, effects, strict=True))


def q_profile(
    effects: Sequence[float], variances: Sequence[float], coverage: float
) -> tuple[float, float]:
    """The Q-profile interval of tau^2: the tau^2 at which the generalized Q statistic meets
    the chi-square quantiles on k-1 df (0 where even tau^2 = 0 does not reach them)."""
    from scipy.optimize import brentq
    from scipy.stats import chi2

    k = len(effects)
    alpha = 1 - coverage

    def solve(target: float) -> float:
        if generalized_q(effects, variances, 0.0) <= target:
            return 0.0
        high = max(variances) + 1.0
        while generalized_q(effects, variances, high) > target:
            high *= 4
        return brentq(lambda t2: generalized_q(effects, variances, t2) - target, 0.0, high)

    return solve(chi2.ppf(1 - alpha / 2, k - 1)), solve(chi2.ppf(alpha / 2, k - 1))


def pool(
    effects: Sequence[float], ses: Sequence[float], coverage: float = POOLED_COVERAGE
) -> Pooled:
    """The sites' log effects and standard errors, pooled. One site is itself (tau = 0)."""
    if len(effects) != len(ses) or not effects:
        raise ValueError(f"pooling needs one standard error per effect: {effects!r}, {ses!r}")
    bad = [se for se in ses if not (se > 0 and math.isfinite(se))]
    if bad:
        raise ValueError(f"a standard error must be positive and finite, got {bad!r}")
    within = statistics.median(ses)
    k = len(effects)
    if k == 1:
        from scipy.stats import norm

        z = norm.ppf(0.5 + coverage / 2)
        y, se = effects[0], ses[0]
        return Pooled(1, y, se, y - z * se, y + z * se, coverage, 0.0, 0.0, 0.0, 0.0, None, se)
    return pool_sites(list(effects), list(ses), coverage, within)


def pool_sites(effects: list[float], ses: list[float], coverage: float, within: float) -> Pooled:
    import numpy as np
    from scipy.stats import t
    from statsmodels.stats.meta_analysis import combine_effects

    k = len(effects)
    variances = [se**2 for se in ses]
    with np.errstate(divide="ignore"):
        result = combine_effects(
            np.array(effects), np.array(variances), method_re="pm", alpha=1 - coverage
        )
    mu = float(result.mean_effect_re)
    tau2 = max(0.0, float(result.tau2))
    se = max(float(result.sd_eff_w_re), float(result.sd_eff_w_re_hksj))
    half = t.ppf(0.5 + coverage / 2, k - 1) * se
    prediction = None
    if k >= 3:
        spread = t.ppf(0.5 + coverage / 2, k - 2) * math.sqrt(tau2 + se**2)
        prediction = (mu - spread, mu + spread)
    tau2_low, tau2_high = q_profile(effects, variances, coverage)
    # I^2 from Q directly: statsmodels divides by Q, which is 0 when the sites agree exactly.
    q = float(result.q)
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    return Pooled(
        k,
        mu,
        se,
        mu - half,
        mu + half,
        coverage,
        math.sqrt(tau2),
        math.sqrt(tau2_low),
        math.sqrt(tau2_high),
        i2,
        prediction,
        within,
    )
