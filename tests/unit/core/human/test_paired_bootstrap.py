"""The paired bootstrap of two setups' difference in agreement: the value is the statistic on
all rows, the resamples are rows drawn with replacement, the p-value and the interval agree,
and undefined statistics say why."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from evalq.core.human.paired_bootstrap import (
    paired_difference,
    paired_difference_p,
    paired_difference_test,
)


def setups(seed: int, n: int, noise_b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n)
    judge_a = human + rng.normal(0, 0.3, n)
    judge_b = human + rng.normal(0, noise_b, n)
    return human, judge_a, judge_b


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, tied values sharing the mean of the ranks they span: scipy's rankdata,
    without its checks, which took most of the time of these thousands of resamples."""
    order = np.argsort(values, kind="mergesort")
    place = np.empty(len(values), dtype=np.intp)
    place[order] = np.arange(len(values))
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    tie = starts.cumsum()[place]
    bounds = np.r_[np.nonzero(starts)[0], len(values)]
    return np.asarray(0.5 * (bounds[tie] + bounds[tie - 1] + 1), dtype=float)


def ranks_r(rx: np.ndarray, ry: np.ndarray) -> float:
    """Pearson's r of two rank vectors: Spearman's rho, as scipy.stats.spearmanr computes it."""
    dx, dy = rx - rx.mean(), ry - ry.mean()
    scale = float(np.sqrt((dx @ dx) * (dy @ dy)))
    return float(dx @ dy) / scale if scale else float("nan")  # a constant side: as spearmanr


def spearman_gap(human: np.ndarray, a: np.ndarray, b: np.ndarray):  # type: ignore[no-untyped-def]
    def stat(rows: list[int]) -> float | None:
        h = human[rows]
        if np.ptp(h) == 0:
            return None
        rh = average_ranks(h)
        return ranks_r(average_ranks(a[rows]), rh) - ranks_r(average_ranks(b[rows]), rh)

    return stat


def test_the_statistic_is_scipys_spearman_difference() -> None:
    human, a, b = setups(5, 30, 1.0)
    rows = [0, 0, 3, 7, 7, 7, 12, 29, 29, 15]  # repeated rows tie, as in a resample
    assert average_ranks(a[rows]) == pytest.approx(sp.rankdata(a[rows]), abs=0)
    expected = sp.spearmanr(a[rows], human[rows]).statistic
    expected -= sp.spearmanr(b[rows], human[rows]).statistic
    assert spearman_gap(human, a, b)(rows) == pytest.approx(expected, abs=1e-12)


def test_value_is_the_statistic_on_all_rows_and_the_run_is_seeded() -> None:
    human, a, b = setups(0, 40, 1.0)
    stat = spearman_gap(human, a, b)
    result = paired_difference_test(stat, 40, resamples=300)
    assert result.estimate.value == pytest.approx(stat(list(range(40))))
    assert result.estimate.n == 40
    assert result == paired_difference_test(stat, 40, resamples=300)
    assert paired_difference(stat, 40, resamples=300) == result.estimate
    assert paired_difference_p(stat, 40, resamples=300) == result.p_value


def test_resamples_draw_rows_with_replacement() -> None:
    seen: list[list[int]] = []

    def record(rows: list[int]) -> float:
        seen.append(rows)
        return float(len(set(rows)))

    paired_difference_test(record, 10, resamples=50)
    assert seen[0] == list(range(10))
    draws = seen[1:]
    assert len(draws) == 50 and all(len(r) == 10 and set(r) <= set(range(10)) for r in draws)
    assert any(len(set(r)) < 10 for r in draws)  # some rows repeat


def test_a_clearly_better_setup_has_an_interval_above_zero_and_a_small_p() -> None:
    human, a, b = setups(1, 80, 2.0)
    result = paired_difference_test(spearman_gap(human, a, b), 80, resamples=500)
    assert result.estimate.ci95 is not None and result.estimate.ci95[0] > 0
    assert result.p_value is not None and result.p_value < 0.05


def test_the_same_setup_twice_differs_by_nothing() -> None:
    human, a, _ = setups(2, 30, 1.0)
    result = paired_difference_test(spearman_gap(human, a, a), 30, resamples=200)
    assert result.estimate.value == 0.0
    assert result.estimate.ci95 == (0.0, 0.0)
    assert result.p_value == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_p_below_five_percent_exactly_when_the_interval_misses_zero(seed: int) -> None:
    human, a, b = setups(seed, 25, 0.6)
    result = paired_difference_test(spearman_gap(human, a, b), 25, resamples=999)
    low, high = result.estimate.ci95 or (0.0, 0.0)
    assert result.p_value is not None
    if low > 0 or high < 0:
        assert result.p_value <= 0.052  # the +1 correction: at most 2 * 26 / 1000
    else:
        assert result.p_value >= 0.048


def test_undefined_cases_say_why() -> None:
    one = paired_difference_test(lambda rows: 0.1, 1)
    assert one.estimate.value is None and one.p_value is None and "need 2" in one.estimate.note
    never = paired_difference_test(lambda rows: None, 10)
    assert never.estimate.value is None and "undefined on the rows" in never.estimate.note

    def only_full(rows: list[int]) -> float | None:
        return 0.5 if len(set(rows)) == 5 else None

    rare = paired_difference_test(only_full, 5, resamples=100)
    assert rare.estimate.value == 0.5 and rare.estimate.ci95 is None and rare.p_value is None
    assert "too many for an interval" in rare.estimate.note
