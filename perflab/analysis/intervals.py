"""Intervals whose coverage is exact for the number of repeats a run really has.

A percentile bootstrap of the median of 3 repeats always returns [min, max] and covers
the median about 75% of the time, whatever it is labelled. These intervals are
distribution-free and carry the coverage their method gives for the sample sizes at hand;
where the sizes cannot reach the target, the widest interval is returned with its true
(lower) coverage, and the caller decides whether that is enough.

Pure Python (math only): the verdict engine and the tables both use it, and its numbers
are easy to recompute by hand.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

TARGET_COVERAGE = 0.95


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    coverage: float
    method: str

    def label(self) -> str:
        """e.g. '90% exact Mann-Whitney interval': the coverage is what the method gives."""
        return f"{math.floor(self.coverage * 100 + 1e-9):.0f}% {self.method}"


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    # In logs: comb(n, i) overflows a float beyond a thousand or so calls.
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n = math.lgamma(n + 1)
    return math.fsum(
        math.exp(log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)
        for i in range(k + 1)
    )


def median_interval(values: Sequence[float], target: float = TARGET_COVERAGE) -> Interval | None:
    """Exact order-statistic interval for the population median: [x_(k), x_(n+1-k)].

    Its coverage is 1 - 2 P(Bin(n, 1/2) <= k-1), exact for any continuous distribution.
    The largest k reaching `target` is used; with too few values, k = 1 (the range) and
    its true coverage (3 values: 75%). None with fewer than two values.
    """
    data = sorted(v for v in values if v == v)
    n = len(data)
    if n < 2:
        return None
    best = 1
    for k in range(1, n // 2 + 1):
        if 1 - 2 * binomial_cdf(k - 1, n, 0.5) >= target:
            best = k
    coverage = 1 - 2 * binomial_cdf(best - 1, n, 0.5)
    method = "range of the repeats" if best == 1 else "exact order-statistic interval"
    return Interval(data[best - 1], data[n - best], coverage, method)


@cache
def mann_whitney_counts(n: int, m: int) -> tuple[int, ...]:
    """Number of orderings of n x's and m y's giving each U = 0..n*m (no ties)."""
    if n == 0 or m == 0:
        return (1,)
    # The largest value is an x (it beats all m y's) or a y (it beats none of the x's).
    with_x = mann_whitney_counts(n - 1, m)
    with_y = mann_whitney_counts(n, m - 1)
    counts = [0] * (n * m + 1)
    for u, count in enumerate(with_x):
        counts[u + m] += count
    for u, count in enumerate(with_y):
        counts[u] += count
    return tuple(counts)


def mann_whitney_cdf(u: int, n: int, m: int) -> float:
    """P(U <= u) under the null hypothesis that both samples come from one distribution."""
    if u < 0:
        return 0.0
    counts = mann_whitney_counts(n, m)
    return sum(counts[: u + 1]) / math.comb(n + m, n)


def ratio_interval(
    numerator: Sequence[float], denominator: Sequence[float], target: float = TARGET_COVERAGE
) -> Interval | None:
    """Exact interval for the factor between two groups of positive values.

    The Moses interval of the Mann-Whitney test on log values: of the n*m pairwise
    ratios x_i / y_j, sorted, [r_(k), r_(nm+1-k)] covers the true factor with probability
    1 - 2 P(U <= k-1), assuming the groups differ by a factor (a shift on the log scale).
    3 vs 3 repeats reach 90% at most; 4 vs 4 reach 97%. None when a side has no value or a
    value is not positive (a ratio of those says nothing).
    """
    xs = [v for v in numerator if v == v]
    ys = [v for v in denominator if v == v]
    if not xs or not ys or min(xs) <= 0 or min(ys) <= 0:
        return None
    n, m = len(xs), len(ys)
    ratios = sorted(x / y for x in xs for y in ys)
    best = 1
    for k in range(1, (n * m) // 2 + 1):
        if 1 - 2 * mann_whitney_cdf(k - 1, n, m) >= target:
            best = k
    coverage = max(0.0, 1 - 2 * mann_whitney_cdf(best - 1, n, m))
    return Interval(ratios[best - 1], ratios[n * m - best], coverage, "exact Mann-Whitney interval")


def clopper_pearson(errors: int, calls: int, confidence: float = TARGET_COVERAGE) -> Interval:
    """Exact binomial interval for an error rate (at least `confidence` coverage)."""
    if calls <= 0:
        raise ValueError("an error rate needs at least one call")
    alpha = (1 - confidence) / 2

    def solve(target_cdf: float, k: int) -> float:
        # P(X <= k) falls as p grows: bisect for the p where it equals target_cdf.
        lo, hi = 0.0, 1.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if binomial_cdf(k, calls, mid) > target_cdf:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if errors == 0 else solve(1 - alpha, errors - 1)
    high = 1.0 if errors == calls else solve(alpha, errors)
    return Interval(low, high, confidence, "exact Clopper-Pearson interval")


def hodges_lehmann_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The factor the Moses interval (`ratio_interval`) is centred on: the median of the
    n*m pairwise ratios x_i / y_j (with an even count, the geometric mean of the middle two,
    the median on the log scale the interval works on). It always lies inside that interval,
    which the ratio of the two medians need not (issue 18: hello c50 showed 1.60 in
    [1.12, 1.64]). NaN when a side has no positive value."""
    xs = [v for v in numerator if v == v]
    ys = [v for v in denominator if v == v]
    if not xs or not ys or min(xs) <= 0 or min(ys) <= 0:
        return math.nan
    ratios = sorted(x / y for x in xs for y in ys)
    middle = len(ratios) // 2
    if len(ratios) % 2:
        return ratios[middle]
    return math.sqrt(ratios[middle - 1] * ratios[middle])


def highest_ratio_coverage(n: int, m: int) -> float:
    """The most an exact Mann-Whitney interval of n vs m repeats can cover (its widest,
    [min ratio, max ratio]): 3 vs 3 give 90%, 4 vs 4 97.1%, 5 vs 5 99.2%."""
    if n < 1 or m < 1:
        return 0.0
    return max(0.0, 1 - 2 / math.comb(n + m, n))


def bernoulli_divergence(mean: float, mu: float) -> float:
    """KL(mean || mu) of two Bernoulli distributions, the exponent of the Chernoff-Hoeffding
    bound on a mean of values in [0, 1]."""

    def term(a: float, b: float) -> float:
        return 0.0 if a <= 0 else a * math.log(a / b)

    mu = min(max(mu, 1e-300), 1 - 1e-16)
    return term(mean, mu) + term(1 - mean, 1 - mu)


def clustered_rate_interval(
    rates: Sequence[float], confidence: float = TARGET_COVERAGE
) -> Interval:
    """Interval for the mean error rate per cell, each cell one trial whatever its calls.

    Calls in a cell share a connection and a server, so their failures cluster: pooling
    calls as independent trials (Clopper-Pearson over calls) calls 0 of 170 calls 'below
    2.2%'. Here each cell's rate, a value in [0, 1], is one independent observation and the
    Chernoff-Hoeffding bound P(mean - mu >= t) <= exp(-n KL(mu + t || mu)), valid for any
    distribution on [0, 1], gives each side (1 - confidence) / 2: at least `confidence`
    coverage, however the failures cluster within cells. With no error in 6 cells the upper
    end is 1 - 0.025^(1/6) = 46%; all errors in one cell of six give a wide interval.
    """
    values = [min(max(float(r), 0.0), 1.0) for r in rates if r == r]
    if not values:
        raise ValueError("an error rate needs at least one cell")
    n, mean = len(values), statistics.fmean(values)
    budget = math.log(2 / (1 - confidence)) / n

    def solve(lo: float, hi: float, upward: bool) -> float:
        # The divergence grows as mu moves away from the mean: bisect for where it hits the budget.
        for _ in range(200):
            mid = (lo + hi) / 2
            inside = bernoulli_divergence(mean, mid) <= budget
            lo, hi = (mid, hi) if inside == upward else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if bernoulli_divergence(mean, 0.0) <= budget else solve(0.0, mean, upward=False)
    high = 1.0 if bernoulli_divergence(mean, 1.0) <= budget else solve(mean, 1.0, upward=True)
    return Interval(low, high, confidence, f"Chernoff-Hoeffding interval over {n} cells")


def highest_sign_coverage(rounds: int) -> float:
    """The most an exact sign interval of `rounds` paired ratios can cover (their range):
    3 rounds 75%, 4 87.5%, 5 93.75%, 6 96.9%."""
    return 0.0 if rounds < 2 else 1 - 2 * 0.5**rounds


def paired_ratio_interval(
    pairs: Sequence[tuple[float, float]], target: float = TARGET_COVERAGE
) -> Interval | None:
    """Exact interval for the median of the per-round ratios x_r / y_r of two groups
    measured in the same rounds: the sign (order-statistic) interval of those ratios,
    distribution-free, coverage 1 - 2 P(Bin(n, 1/2) <= k-1) for n rounds. A drift that moves
    both groups of a round alike cancels in its ratio, where the unpaired Moses interval
    counts it as spread. None with fewer than two rounds or a value that is not positive."""
    ratios = paired_ratios(pairs)
    if ratios is None:
        return None
    interval = median_interval(ratios, target)
    if interval is None:
        return None
    return Interval(
        interval.low,
        interval.high,
        interval.coverage,
        f"exact sign interval of {len(ratios)} rounds",
    )


def paired_ratio_effect(pairs: Sequence[tuple[float, float]]) -> float:
    """The median of the per-round ratios (with an even count, the geometric mean of the
    middle two: the median on the log scale), the centre of `paired_ratio_interval`."""
    ratios = paired_ratios(pairs)
    if not ratios:
        return math.nan
    ordered, middle = sorted(ratios), len(ratios) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return math.sqrt(ordered[middle - 1] * ordered[middle])


def paired_ratios(pairs: Sequence[tuple[float, float]]) -> list[float] | None:
    """x / y per round; None when a value is missing or not positive."""
    kept = [(x, y) for x, y in pairs if x == x and y == y]
    if len(kept) != len(pairs) or any(x <= 0 or y <= 0 for x, y in kept):
        return None
    return [x / y for x, y in kept]


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function (a continued fraction, Lentz's
    method): the CDF of a Beta(a, b) at x, and through it Student's t and the binomial."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    # The continued fraction converges fast only left of the mode: use the symmetry beyond it.
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(b, a, 1.0 - x)
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * result / a


def bisect(function: object, target: float, low: float, high: float) -> float:
    """The x in [low, high] where an increasing `function` reaches `target`."""
    assert callable(function)
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if function(middle) < target else (low, middle)
    return (low + high) / 2


def student_t_cdf(t: float, df: float) -> float:
    tail = 0.5 * regularized_beta(df / 2, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@cache
def student_t_quantile(probability: float, df: float) -> float:
    """The t with P(T <= t) = probability, for `df` degrees of freedom."""
    if probability == 0.5:
        return 0.0
    if probability < 0.5:
        return -student_t_quantile(1 - probability, df)
    high = 1.0
    while student_t_cdf(high, df) < probability:
        high *= 2
    return bisect(lambda t: student_t_cdf(t, df), probability, 0.0, high)


def beta_quantile(probability: float, a: float, b: float) -> float:
    return bisect(lambda x: regularized_beta(a, b, x), probability, 0.0, 1.0)


def paired_log_t_interval(
    pairs: Sequence[tuple[float, float]], target: float = TARGET_COVERAGE
) -> Interval | None:
    """Interval for the factor between two groups measured in the same rounds: Student's t
    on the per-round log ratios log(x_r / y_r), back on the ratio scale. A drift that moves
    both groups of a round alike cancels in its ratio, and the spreads of the two groups
    need not be equal (only the ratio's spread counts), so 3 rounds reach any coverage
    (t with 2 degrees of freedom). Its coverage is exact when the log ratios are normal:
    perflab.analysis.simulation checks it on log-normal data with unequal spreads and
    round effects (tests/test_simulation.py). None with fewer than two rounds or a value
    that is not positive."""
    ratios = paired_ratios(pairs)
    if ratios is None or len(ratios) < 2:
        return None
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    centre, half = statistics.fmean(logs), log_t_half_width(log_spread(logs), n, target)
    return Interval(
        math.exp(centre - half), math.exp(centre + half), target, f"paired t interval of {n} rounds"
    )


def log_t_half_width(spread: float, rounds: int, target: float = TARGET_COVERAGE) -> float:
    """Half the width, on the log scale, of the paired t interval of `rounds` per-round log
    ratios whose sample SD is `spread` (paired_log_t_interval's, and perflab.analysis
    .multiplicity's at other coverages)."""
    return student_t_quantile(1 - (1 - target) / 2, rounds - 1) * spread / math.sqrt(rounds)


def paired_log_t_bounds(
    logs: np.ndarray, target: float = TARGET_COVERAGE
) -> tuple[np.ndarray, np.ndarray]:
    """`paired_log_t_interval`'s low and high ends for many runs at once: `logs` a numpy
    array, one row of per-round log ratios per run (at least two rounds). The same t
    interval in numpy rather than in exact sums: the power simulations
    (perflab.analysis.power) ask for hundreds of thousands of them."""
    import numpy as np

    rounds = logs.shape[1]
    half = (
        student_t_quantile(1 - (1 - target) / 2, rounds - 1)
        * logs.std(axis=1, ddof=1)
        / math.sqrt(rounds)
    )
    centres = logs.mean(axis=1)
    return np.exp(centres - half), np.exp(centres + half)


def log_spread(logs: Sequence[float]) -> float:
    """The sample SD of per-round log ratios, in floats: statistics.stdev computes it in
    exact fractions, five times slower, and the power simulations (perflab.analysis.power)
    draw it millions of times; the two agree to the last digit or so."""
    centre = statistics.fmean(logs)
    return math.sqrt(math.fsum((x - centre) ** 2 for x in logs) / (len(logs) - 1))


def paired_log_spread(pairs: Sequence[tuple[float, float]]) -> float | None:
    """The SD of the per-round log ratios (what perflab.analysis.power calls sigma); None
    with fewer than two rounds or a value that is not positive."""
    ratios = paired_ratios(pairs)
    if ratios is None or len(ratios) < 2:
        return None
    return log_spread([math.log(r) for r in ratios])


def paired_log_mean_ratio(pairs: Sequence[tuple[float, float]]) -> float:
    """The geometric mean of the per-round ratios, the centre of `paired_log_t_interval`."""
    ratios = paired_ratios(pairs)
    if not ratios:
        return math.nan
    return math.exp(statistics.fmean(math.log(r) for r in ratios))


@dataclass(frozen=True)
class CellCount:
    """One cell's calls and how many of them failed."""

    errors: int
    calls: int


def intraclass_correlation(cells: Sequence[CellCount]) -> float:
    """How alike the calls of one cell fail, from the between-cell variance (the ANOVA
    estimator for binary outcomes), in [0, 1]: 0 with one cell, no failure, every call
    failed, or no spread between cells."""
    total = sum(cell.calls for cell in cells)
    k = len(cells)
    errors = sum(cell.errors for cell in cells)
    if k < 2 or total <= k or errors in (0, total):
        return 0.0
    rate = errors / total
    between = sum(c.calls * (c.errors / c.calls - rate) ** 2 for c in cells) / (k - 1)
    within = sum(c.errors * (1 - c.errors / c.calls) for c in cells) / (total - k)
    size = (total - sum(c.calls**2 for c in cells) / total) / (k - 1)
    denominator = between + (size - 1) * within
    return 0.0 if denominator <= 0 else max(0.0, min(1.0, (between - within) / denominator))


def design_effect(cells: Sequence[CellCount]) -> float:
    """How much clustering within cells inflates the variance of the pooled error rate:
    1 + (mean calls per cell - 1) x the intraclass correlation. Never below 1: with one
    cell, or no spread between cells, it is 1 (calls as independent trials)."""
    if len(cells) < 2:
        return 1.0
    mean = sum(cell.calls for cell in cells) / len(cells)
    return max(1.0, 1 + (mean - 1) * intraclass_correlation(cells))


def clustered_error_bounds(
    errors: np.ndarray, calls: Sequence[int], confidence: float = TARGET_COVERAGE
) -> tuple[np.ndarray, np.ndarray]:
    """`clustered_error_interval`'s low and high ends for many runs at once: `errors` a
    numpy array, one row per run of each cell's failed calls, `calls` each cell's calls (the
    same cells in every run, each with calls). The same design effect, Korn and Graubard
    step and Clopper-Pearson ends, with scipy's inverse incomplete beta for the bisection:
    the error-rate power simulation (perflab.analysis.error_power) asks for thousands of
    them, at some 8 ms each one by one."""
    import numpy as np
    from scipy.special import betaincinv

    counts = np.asarray(calls, dtype=float)
    errors = np.asarray(errors, dtype=float)
    k, total = len(counts), counts.sum()
    failed = errors.sum(axis=1)
    rate = failed / total
    effect = np.ones(len(errors))
    if k >= 2 and total > k:
        shares = errors / counts
        between = (counts * (shares - rate[:, None]) ** 2).sum(axis=1) / (k - 1)
        within = (errors * (1 - shares)).sum(axis=1) / (total - k)
        size = (total - (counts**2).sum() / total) / (k - 1)
        denominator = between + (size - 1) * within
        with np.errstate(divide="ignore", invalid="ignore"):
            icc = np.where(
                denominator <= 0, 0.0, np.clip((between - within) / denominator, 0.0, 1.0)
            )
        clustered = (failed > 0) & (failed < total)
        effect = np.where(clustered, np.maximum(1.0, 1 + (total / k - 1) * icc), 1.0)
    alpha = (1 - confidence) / 2
    size = total / effect
    if k >= 2:
        z = statistics.NormalDist().inv_cdf(1 - alpha)
        step = (z / student_t_quantile(1 - alpha, k - 1)) ** 2
        size = np.where(effect > 1, size * step, size)
    hits = rate * size
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(hits <= 0, 0.0, betaincinv(hits, size - hits + 1, alpha))
        high = np.where(hits >= size, 1.0, betaincinv(hits + 1, size - hits, 1 - alpha))
    return low, high


def clustered_error_interval(
    cells: Sequence[CellCount], confidence: float = TARGET_COVERAGE, correct: bool = True
) -> Interval:
    """Interval for an error rate over calls that fail in clusters (a cell's calls share a
    connection and a server): Korn and Graubard's Clopper-Pearson interval on the effective
    sample size, the calls divided by the design effect the between-cell variance gives
    (`design_effect`), shrunk further for the few cells that variance comes from. Failures
    spread evenly over cells count as calls; failures that come in whole cells count as cells.
    `correct=False` leaves the clustering out (calls as independent trials), for the
    simulation suite to show what that costs."""
    cells = [cell for cell in cells if cell.calls > 0]
    if not cells:
        raise ValueError("an error rate needs at least one cell with calls")
    calls = sum(cell.calls for cell in cells)
    rate = sum(cell.errors for cell in cells) / calls
    effect = design_effect(cells) if correct else 1.0
    size = calls / effect
    if correct and effect > 1:
        # Korn and Graubard's degrees-of-freedom step: the variance comes from k cells, so
        # the effective size shrinks by (z / t with k - 1 degrees of freedom) squared.
        alpha = (1 - confidence) / 2
        z = statistics.NormalDist().inv_cdf(1 - alpha)
        size *= (z / student_t_quantile(1 - alpha, len(cells) - 1)) ** 2
    hits = rate * size
    alpha = (1 - confidence) / 2
    low = 0.0 if hits <= 0 else beta_quantile(alpha, hits, size - hits + 1)
    high = 1.0 if hits >= size else beta_quantile(1 - alpha, hits + 1, size - hits)
    how = f"design effect {effect:.1f}" if effect > 1 else "no spread between cells"
    return Interval(
        low,
        high,
        confidence,
        f"clustered Clopper-Pearson interval over {calls} calls in {len(cells)} cells ({how})",
    )
