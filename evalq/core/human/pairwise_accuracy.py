"""Pairwise accuracy: of the pairs of items that share a group (two images of one prompt, two
answers to one question), the share the metric orders as the human raters do.

Sources. The Gecko paper (Wiles et al. 2024, "Revisiting Text-to-Image Evaluation with
Gecko: On Metrics, Prompts, and Human Ratings", arXiv 2404.16820, ICLR 2025) evaluates
auto-eval metrics on a "pair-wise instance scoring" task: how often a metric picks the image
of a prompt that humans preferred. For ties it follows Deutsch, Foster and Freitag 2023
("Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration",
EMNLP 2023, arXiv 2305.14324), whose abstract states the two ideas used here: pairwise
accuracy that gives the metric credit for predicting a tie correctly, and tie calibration,
which introduces ties into the metric's scores automatically so that metrics that do and do
not produce ties compare fairly. Their released code (google-research/mt-metrics-eval,
stats.py, variant "acc23") defines, over all P pairs,

    acc_eq = (C + T_both) / P

with C the pairs both sides order alike and T_both the pairs both sides tie; a pair the
metric ties and humans do not, or the reverse, or that they order oppositely, is a miss. The
metric ties a pair when its scores differ by at most epsilon; human ties are equal ratings.
Tie calibration picks the epsilon that maximises acc_eq. (We could read the abstract and
code, not the Gecko paper's own section on this; what Gecko adds is the grouping: only
pairs within one prompt are compared.)

What is implemented. ``pairwise_accuracy`` reports acc_eq with tie calibration by default,
every distinct score difference tried as epsilon (mt-metrics-eval samples them for speed; we
try all, so ours is the exact maximum), the smallest best epsilon kept and named in the
method. Because epsilon is fitted on the same pairs, the value is optimistic by what one
fitted number can buy; the bootstrap refits epsilon on every resample, so the interval
carries that fitting's spread. ``epsilon=0.0`` gives plain acc_eq (ties only where the
metric's scores are equal), and any fixed epsilon is accepted.

The interval resamples groups, not pairs: the pairs of one prompt share its items and are
not independent.
"""

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
    percentile bootstrap 95% interval over groups (see the module doc). ``n``: pairs."""
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
