"""The paired statistics against references: scipy (a test dependency) on small fixed inputs,
and a textbook Holm example worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from evalq.stats import paired
from evalq.stats.multiple import holm
from evalq.stats.paired import (
    PAIRED_SEED,
    compare_paired,
    paired_bootstrap_ci,
    permutation_test,
    sign_test,
    unpaired_bootstrap_ci,
    win_tie_loss,
)

# Two candidates' row scores on twelve shared prompts (shares of 3-5 questions).
A = [1.0, 0.75, 0.8, 1.0, 0.6, 0.5, 1.0, 0.75, 0.4, 1.0, 0.8, 0.67]
B = [0.67, 0.75, 0.6, 0.8, 0.4, 0.5, 0.75, 0.5, 0.4, 0.8, 1.0, 0.33]


def mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def scipy_permutation_p(a: list[float], b: list[float], n_resamples: float) -> float:
    result = sp.permutation_test(
        (a, b),
        mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=0,
    )
    return float(result.pvalue)


def test_exact_permutation_p_equals_scipys_exact_test() -> None:
    ours = permutation_test(A, B)
    assert ours is not None and ours.method == "exact"
    # 12 rows, 3 ties: scipy flips every row (2**12 patterns), we flip the 9 non-zero ones
    # (2**9); a tie's flip changes nothing, so the shares are equal.
    assert ours.permutations == 2**9
    assert ours.p_value == pytest.approx(scipy_permutation_p(A, B, np.inf), abs=1e-12)
    assert ours.p_value == pytest.approx(12 / 512, abs=1e-12)  # 12 of 512 patterns reach it


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.9, 0.8, 0.7], [0.1, 0.2, 0.3]),  # every pattern but the observed and its mirror
        ([1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0, 0.0]),  # binary scores, ties
        ([0.2, 0.4], [0.4, 0.2]),  # zero observed difference: p = 1
    ],
)
def test_exact_permutation_on_small_inputs(a: list[float], b: list[float]) -> None:
    ours = permutation_test(a, b)
    assert ours is not None
    assert ours.p_value == pytest.approx(scipy_permutation_p(a, b, np.inf), abs=1e-12)


def test_monte_carlo_permutation_is_seeded_and_near_scipys(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.9, 40)
    a = list(np.clip(base + rng.normal(0.04, 0.08, 40), 0, 1))
    b = list(base)
    ours = permutation_test(a, b, resamples=20_000)
    assert ours is not None and ours.method == "monte-carlo" and ours.seed == PAIRED_SEED
    again = permutation_test(a, b, resamples=20_000)
    assert again == ours  # the same seed, the same p
    reference = scipy_permutation_p(a, b, 20_000)
    # Two independent Monte Carlo estimates of one p: within a few standard errors.
    se = np.sqrt(reference * (1 - reference) / 20_000)
    assert abs(ours.p_value - reference) < 5 * se + 1e-4
    # Forcing the exact count on a smaller subset agrees with scipy's exact count too, its
    # patterns counted in several blocks: the block made small, as past 16 rows at its real
    # size, where scipy's own count of 2**17 patterns and more takes seconds.
    monkeypatch.setattr(paired, "_BLOCK_BITS", 4)
    assert len(list(paired._sign_blocks(12))) == 2**8
    exact = permutation_test(a[:12], b[:12], exact_max_nonzero=12)
    assert exact is not None and exact.method == "exact" and exact.permutations == 2**12
    assert exact.p_value == pytest.approx(scipy_permutation_p(a[:12], b[:12], np.inf), abs=1e-12)


@pytest.mark.parametrize(("wins", "losses"), [(9, 1), (7, 3), (0, 5), (5, 5), (12, 0), (1, 0)])
def test_sign_test_equals_scipys_binomial_test(wins: int, losses: int) -> None:
    reference = sp.binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue
    assert sign_test(wins, losses) == pytest.approx(reference, abs=1e-12)


def test_sign_test_without_wins_or_losses_has_no_p() -> None:
    assert sign_test(0, 0) is None


def test_win_tie_loss_counts_rows() -> None:
    assert win_tie_loss(A, B) == (wtl := win_tie_loss(A, B))
    assert (wtl.wins, wtl.ties, wtl.losses) == (8, 3, 1)


def test_paired_bootstrap_is_seeded_and_close_to_scipys_paired_bca() -> None:
    ours = paired_bootstrap_ci(A, B)
    assert ours is not None
    assert paired_bootstrap_ci(A, B) == ours  # fixed seed: reproducible to the last digit
    reference = sp.bootstrap(
        (A, B),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=10_000,
        method="BCa",
        rng=0,
    ).confidence_interval
    # Different random draws of the same bootstrap: the bounds agree to Monte Carlo error.
    assert ours[0] == pytest.approx(reference.low, abs=0.012)
    assert ours[1] == pytest.approx(reference.high, abs=0.012)
    assert ours[0] < float(np.mean(np.subtract(A, B))) < ours[1]


def test_paired_interval_is_narrower_than_unpaired_for_correlated_scores() -> None:
    """Prompts differ a lot in difficulty, and B is A minus a small, steady amount: the
    pairing removes the difficulty from the differences."""
    rng = np.random.default_rng(7)
    difficulty = rng.uniform(0.2, 1.0, 60)
    a = list(difficulty)
    b = list(np.clip(difficulty - 0.05 - rng.normal(0, 0.02, 60), 0, 1))
    assert np.corrcoef(a, b)[0, 1] > 0.95
    paired = paired_bootstrap_ci(a, b)
    unpaired = unpaired_bootstrap_ci(a, b)
    assert paired is not None and unpaired is not None
    assert paired[1] - paired[0] < (unpaired[1] - unpaired[0]) / 5
    assert paired[0] > 0  # the paired interval excludes no difference...
    assert unpaired[0] < 0 < unpaired[1]  # ...the unpaired one cannot tell


def test_compare_paired_collects_every_figure() -> None:
    result = compare_paired(A, B)
    assert result.n == 12
    assert result.mean_diff == pytest.approx(float(np.mean(np.subtract(A, B))))
    assert result.p_method == "exact" and result.p_permutation == pytest.approx(12 / 512)
    assert (result.wins, result.ties, result.losses) == (8, 3, 1)
    assert result.p_sign == pytest.approx(sp.binomtest(8, 9).pvalue)
    assert result.seed == PAIRED_SEED and result.resamples == 10_000
    assert result.ci_method == "bca"


def test_compare_paired_with_no_rows_or_identical_scores() -> None:
    empty = compare_paired([], [])
    assert empty.n == 0 and empty.mean_diff is None and empty.p_permutation is None
    same = compare_paired([0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    assert same.mean_diff == 0 and same.p_permutation == 1.0 and same.p_sign is None
    # No spread to resample: a conservative Wilson bound, never a zero-width interval.
    assert same.ci_method == "wilson-bound"
    assert same.ci95 is not None and same.ci95[0] < 0 < same.ci95[1]
    # Three rows that all differ by +1: [2 * 0.4385 - 1, 1] (Wilson's 3/3 is [0.4385, 1]).
    ones = paired_bootstrap_ci([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert ones is not None
    assert ones[0] == pytest.approx(2 * 0.43850 - 1, abs=1e-4) and ones[1] == 1.0


def test_holm_textbook_example() -> None:
    """Four tests at alpha 0.05 (worked by hand): sorted p 0.005, 0.01, 0.03, 0.04 are
    multiplied by 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04, and each adjusted value is kept at
    least the one before it -> 0.02, 0.03, 0.06, 0.06. Holm rejects the first two and stops
    at the third (0.03 > 0.05/2), though 0.04 alone would pass 0.05."""
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p is not None and p < 0.05 for p in adjusted] == [True, False, False, True]


def test_holm_caps_at_one_and_skips_missing() -> None:
    assert holm([0.5, None, 0.6]) == [pytest.approx(1.0), None, pytest.approx(1.0)]
    assert holm([0.02]) == [pytest.approx(0.02)]
    assert holm([]) == []
