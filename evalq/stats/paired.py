"""Statistics for two candidates scored on the same rows: a hard prompt pulls both scores down
together, so intervals and tests built on the per-row differences see what two separate
intervals, overlapping even when one candidate wins nearly every row, do not."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalq.stats.intervals import Bounds, bootstrap_bca, resample_means, wilson

# Fixed and reported with every comparison, so the same results give the same report.
PAIRED_SEED = 15
BOOTSTRAP_RESAMPLES = 10_000
PERMUTATION_RESAMPLES = 100_000
# 2**20 sign patterns (about a million) are enumerated in blocks; more are sampled.
EXACT_MAX_NONZERO = 20
_BLOCK_BITS = 16
# Two scores closer than this are a tie; a permuted statistic this close to the observed one
# counts as reaching it (floating-point sums of the same numbers in another order).
TIE_TOLERANCE = 1e-9

PermutationMethod = Literal["exact", "monte-carlo"]
CiMethod = Literal["bca", "wilson-bound"]


@dataclass(frozen=True)
class PermutationResult:
    p_value: float
    method: PermutationMethod
    permutations: int  # sign patterns counted (2**m when exact)
    seed: int | None  # None when exact: nothing was drawn


@dataclass(frozen=True)
class WinTieLoss:
    wins: int  # rows where A scored higher than B
    ties: int
    losses: int


@dataclass(frozen=True)
class PairedDifference:
    """Every paired figure for A against B over ``n`` rows (differences are A minus B)."""

    n: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci95: Bounds | None
    ci_method: CiMethod | None
    p_permutation: float | None
    p_method: PermutationMethod | None
    permutations: int
    p_sign: float | None
    wins: int
    ties: int
    losses: int
    seed: int
    resamples: int
    # Why the interval is what it is, where that is not the bootstrap's spread: every paired
    # difference equal, so nothing varied to resample (None for a bootstrapped interval).
    ci_note: str | None = None


def differences(a: Sequence[float], b: Sequence[float]) -> list[float]:
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    return [x - y for x, y in zip(a, b, strict=True)]


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = PAIRED_SEED,
    width: float = 1.0,
) -> Bounds | None:
    """BCa 95% interval of the mean of A - B, resampling rows (pairs) with replacement.

    Differences that all equal one value d give the bootstrap nothing to resample, and a
    zero-width interval would claim certainty from a handful of rows. A difference of values
    on a scale ``width`` wide (1 for scores in [0, 1], 4 for ratings 1-5) lies in
    [-width, width]; mapped to (d + width) / (2 width) in [0, 1], its variance is at most
    m(1 - m), so the Wilson interval of m over n rows, mapped back, is a conservative bound
    (as evalq.stats.intervals does for one candidate's constant scores)."""
    diffs = differences(a, b)
    if len(diffs) < 2:
        return None
    if constant(diffs):
        n = len(diffs)
        mapped = min(1.0, max(0.0, (diffs[0] + width) / (2 * width)))
        bounds = wilson(mapped * n, n)
        assert bounds is not None
        return 2 * width * bounds[0] - width, 2 * width * bounds[1] - width
    return bootstrap_bca(diffs, resamples, seed)


def constant(diffs: Sequence[float]) -> bool:
    return max(diffs) - min(diffs) <= TIE_TOLERANCE


def constant_note(diff: float, n: int, width: float) -> str:
    """Why a constant difference's interval is wide: said wherever the interval is shown."""
    return (
        f"every paired difference is {diff:+.3f} ({n} rows), so the bootstrap has nothing to "
        f"resample; the interval is a conservative Wilson bound for {n} rows on the "
        f"difference's range (-{width:g} to +{width:g}), not a measured spread"
    )


def unpaired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = PAIRED_SEED,
) -> Bounds | None:
    """Percentile 95% interval of mean(A) - mean(B) resampling each side on its own: what a
    comparison that ignores the pairing would report. Kept to show what pairing buys."""
    if len(a) < 2 or len(b) < 2:
        return None
    means_a = np.asarray(resample_means(a, resamples, seed))
    means_b = np.asarray(resample_means(b, resamples, seed + 1))
    spread = means_a - means_b
    return float(np.quantile(spread, 0.025)), float(np.quantile(spread, 0.975))


def _sign_blocks(m: int) -> Iterator[npt.NDArray[np.float64]]:
    """Every sign pattern of m values as rows of +-1, in blocks of at most 2**_BLOCK_BITS
    rows, so memory stays bounded."""
    low_bits = min(m, _BLOCK_BITS)
    low = (((np.arange(2**low_bits)[:, None] >> np.arange(low_bits)) & 1) * 2 - 1).astype(float)
    for high in range(2 ** (m - low_bits)):
        high_signs = (((high >> np.arange(m - low_bits)) & 1) * 2 - 1).astype(float)
        yield np.hstack([low, np.broadcast_to(high_signs, (len(low), m - low_bits))])


def permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = PERMUTATION_RESAMPLES,
    seed: int = PAIRED_SEED,
    exact_max_nonzero: int = EXACT_MAX_NONZERO,
) -> PermutationResult | None:
    """Two-sided p-value of the mean difference under random swaps within each row.

    Zero differences are unchanged by a swap, so only the non-zero ones are flipped; with at
    most ``exact_max_nonzero`` of them every pattern is counted. Otherwise ``resamples``
    seeded patterns are drawn and the observed one counts too, p = (hits + 1) / (draws + 1),
    which never reports 0 from a finite sample."""
    diffs = differences(a, b)
    if not diffs:
        return None
    nonzero = np.asarray([d for d in diffs if abs(d) > TIE_TOLERANCE], dtype=float)
    m = len(nonzero)
    if m == 0:
        return PermutationResult(1.0, "exact", 1, None)
    observed = abs(float(nonzero.sum()))
    reach = observed - TIE_TOLERANCE * max(1.0, observed)
    if m <= exact_max_nonzero:
        hits = sum(int((np.abs(block @ nonzero) >= reach).sum()) for block in _sign_blocks(m))
        return PermutationResult(hits / 2**m, "exact", 2**m, None)
    rng = np.random.default_rng(seed)
    hits, drawn = 0, 0
    block = max(1, 4_000_000 // m)
    while drawn < resamples:
        size = min(block, resamples - drawn)
        signs = rng.integers(0, 2, size=(size, m)) * 2 - 1
        hits += int((np.abs(signs @ nonzero) >= reach).sum())
        drawn += size
    return PermutationResult((hits + 1) / (resamples + 1), "monte-carlo", resamples, seed)


def win_tie_loss(a: Sequence[float], b: Sequence[float]) -> WinTieLoss:
    diffs = differences(a, b)
    wins = sum(d > TIE_TOLERANCE for d in diffs)
    losses = sum(d < -TIE_TOLERANCE for d in diffs)
    return WinTieLoss(wins, len(diffs) - wins - losses, losses)


def sign_test(wins: int, losses: int) -> float | None:
    """Two-sided exact binomial p-value of wins against losses at 1/2 (ties left out)."""
    n = wins + losses
    if n == 0:
        return None
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int = PAIRED_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
    width: float = 1.0,
) -> PairedDifference:
    """Every paired figure at once: the mean difference with a BCa bootstrap interval
    (resampling rows keeps each row's two scores together), a permutation test (exact while
    the non-zero differences are few, seeded Monte Carlo above), a sign test on wins and
    losses; the seed and resample counts are fixed and reported. With no rows, the counts are
    0 and the figures None.
    ``width``: how wide the values' scale is (high - low), for a constant difference's bound."""
    n = len(differences(a, b))
    counts = win_tie_loss(a, b)
    if n == 0:
        return PairedDifference(
            0, None, None, None, None, None, None, None, 0, None, 0, 0, 0, seed, resamples
        )
    ci = paired_bootstrap_ci(a, b, resamples, seed, width)
    diffs = differences(a, b)
    same = constant(diffs)
    test = permutation_test(a, b, permutation_resamples, seed)
    return PairedDifference(
        n=n,
        mean_a=fmean(a),
        mean_b=fmean(b),
        mean_diff=fmean(diffs),
        ci95=ci,
        ci_method=None if ci is None else ("wilson-bound" if same else "bca"),
        p_permutation=None if test is None else test.p_value,
        p_method=None if test is None else test.method,
        permutations=0 if test is None else test.permutations,
        p_sign=sign_test(counts.wins, counts.losses),
        wins=counts.wins,
        ties=counts.ties,
        losses=counts.losses,
        seed=seed,
        resamples=resamples,
        ci_note=constant_note(diffs[0], n, width) if ci is not None and same else None,
    )
