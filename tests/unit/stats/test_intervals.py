"""The interval maths (evalq/stats/intervals.py) against known values; pure functions only."""

from __future__ import annotations

import itertools
import math
import random
from statistics import NormalDist, fmean, pstdev

import pytest

from evalq.stats.intervals import (
    MIN_RESAMPLES,
    RESAMPLES,
    Z95,
    acceleration,
    bootstrap_bca,
    bootstrap_percentile,
    mean_interval,
    resample_means,
    resamples_for,
    wilson,
)


def test_wilson_for_ten_out_of_ten_is_not_zero_wide() -> None:
    low, high = wilson(10, 10) or (0.0, 0.0)
    assert (round(low, 3), high) == (0.722, 1.0)


def test_wilson_known_values() -> None:
    low, high = wilson(6, 10) or (0.0, 0.0)
    assert (round(low, 4), round(high, 4)) == (0.3127, 0.8318)
    low, high = wilson(0, 10) or (1.0, 1.0)
    assert (low, round(high, 4)) == (0.0, 0.2775)
    low, high = wilson(1, 1) or (0.0, 0.0)
    assert (round(low, 4), high) == (0.2065, 1.0)
    assert wilson(0, 0) is None


def _compositions(n: int) -> list[tuple[int, ...]]:
    """Every way n draws with replacement can land on n values (as counts)."""
    out = []
    for bars in itertools.combinations(range(2 * n - 1), n - 1):
        edges = (-1, *bars, 2 * n - 1)
        out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(n)))
    return out


def _exact_bootstrap(values: list[float]) -> list[tuple[float, float]]:
    """The exact bootstrap distribution of the mean: (mean, probability), sorted."""
    n = len(values)
    dist: dict[float, float] = {}
    for counts in _compositions(n):
        p = math.factorial(n) / math.prod(math.factorial(c) for c in counts) / n**n
        m = round(sum(c * v for c, v in zip(counts, values, strict=True)) / n, 12)
        dist[m] = dist.get(m, 0.0) + p
    return sorted(dist.items())


def _exact_quantile(dist: list[tuple[float, float]], level: float) -> float:
    total = 0.0
    for m, p in dist:
        total += p
        if total >= level - 1e-12:
            return m
    return dist[-1][0]


SKEWED = [1.0, 0.75, 1.0, 0.5, 1.0, 0.0, 1.0, 0.75, 1.0, 0.25]  # means move in 0.025 steps


def test_percentile_and_bca_match_the_exact_bootstrap_distribution() -> None:
    dist = _exact_bootstrap(SKEWED)
    assert sum(p for _, p in dist) == pytest.approx(1.0)
    mean = fmean(SKEWED)
    normal = NormalDist()
    z0 = normal.inv_cdf(
        sum(p for m, p in dist if m < mean - 1e-9)
        + 0.5 * sum(p for m, p in dist if abs(m - mean) <= 1e-9)
    )
    a = acceleration(SKEWED)

    def level(z: float) -> float:
        return normal.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))

    exact_percentile = (_exact_quantile(dist, 0.025), _exact_quantile(dist, 0.975))
    exact_bca = (_exact_quantile(dist, level(-Z95)), _exact_quantile(dist, level(Z95)))
    assert exact_percentile == (0.5, 0.925)
    assert exact_bca == (0.45, 0.9)  # skewed left: BCa reaches further down than percentile
    for seed in range(3):  # Monte Carlo with 2000 resamples: within one step of the grid
        assert bootstrap_percentile(SKEWED, seed=seed) == pytest.approx(exact_percentile, abs=0.026)
        assert bootstrap_bca(SKEWED, seed=seed) == pytest.approx(exact_bca, abs=0.026)


def test_acceleration_is_the_skew_over_six_root_n() -> None:
    values = [0.1, 0.2, 0.2, 0.9]
    mean = fmean(values)
    skew = fmean([(v - mean) ** 3 for v in values]) / pstdev(values) ** 3
    assert acceleration(values) == pytest.approx(skew / (6 * math.sqrt(len(values))))
    assert acceleration([0.5, 0.5]) == 0.0


def test_bootstrap_is_seeded_and_near_the_normal_interval_for_a_large_symmetric_sample() -> None:
    rng = random.Random(3)
    values = [rng.random() for _ in range(3000)]  # all distinct: the index-resampling path
    mean, half = fmean(values), Z95 * pstdev(values) / math.sqrt(len(values))
    low, high = bootstrap_percentile(values) or (0.0, 0.0)
    assert low == pytest.approx(mean - half, abs=0.003)
    assert high == pytest.approx(mean + half, abs=0.003)
    assert bootstrap_percentile(values) == (low, high)
    assert bootstrap_bca(values, seed=1) == bootstrap_bca(values, seed=1)


def test_resampling_by_counts_and_by_index_agree() -> None:
    values = [0.0, 0.5, 0.5, 1.0, 0.25] * 40  # few distinct values: multinomial counts
    by_counts = sorted(resample_means(values, 4000, seed=5))
    spread = [v + 1e-7 * i for i, v in enumerate(values)]  # all distinct: index draws
    by_index = sorted(resample_means(spread, 4000, seed=5))
    for q in (0.025, 0.5, 0.975):
        assert by_counts[int(q * 3999)] == pytest.approx(by_index[int(q * 3999)], abs=0.01)


def test_resamples_are_capped_for_many_distinct_values() -> None:
    assert resamples_for([0.0, 0.5, 1.0] * 20_000) == RESAMPLES  # few distinct: cheap
    many = [i / 50_000 for i in range(50_000)]
    assert resamples_for(many) == max(MIN_RESAMPLES, 20_000_000 // 50_000)
    interval = mean_interval(many)
    assert interval.method == "bca" and interval.ci95 is not None
    assert interval.ci95[0] < interval.mean < interval.ci95[1]  # type: ignore[operator]


def test_mean_interval_chooses_the_method_from_the_scores() -> None:
    ten_ones = mean_interval([1.0] * 10)
    assert (ten_ones.mean, ten_ones.method, ten_ones.n) == (1.0, "wilson", 10)
    assert ten_ones.ci95 is not None and round(ten_ones.ci95[0], 3) == 0.722
    binary = mean_interval([1.0, 0.0, 1.0, 1.0])
    assert (binary.method, binary.ci95) == ("wilson", wilson(3, 4))
    skewed = mean_interval(SKEWED)
    assert skewed.method == "bca" and skewed.ci95 == bootstrap_bca(SKEWED)
    flat = mean_interval([0.5] * 8)  # nothing to resample: a conservative Wilson bound
    assert (flat.method, flat.ci95) == ("wilson-bound", wilson(4, 8))
    assert mean_interval([]) == mean_interval(())
    assert (mean_interval([]).mean, mean_interval([]).ci95, mean_interval([]).method) == (
        None,
        None,
        None,
    )
