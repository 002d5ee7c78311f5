"""Pairwise accuracy: of the pairs of items that share a group (two images of one prompt, two
answers to one question), the share the metric orders as the human raters do, as the Gecko
paper ranks auto-eval metrics (docs/guides/calibration.md gives the sources)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalq.core.human.estimate import (
    RESAMPLES,
    SEED,
    TIE_TOLERANCE,
    Estimate,
    Floats,
    as_floats,
    check_resamples,
    percentile_interval,
    resampled_counts,
    same_length,
    undefined,
)

METHOD = "pairwise accuracy (ties: acc_eq, Deutsch et al. 2023"


@dataclass(frozen=True)
class _Pairs:
    """Every within-group pair, sorted by the metric's absolute difference: whether it
    counts as agreement when the metric orders it (``ordered``) or ties it (``tied``)."""

    gap: Floats  # |metric difference|, ascending
    ordered: Floats  # 1.0 when the metric's order matches a human order (no human tie)
    tied: Floats  # 1.0 when humans tied the pair
    group: np.ndarray  # index of the pair's group among groups with pairs
    groups: int


def _pairs(metric: Floats, human: Floats, groups: Sequence[str]) -> _Pairs:
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    gap: list[float] = []
    ordered: list[float] = []
    tied: list[float] = []
    group: list[int] = []
    paired = 0
    for items in members.values():
        if len(items) < 2:
            continue
        idx = np.asarray(items)
        upper = np.triu_indices(len(idx), k=1)
        dm = (metric[idx][:, None] - metric[idx][None, :])[upper]
        dh = (human[idx][:, None] - human[idx][None, :])[upper]
        human_tie = np.abs(dh) <= TIE_TOLERANCE
        gap.extend(np.abs(dm))
        ordered.extend(((np.sign(dm) == np.sign(dh)) & ~human_tie).astype(float))
        tied.extend(human_tie.astype(float))
        group.extend([paired] * len(dm))
        paired += 1
    order = np.argsort(np.asarray(gap, dtype=float), kind="stable")
    return _Pairs(
        gap=np.asarray(gap, dtype=float)[order],
        ordered=np.asarray(ordered, dtype=float)[order],
        tied=np.asarray(tied, dtype=float)[order],
        group=np.asarray(group, dtype=int)[order],
        groups=paired,
    )


def _cutoffs(gap: Floats, epsilon: float | None) -> np.ndarray:
    """How many of the sorted pairs the metric ties at each candidate epsilon: the pairs
    with a gap of at most epsilon. Candidates: 0 and every distinct gap (calibration), or the
    one epsilon given."""
    bound = TIE_TOLERANCE if epsilon is None else epsilon + TIE_TOLERANCE
    at_zero = int(np.searchsorted(gap, bound, side="right"))
    if epsilon is not None:
        return np.asarray([at_zero])
    run_ends = np.flatnonzero(np.diff(gap) > TIE_TOLERANCE) + 1
    ends = np.concatenate([[at_zero], run_ends, [len(gap)]])
    return np.unique(ends[ends >= at_zero])


def _accuracy(pairs: _Pairs, weights: Floats, cut: np.ndarray) -> tuple[Floats, Floats]:
    """Best acc_eq over the cutoffs per resample (rows of ``weights``: each pair's weight),
    and the cutoff reaching it (the smallest, on a tie)."""
    base = (weights * pairs.ordered).sum(axis=1)
    change = np.cumsum(weights * (pairs.tied - pairs.ordered), axis=1)
    change = np.concatenate([np.zeros((len(weights), 1)), change], axis=1)
    scores = (base[:, None] + change[:, cut]) / weights.sum(axis=1, keepdims=True)
    best = np.argmax(scores, axis=1)  # the first maximum: counts are whole, sums exact
    return scores[np.arange(len(scores)), best], cut[best].astype(float)


def pairwise_accuracy(
    metric: Sequence[float],
    human: Sequence[float],
    groups: Sequence[str],
    *,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    epsilon: float | None = None,
) -> Estimate:
    """acc_eq over within-group pairs, tie-calibrated unless ``epsilon`` is given, with a
    percentile bootstrap 95% interval over groups. ``n``: pairs.

    acc_eq = (C + T_both) / P (Deutsch, Foster and Freitag 2023; mt-metrics-eval's "acc23"),
    C the pairs both sides order alike, T_both those both tie; the metric ties a pair when its
    scores differ by at most epsilon, humans when their ratings are equal. Tie calibration
    tries every distinct score difference as epsilon (the exact maximum; mt-metrics-eval
    samples them) and keeps the smallest best, named in the method. Fitted on the same pairs,
    the value is optimistic by what one fitted number buys; the bootstrap refits epsilon on
    every resample, so the interval carries that spread. Groups are resampled, not pairs: the
    pairs of one prompt share its items. ``epsilon=0.0`` gives plain acc_eq."""
    check_resamples(resamples)
    if epsilon is not None and epsilon < 0:
        raise ValueError(f"epsilon is a tie threshold on |metric difference|, got {epsilon}")
    same_length(metric=metric, human=human, groups=groups)
    m, h = as_floats(metric, "metric"), as_floats(human, "human")
    pairs = _pairs(m, h, groups)
    n = len(pairs.gap)
    if n == 0:
        return undefined(n, METHOD + ")", "no two items share a group: no pairs to compare")
    cut = _cutoffs(pairs.gap, epsilon)
    value, chosen = _accuracy(pairs, np.ones((1, n)), cut)
    ties_at = pairs.gap[int(chosen[0]) - 1] if chosen[0] > 0 else 0.0
    if epsilon is None:
        method = f"{METHOD}; tie-calibrated epsilon={ties_at:.6g}; {pairs.groups} groups)"
    else:
        method = f"{METHOD}; epsilon={epsilon:.6g}; {pairs.groups} groups)"
    if pairs.groups < 2:
        why = "all pairs are in one group: a bootstrap over groups has nothing to resample"
        return Estimate(float(value[0]), None, n, method, why)
    uniform = np.full(pairs.groups, 1 / pairs.groups)
    draws = [
        _accuracy(pairs, counts[:, pairs.group], cut)[0]
        for counts in resampled_counts(pairs.groups, uniform, resamples, seed, width=n)
    ]
    ci, note = percentile_interval(np.concatenate(draws), resamples)
    return Estimate(float(value[0]), ci, n, method, note)
