"""Agreement of a judge's labels with a rater's: accuracy, and Cohen's kappa (weighted for
ordered categories), for questions, sentences and pairwise preferences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from evalq.core.human.estimate import (
    RESAMPLES,
    SEED,
    Estimate,
    Floats,
    check_resamples,
    percentile_interval,
    resampled_counts,
    same_length,
    undefined,
)
from evalq.stats.intervals import wilson

Weights = Literal["linear", "quadratic"]


def label_accuracy(
    judge: Sequence[str],
    human: Sequence[str],
    *,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> Estimate:
    """Share of labels on which the judge and the rater agree, with a Wilson 95% interval (Wilson
    1927), honest at 0 and 1 where a bootstrap of 30 agreeing labels would claim [1, 1].
    ``seed`` and ``resamples`` keep the call shape of the other statistics; Wilson's
    interval draws nothing, so they change nothing."""
    check_resamples(resamples)
    n = same_length(judge=judge, human=human)
    method = "label accuracy (Wilson 95% interval)"
    if n == 0:
        return undefined(0, method, "no labels to compare")
    agree = sum(1 for a, b in zip(judge, human, strict=True) if a == b)
    return Estimate(agree / n, wilson(agree, n), n, method)


def _order(
    judge: Sequence[str], human: Sequence[str], categories: Sequence[str] | None, weighted: bool
) -> list[str]:
    if categories is not None:
        if len(set(categories)) != len(categories):
            raise ValueError(f"categories repeat a label: {list(categories)}")
        known = set(categories)
        for side, labels in (("judge", judge), ("human", human)):
            for i, label in enumerate(labels):
                if label not in known:
                    raise ValueError(
                        f"{side}[{i}] is {label!r}, not one of the categories {list(categories)}"
                    )
        return list(categories)
    seen = sorted(set(judge) | set(human))
    if not weighted:
        return seen
    try:
        return sorted(seen, key=float)
    except ValueError:
        raise ValueError(
            f"weighted kappa needs the categories' order and labels {seen} are not all "
            "numbers: pass categories=[...] lowest first"
        ) from None


def _disagreement(k: int, weights: Weights | None) -> Floats:
    """Disagreement weights between categories i and j of k: 1 off the diagonal unweighted,
    |i - j| / (k - 1) linear, its square quadratic (Cohen 1968: partial credit for a near miss)."""
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    if weights is None or k < 2:
        return np.asarray(i != j, dtype=float)
    distance = np.asarray(np.abs(i - j) / (k - 1), dtype=float)
    return distance if weights == "linear" else distance * distance


def _kappas(tables: Floats, w: Floats) -> Floats:
    """Kappa per row of ``tables`` (k x k cell counts, flattened; judge on rows)."""
    k = w.shape[0]
    cells = tables.reshape(len(tables), k, k)
    n = cells.sum(axis=(1, 2))
    observed = (cells * w).sum(axis=(1, 2)) / n
    expected = np.einsum("bi,ij,bj->b", cells.sum(axis=2), w, cells.sum(axis=1)) / (n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = 1.0 - observed / expected
    kappa[expected <= 1e-12] = np.nan
    return np.asarray(kappa, dtype=float)


def cohen_kappa(
    judge: Sequence[str],
    human: Sequence[str],
    *,
    categories: Sequence[str] | None = None,
    weights: Weights | None = None,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> Estimate:
    """Cohen's kappa (Cohen 1960) of the judge's labels against the rater's: agreement beyond
    chance, kappa_w = 1 - sum(w * observed) / sum(w * expected). Weighted over ``categories``
    (lowest first; inferred from numeric labels when None) if ``weights`` is given. Undefined
    (None) when no disagreement is expected by chance (both sides used one category). Its 95%
    interval is a percentile bootstrap over labels, each resample a multinomial draw over the
    k x k cells. A label outside ``categories`` is an error naming its side and position."""
    check_resamples(resamples)
    n = same_length(judge=judge, human=human)
    method = "cohen kappa" if weights is None else f"cohen kappa ({weights} weights)"
    order = _order(judge, human, categories, weights is not None)
    if n < 2:
        return undefined(n, method, f"{n} label(s): kappa needs at least 2")
    k = len(order)
    index = {label: i for i, label in enumerate(order)}
    cell = np.asarray([index[a] * k + index[b] for a, b in zip(judge, human, strict=True)])
    table = np.bincount(cell, minlength=k * k).astype(float)
    w = _disagreement(k, weights)
    value = float(_kappas(table[None, :], w)[0])
    if np.isnan(value):
        why = "both sides gave one and the same label throughout: no disagreement to expect"
        return undefined(n, method, why)
    draws = [_kappas(counts, w) for counts in resampled_counts(n, table / n, resamples, seed)]
    ci, note = percentile_interval(np.concatenate(draws), resamples)
    return Estimate(value, ci, n, method, note)
