"""The statistics of a drift report: how often two judges' verdicts on the same units differ,
how often one judge differs from itself, and how far two rankings of the same candidates agree
(Kendall's tau-b with a bootstrap interval over rows)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations

import numpy as np

from evalq.stats.intervals import Bounds, wilson
from evalq.stats.noise import Share

TAU_RESAMPLES = 2000
TAU_SEED = 20240611


def flip_share(changed: int, units: int) -> Share | None:
    """The share of units whose verdict changed, with its 95% Wilson interval; None for none."""
    if units <= 0:
        return None
    return Share(changed / units, wilson(changed, units), units)


def share_difference(a: Share, b: Share) -> Bounds | None:
    """The 95% interval of a.value - b.value for two independent shares, by Newcombe's hybrid
    score method (Newcombe 1998, "Interval estimation for the difference between independent
    proportions", method 10), built from each share's Wilson interval: far less conservative
    than asking whether the two intervals overlap, and honest at 0 and 1."""
    if a.ci95 is None or b.ci95 is None:
        return None
    (low_a, high_a), (low_b, high_b) = a.ci95, b.ci95
    d = a.value - b.value
    below = math.sqrt((a.value - low_a) ** 2 + (high_b - b.value) ** 2)
    above = math.sqrt((high_a - a.value) ** 2 + (b.value - low_b) ** 2)
    return d - below, d + above


def retest_disagreement(units: Sequence[Sequence[Hashable]]) -> Share | None:
    """The chance that two answers of the same judge to the same unit differ, averaged over
    units with at least two answers: per unit 1 - sum n_k (n_k - 1) / (n (n - 1)), the
    unbiased Gini-Simpson disagreement of its answers. It is the flip share one judge asked
    twice would show, the noise a flip share between two judges is set against. Its interval
    is Wilson's over the units, the expected disagreements counted as successes."""
    compared = [list(answers) for answers in units if len(answers) >= 2]
    if not compared:
        return None
    total = 0.0
    for answers in compared:
        n = len(answers)
        same = sum(k * (k - 1) for k in Counter(answers).values())
        total += 1.0 - same / (n * (n - 1))
    return Share(total / len(compared), wilson(total, len(compared)), len(compared))


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same items (ties allowed on either side):
    (C - D) / sqrt((P - Tx) (P - Ty)), P the pairs, Tx and Ty the pairs tied in xs and in
    ys; None when either side ties every pair or there are under two items."""
    if len(xs) != len(ys):
        raise ValueError(f"scorings differ in length: {len(xs)} != {len(ys)}")
    concordant = discordant = tied_x = tied_y = pairs = 0
    for i, j in combinations(range(len(xs)), 2):
        pairs += 1
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        tied_x += dx == 0
        tied_y += dy == 0
        if dx * dy > 0:
            concordant += 1
        elif dx * dy < 0:
            discordant += 1
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    if denominator == 0:
        return None
    return (concordant - discordant) / denominator


RowScores = Mapping[str, float]  # one row's value per candidate (a candidate missing: unknown)


def mean_scores(rows: Sequence[RowScores], candidates: Sequence[str]) -> list[float | None]:
    """Each candidate's mean over the rows that have a value for it."""
    out: list[float | None] = []
    for c in candidates:
        values = [row[c] for row in rows if c in row]
        out.append(sum(values) / len(values) if values else None)
    return out


def _tau_of(old: Sequence[float | None], new: Sequence[float | None]) -> float | None:
    kept = [(a, b) for a, b in zip(old, new, strict=True) if a is not None and b is not None]
    return kendall_tau_b([a for a, _ in kept], [b for _, b in kept])


def ranking_tau(
    old: Sequence[RowScores],
    new: Sequence[RowScores],
    candidates: Sequence[str],
    *,
    seed: int = TAU_SEED,
    resamples: int = TAU_RESAMPLES,
) -> tuple[float | None, Bounds | None]:
    """Kendall's tau-b between the candidates' mean scores under the old judge and under the
    new, and its 95% percentile bootstrap interval: rows are resampled with replacement, each
    row's two scorings kept together (the same rows judged twice), the means and tau computed
    again; resamples where tau is undefined are left out. ``old[i]`` and ``new[i]`` are row
    i's values per candidate."""
    if len(old) != len(new):
        raise ValueError(f"rows differ in number: {len(old)} != {len(new)}")
    tau = _tau_of(mean_scores(old, candidates), mean_scores(new, candidates))
    if tau is None or len(old) < 2:
        return tau, None
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    for _ in range(resamples):
        picked = rng.integers(0, len(old), len(old))
        value = _tau_of(
            mean_scores([old[i] for i in picked], candidates),
            mean_scores([new[i] for i in picked], candidates),
        )
        if value is not None:
            draws.append(value)
    if not draws:
        return tau, None
    low, high = np.quantile(np.asarray(draws), [0.025, 0.975])
    return tau, (float(low), float(high))


def swapped_pairs(
    candidates: Sequence[str], old: Sequence[float | None], new: Sequence[float | None]
) -> list[tuple[str, str]]:
    """The pairs of candidates the two scorings order the other way round, each as (the one
    ahead under the old scoring, the one ahead under the new); a tie on either side swaps
    nothing."""
    out = []
    for i, j in combinations(range(len(candidates)), 2):
        a_old, b_old, a_new, b_new = old[i], old[j], new[i], new[j]
        if a_old is None or b_old is None or a_new is None or b_new is None:
            continue
        before, after = a_old - b_old, a_new - b_new
        if before * after < 0:
            first, second = (
                (candidates[i], candidates[j]) if before > 0 else (candidates[j], candidates[i])
            )
            out.append((first, second))
    return out
