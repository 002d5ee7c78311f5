"""What every agreement-with-humans statistic returns, and the checks and interval they share:
such a statistic is worth reading only with its uncertainty beside it (40 labelled rows give a
Spearman of 0.6 whose interval may reach from 0.3 to 0.8)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

SEED = 15
RESAMPLES = 2000
# Numbers held at once by the vectorised resampling (resamples x items): bounded memory.
BLOCK_CELLS = 4_000_000
# Two scores this close are the same score (float means of the same shares, summed in
# another order, differ in the last bits).
TIE_TOLERANCE = 1e-9

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap 95% interval. Undefined is None with a note, never 0: a
    judge whose scores never vary has no correlation with anyone."""

    value: float | None  # None: undefined (fewer than 2 items, a constant side...)
    ci95: tuple[float, float] | None
    n: int  # items it is over (rows, pairs, labels)
    method: str  # e.g. "spearman", "kendall tau-b", "pairwise accuracy (ties: ...)"
    note: str | None = None  # why value or ci95 is None, in words


def undefined(n: int, method: str, why: str) -> Estimate:
    return Estimate(None, None, n, method, why)


def as_floats(values: Sequence[float], name: str) -> Floats:
    """``values`` as a float array; a missing or non-finite value is an error naming its
    position, since a statistic quietly computed over fewer items is a different statistic."""
    out = np.empty(len(values), dtype=float)
    for i, v in enumerate(values):
        if v is None or isinstance(v, str):
            raise ValueError(f"{name}[{i}] is {v!r}, not a number: drop unlabelled items first")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name}[{i}] is {f}, not a finite number")
        out[i] = f
    return out


def same_length(**sides: Sequence[object]) -> int:
    lengths = {name: len(values) for name, values in sides.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"paired inputs differ in length: {shown}")
    return next(iter(lengths.values()), 0)


def check_resamples(resamples: int) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def block_size(items: int) -> int:
    """Resamples per vectorised block so a block holds at most BLOCK_CELLS numbers."""
    return max(1, BLOCK_CELLS // max(1, items))


def resampled_counts(
    n: int, p: Floats, resamples: int, seed: int, *, width: int | None = None
) -> Iterator[Floats]:
    """Bootstrap resamples as multinomial counts of ``n`` draws over the cells of ``p``,
    seeded, a block of rows at a time: every resampling statistic here draws this way, so
    the same seed gives the same resamples whichever statistic asks. ``width``: numbers a
    resample takes once the statistic expands it (default: one per cell), what bounds a block
    to BLOCK_CELLS."""
    rng = np.random.default_rng(seed)
    step = block_size(len(p) if width is None else width)
    for done in range(0, resamples, step):
        yield rng.multinomial(n, p, size=min(step, resamples - done)).astype(float)


def percentile_interval(
    draws: Sequence[float] | Floats, resamples: int
) -> tuple[tuple[float, float] | None, str | None]:
    """(2.5%, 97.5%) quantiles of the defined draws (NaN marks an undefined resample), and
    a note saying how many resamples were left out, or why there is no interval: none when
    more than half are undefined. A percentile bootstrap (Efron and Tibshirani, "An
    Introduction to the Bootstrap", 1993, ch. 13)."""
    values = np.asarray(draws, dtype=float)
    defined = values[~np.isnan(values)]
    missing = resamples - len(defined)
    if len(defined) * 2 < resamples:
        return None, (
            f"the statistic is undefined on {missing} of {resamples} bootstrap resamples "
            "(a side never varies in them), too many for an interval"
        )
    low, high = np.quantile(defined, [0.025, 0.975])
    note = None
    if missing:
        note = (
            f"{missing} of {resamples} bootstrap resamples left out: the statistic is "
            "undefined on them (a side never varies)"
        )
    return (float(low), float(high)), note
