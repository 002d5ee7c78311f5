"""The difference between two judge setups' agreement with humans on the same rows, with a
paired bootstrap interval and p-value: resampling rows keeps the pairing (a row hard for one
setup is hard for the other), which two separate intervals would lose."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evalq.core.human.estimate import (
    RESAMPLES,
    SEED,
    Estimate,
    check_resamples,
    percentile_interval,
    undefined,
)

METHOD = "paired difference (percentile bootstrap over rows)"
Stat = Callable[[list[int]], float | None]


@dataclass(frozen=True)
class PairedBootstrap:
    estimate: Estimate
    p_value: float | None  # two-sided, against no difference; None when undefined


def paired_difference_test(
    stat: Stat, rows: int, *, seed: int = SEED, resamples: int = RESAMPLES
) -> PairedBootstrap:
    """stat(all rows), its 95% interval and two-sided p from ``resamples`` seeded resamples
    of the rows. ``stat(indexes)`` returns setup A's statistic minus B's on the rows at
    ``indexes`` (with repeats), or None where undefined. The interval is a percentile
    bootstrap (Efron and Tibshirani 1993, ch. 13); the p-value inverts it: twice the smaller
    share of resampled differences on either side of 0, each count plus one over the defined
    resamples plus one, so a finite sample never reports 0 (Davison and Hinkley 1997, sec.
    4.4). So a difference whose interval excludes 0 has p below 0.05 and the other way round
    (up to the +1). paired_difference and paired_difference_p are its halves, each a rerun:
    call this once when both are wanted."""
    check_resamples(resamples)
    if rows < 2:
        return PairedBootstrap(undefined(max(rows, 0), METHOD, f"{rows} row(s): need 2"), None)
    observed = stat(list(range(rows)))
    if observed is None:
        why = "the statistic is undefined on the rows given"
        return PairedBootstrap(undefined(rows, METHOD, why), None)
    rng = np.random.default_rng(seed)
    draws = np.empty(resamples)
    for b in range(resamples):
        value = stat(rng.integers(0, rows, size=rows).tolist())
        draws[b] = np.nan if value is None else float(value)
    ci, note = percentile_interval(draws, resamples)
    defined = draws[~np.isnan(draws)]
    p = None
    if ci is not None:
        below = int((defined <= 0).sum()) + 1
        above = int((defined >= 0).sum()) + 1
        p = min(1.0, 2 * min(below, above) / (len(defined) + 1))
    return PairedBootstrap(Estimate(float(observed), ci, rows, METHOD, note), p)


def paired_difference(
    stat: Stat, rows: int, *, seed: int = SEED, resamples: int = RESAMPLES
) -> Estimate:
    """stat(all rows) with its paired bootstrap 95% interval over rows."""
    return paired_difference_test(stat, rows, seed=seed, resamples=resamples).estimate


def paired_difference_p(
    stat: Stat, rows: int, *, seed: int = SEED, resamples: int = RESAMPLES
) -> float | None:
    """Two-sided paired bootstrap p-value of stat against 0 (the same resamples as
    paired_difference with the same seed)."""
    return paired_difference_test(stat, rows, seed=seed, resamples=resamples).p_value
