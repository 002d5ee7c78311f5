"""95% intervals for means of row scores in [0, 1], chosen by what the scores are: a Student-t
interval says nothing true at the edges (ten rows that all scored 1.0 give it zero width, as if
ten rows proved a perfect score)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist, fmean
from typing import Literal

# How a 95% interval was computed (evalq/stats/intervals.py): Wilson for 0/1 scores, a Wilson bound
# for scores that are all one value in (0, 1), a BCa bootstrap otherwise.
IntervalMethod = Literal["wilson", "wilson-bound", "bca"]
Z95 = 1.959963984540054
Bounds = tuple[float, float]

RESAMPLES = 2000
# Resampling n values B times draws n*B numbers. Scores usually take few distinct values (a
# row's share of a handful of questions), and then one multinomial draw over the distinct
# values replaces n draws; beyond that, fewer resamples (never under MIN_RESAMPLES) keep a
# 50k-row job's summary well under a second.
MAX_DISTINCT_FOR_COUNTS = 1024
MAX_DRAWS = 20_000_000
MIN_RESAMPLES = 500
_BLOCK_DRAWS = 4_000_000  # numbers per numpy block: bounded memory whatever n is
_EPS = 1e-9


def wilson(successes: float, n: int, z: float = Z95) -> Bounds | None:
    """Wilson score interval for a proportion (sound near 0 and 1, unlike p ± z·se)."""
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, center - half)  # exact at the edges, where
    high = 1.0 if successes >= n else min(1.0, center + half)  # rounding would shave them
    return low, high


def resample_means(
    values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0
) -> list[float]:
    """Means of ``resamples`` seeded bootstrap resamples (with replacement) of ``values``.
    numpy is imported here, when an interval is drawn, not with the module: a finished job's
    stored summary (`evalq status`) is read without it."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0 or resamples <= 0:
        return []
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(x, return_counts=True)
    if len(distinct) <= MAX_DISTINCT_FOR_COUNTS:
        drawn = rng.multinomial(n, counts / n, size=resamples)
        return [float(m) for m in drawn @ distinct / n]
    means: list[float] = []
    block = max(1, _BLOCK_DRAWS // n)
    while len(means) < resamples:
        size = min(block, resamples - len(means))
        picks = rng.integers(0, n, size=(size, n))
        means.extend(float(m) for m in x[picks].mean(axis=1))
    return means


def resamples_for(values: Sequence[float]) -> int:
    """RESAMPLES, or fewer when the values are many and nearly all distinct (see MAX_DRAWS)."""
    if len(set(values)) <= MAX_DISTINCT_FOR_COUNTS:
        return RESAMPLES
    return max(MIN_RESAMPLES, min(RESAMPLES, MAX_DRAWS // max(1, len(values))))


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already-sorted values (numpy's default method)."""
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    weight = position - low
    return sorted_values[low] * (1 - weight) + sorted_values[high] * weight


def bootstrap_percentile(
    values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0
) -> Bounds | None:
    """The 2.5% and 97.5% quantiles of the resampled means."""
    if len(values) < 2:
        return None
    means = sorted(resample_means(values, resamples, seed))
    return _quantile(means, 0.025), _quantile(means, 0.975)


def acceleration(values: Sequence[float]) -> float:
    """BCa's acceleration for a mean, from the jackknife in closed form: the leave-one-out
    means differ from the mean by (x_i - mean)/(n - 1), so a = sum d^3 / (6 (sum d^2)^1.5)."""
    mean = fmean(values)
    d2 = sum((v - mean) ** 2 for v in values)
    if d2 <= 0:
        return 0.0
    return sum((v - mean) ** 3 for v in values) / (6 * d2 * math.sqrt(d2))


def bootstrap_bca(
    values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0
) -> Bounds | None:
    """Efron's BCa interval: percentile levels moved by the bias (z0: where the observed mean
    sits among the resampled ones, ties counted half) and the skew (the acceleration). Falls
    back to the plain percentile interval when every resample lies on one side."""
    if len(values) < 2:
        return None
    mean = fmean(values)
    means = sorted(resample_means(values, resamples, seed))
    below = sum(m < mean - _EPS for m in means)
    ties = sum(abs(m - mean) <= _EPS for m in means)
    share = (below + 0.5 * ties) / len(means)
    if not 0 < share < 1:
        return _quantile(means, 0.025), _quantile(means, 0.975)
    normal = NormalDist()
    z0 = normal.inv_cdf(share)
    a = acceleration(values)

    def level(z: float) -> float:
        shifted = z0 + z
        return normal.cdf(z0 + shifted / (1 - a * shifted))

    return _quantile(means, level(-Z95)), _quantile(means, level(Z95))


def is_binary(values: Sequence[float]) -> bool:
    return all(abs(v) <= _EPS or abs(v - 1) <= _EPS for v in values)


@dataclass(frozen=True)
class MeanInterval:
    mean: float | None
    ci95: Bounds | None
    method: IntervalMethod | None
    n: int


JOB_SEED = 0  # the one seed of a job's own interval, wherever it is shown


def mean_interval(values: Sequence[float]) -> MeanInterval:
    """The mean of row scores in [0, 1] and the interval that suits them. Binary scores are a
    proportion: Wilson, honest near 0 and 1 (10/10 gives [0.722, 1.0]). Other scores are
    bounded and often skewed: a BCa bootstrap, which follows the skew, seeded with JOB_SEED
    and taken on the values sorted, so that status, leaderboard, compare and reports, each
    reading the rows in its own order, show one interval. Scores all one value strictly
    inside (0, 1) give it nothing to resample; a variable in [0, 1] with mean m has variance
    at most m(1 - m), so the Wilson interval of m is a conservative bound."""
    values = sorted(values)
    n = len(values)
    if n == 0:
        return MeanInterval(None, None, None, 0)
    mean = fmean(values)
    if is_binary(values):
        return MeanInterval(mean, wilson(sum(round(v) for v in values), n), "wilson", n)
    if max(values) - min(values) <= _EPS:
        return MeanInterval(mean, wilson(mean * n, n), "wilson-bound", n)
    bounds = bootstrap_bca(values, resamples_for(values), JOB_SEED)
    if bounds is not None:
        bounds = (max(0.0, bounds[0]), min(1.0, bounds[1]))
    return MeanInterval(mean, bounds, "bca", n)
