"""Spearman and Kendall tau-b against scipy (a test dependency), on random data full of ties;
the bootstrap's per-resample statistic against scipy on the expanded resample; the interval's
determinism and its coverage over simulated data sets with a known population value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from evalq.core.human.rank_correlation import (
    _kendall_weighted,
    _Points,
    _spearman_weighted,
    kendall,
    spearman,
)


def tied_sample(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A 1-5 human rating and a judge score in thirds, correlated, both heavily tied."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    judge = np.clip(np.round((human - 1) / 4 * 3 + rng.normal(0, 0.8, n)), 0, 3) / 3
    return judge, human


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [3, 12, 57, 300])
def test_values_equal_scipys_on_tied_data(seed: int, n: int) -> None:
    x, y = tied_sample(seed, n)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        pytest.skip("a constant side: covered by the undefined test")
    rho = spearman(x, y, resamples=50)
    tau = kendall(x, y, resamples=50)
    assert rho.value == pytest.approx(sp.spearmanr(x, y).statistic, abs=1e-12)
    assert tau.value == pytest.approx(sp.kendalltau(x, y, variant="b").statistic, abs=1e-12)
    assert (rho.n, rho.method, tau.n, tau.method) == (n, "spearman", n, "kendall tau-b")


def test_values_equal_scipys_on_continuous_data() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=80)
    y = x + rng.normal(size=80)
    assert spearman(x, y, resamples=20).value == pytest.approx(sp.spearmanr(x, y).statistic)
    assert kendall(x, y, resamples=20).value == pytest.approx(sp.kendalltau(x, y).statistic)


@pytest.mark.parametrize("seed", range(4))
def test_each_resample_is_the_statistic_of_the_resampled_rows(seed: int) -> None:
    # A resample is drawn as counts of the distinct (x, y) points; expanding those counts
    # back into rows must give scipy's value on those rows.
    x, y = tied_sample(seed, 40)
    points = _Points(x, y)
    counts = points.draws(30, seed)[0]
    rho = _spearman_weighted(points, counts)
    tau = _kendall_weighted(points, counts)
    for b, row in enumerate(counts.astype(int)):
        xs, ys = np.repeat(points.x, row), np.repeat(points.y, row)
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            assert math.isnan(rho[b]) and math.isnan(tau[b])
            continue
        assert rho[b] == pytest.approx(sp.spearmanr(xs, ys).statistic, abs=1e-12)
        assert tau[b] == pytest.approx(sp.kendalltau(xs, ys).statistic, abs=1e-12)


def test_the_interval_is_seeded_and_brackets_the_value() -> None:
    x, y = tied_sample(3, 60)
    first, again = spearman(x, y), spearman(x, y)
    other = spearman(x, y, seed=16)
    assert first == again
    assert first.ci95 != other.ci95
    for estimate in (first, kendall(x, y)):
        assert estimate.ci95 is not None and estimate.value is not None
        assert estimate.ci95[0] < estimate.value < estimate.ci95[1]
        assert estimate.note is None


def test_intervals_cover_the_population_value_about_95_percent_of_the_time() -> None:
    # Bivariate normal with correlation r: Spearman's rho is (6/pi) asin(r/2), Kendall's tau
    # (2/pi) asin(r) (Kendall and Gibbons 1990). 120 fixed data sets of 50 rows: the count
    # covered is a fixed number, checked against a wide band around 95% (percentile
    # intervals run a little short at n = 50), never a timing or a flaky draw.
    r = 0.6
    true_rho, true_tau = 6 / math.pi * math.asin(r / 2), 2 / math.pi * math.asin(r)
    covered_rho = covered_tau = 0
    rng = np.random.default_rng(2024)
    sets = 120
    for _ in range(sets):
        x = rng.normal(size=50)
        y = r * x + math.sqrt(1 - r * r) * rng.normal(size=50)
        rho, tau = spearman(x, y, resamples=400), kendall(x, y, resamples=400)
        assert rho.ci95 is not None and tau.ci95 is not None
        covered_rho += rho.ci95[0] <= true_rho <= rho.ci95[1]
        covered_tau += tau.ci95[0] <= true_tau <= tau.ci95[1]
    assert 0.85 * sets <= covered_rho <= sets
    assert 0.85 * sets <= covered_tau <= sets


@pytest.mark.parametrize("statistic", [spearman, kendall])
def test_undefined_cases_are_none_with_a_reason(statistic: object) -> None:
    assert callable(statistic)
    one = statistic([0.5], [3.0])
    assert one.value is None and one.ci95 is None and one.n == 1 and "at least 2" in one.note
    flat = statistic([0.5, 0.5, 0.5], [1.0, 2.0, 3.0])
    assert flat.value is None and "every x value is the same" in flat.note
    flat_human = statistic([0.1, 0.5, 0.9], [4.0, 4.0, 4.0])
    assert flat_human.value is None and "every y value is the same" in flat_human.note
    empty = statistic([], [])
    assert empty.value is None and empty.n == 0


def test_resamples_where_a_side_never_varies_are_left_out_and_counted() -> None:
    # Two rows differ, the rest tie: many resamples miss one of the two and are undefined.
    x = [0.0] + [1.0] * 5
    y = [1.0] + [5.0] * 5
    estimate = spearman(x, y, resamples=400)
    assert estimate.value == pytest.approx(1.0)
    assert estimate.note is not None and "of 400 bootstrap resamples" in estimate.note


def test_bad_input_names_the_position() -> None:
    with pytest.raises(ValueError, match=r"y\[2\] is None"):
        spearman([1.0, 2.0, 3.0], [1.0, 2.0, None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"x\[1\] is nan"):
        kendall([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="x has 2, y has 3"):
        spearman([1.0, 2.0], [1.0, 2.0, 3.0])


def test_spearman_cuts_its_resamples_on_many_distinct_points_and_says_so() -> None:
    """A large job's summary stays cheap to rebuild: past the budget the bootstrap draws fewer
    resamples (the value itself is exact) and the method names how many."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=8000)
    y = x + rng.normal(size=8000)
    estimate = spearman(x.tolist(), y.tolist())
    assert estimate.value == pytest.approx(sp.spearmanr(x, y).statistic)
    assert estimate.method == "spearman (500 resamples: 8000 distinct points)"
    assert estimate.ci95 is not None and estimate.ci95[0] < estimate.value < estimate.ci95[1]
    small = spearman(x[:100].tolist(), y[:100].tolist())
    assert small.method == "spearman"  # under the budget: every resample asked for
