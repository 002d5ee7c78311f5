"""Spearman's rho and Kendall's tau-b between a judge's row scores and human ones, each with a
seeded bootstrap interval over rows; both undefined (None) when a side never varies."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalq.core.human.estimate import (
    RESAMPLES,
    SEED,
    Estimate,
    Floats,
    as_floats,
    block_size,
    check_resamples,
    percentile_interval,
    resampled_counts,
    same_length,
    undefined,
)

# Kendall costs resamples x points^2, Spearman resamples x points (distinct (x, y) points);
# past these many operations the resamples are cut (never under MIN_KENDALL_RESAMPLES, nor
# MIN_SPEARMAN_RESAMPLES) and the method says so. A running job's summary is built on each
# `evalq status`: 2000 Spearman resamples of 10,000 rows took 2.4 s of CPU, 400 take 0.5 s.
KENDALL_BUDGET = 2_000_000_000
MIN_KENDALL_RESAMPLES = 200
SPEARMAN_BUDGET = 4_000_000
MIN_SPEARMAN_RESAMPLES = 200


class _Points:
    """Rows collapsed to distinct (x, y) points with their counts, and each point's
    position among the distinct x values and among the distinct y values. Ratings take few
    values, so a bootstrap resample of rows is a multinomial draw of each point's count, and
    both statistics are computed from counts for a block of resamples at once: exactly the
    statistic of the resampled rows, without expanding them."""

    def __init__(self, x: Floats, y: Floats) -> None:
        points, counts = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
        self.counts = counts.astype(float)
        self.x_values, self.x_code = np.unique(points[:, 0], return_inverse=True)
        self.y_values, self.y_code = np.unique(points[:, 1], return_inverse=True)
        self.x = points[:, 0]
        self.y = points[:, 1]

    def draws(self, resamples: int, seed: int) -> list[Floats]:
        """Blocks of resampled counts (resamples x points), seeded."""
        n = int(self.counts.sum())
        return list(resampled_counts(n, self.counts / n, resamples, seed))


def _group_totals(w: Floats, code: np.ndarray, groups: int) -> Floats:
    """Total weight per distinct value, per resample (rows of ``w``)."""
    totals = np.zeros((groups, w.shape[0]))
    np.add.at(totals, code, w.T)
    return totals.T


def _midranks(w: Floats, code: np.ndarray, groups: int) -> tuple[Floats, Floats]:
    """Each point's average rank per resample, and how many distinct values occur."""
    totals = _group_totals(w, code, groups)
    ranks = np.cumsum(totals, axis=1) - (totals - 1) / 2
    return ranks[:, code], (totals > 0).sum(axis=1).astype(float)


def _spearman_weighted(pts: _Points, w: Floats) -> Floats:
    rx, kinds_x = _midranks(w, pts.x_code, len(pts.x_values))
    ry, kinds_y = _midranks(w, pts.y_code, len(pts.y_values))
    total = w.sum(axis=1, keepdims=True)
    dx = rx - (w * rx).sum(axis=1, keepdims=True) / total
    dy = ry - (w * ry).sum(axis=1, keepdims=True) / total
    sxy = (w * dx * dy).sum(axis=1)
    sxx = (w * dx * dx).sum(axis=1)
    syy = (w * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
    rho[(kinds_x < 2) | (kinds_y < 2)] = np.nan
    return np.asarray(np.clip(rho, -1.0, 1.0), dtype=float)


def _tied_pairs(w: Floats, code: np.ndarray, groups: int) -> Floats:
    totals = _group_totals(w, code, groups)
    return np.asarray((totals * (totals - 1) / 2).sum(axis=1), dtype=float)


def _kendall_weighted(pts: _Points, w: Floats) -> Floats:
    # C - D = sum over point pairs of w_p w_q sign(dx) sign(dy), halved for the double count;
    # pairs within one point tie on both sides and add nothing. Rows of the sign matrix are
    # made a block at a time so memory stays bounded however many points there are.
    c_minus_d = np.zeros(w.shape[0])
    rows = block_size(len(pts.counts))
    for start in range(0, len(pts.counts), rows):
        part = slice(start, start + rows)
        sign = np.sign(pts.x[part, None] - pts.x[None, :]) * np.sign(
            pts.y[part, None] - pts.y[None, :]
        )
        c_minus_d += ((w[:, part] @ sign) * w).sum(axis=1) / 2
    total = w.sum(axis=1)
    pairs = total * (total - 1) / 2
    free_x = pairs - _tied_pairs(w, pts.x_code, len(pts.x_values))
    free_y = pairs - _tied_pairs(w, pts.y_code, len(pts.y_values))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = c_minus_d / np.sqrt(free_x * free_y)
    tau[(free_x <= 0) | (free_y <= 0)] = np.nan
    return np.asarray(np.clip(tau, -1.0, 1.0), dtype=float)


def _points_or_undefined(x: Sequence[float], y: Sequence[float], method: str) -> _Points | Estimate:
    """The rows as points, or the undefined Estimate saying why there is nothing to rank."""
    n = same_length(x=x, y=y)
    xs, ys = as_floats(x, "x"), as_floats(y, "y")
    if n < 2:
        return undefined(n, method, f"{n} item(s): a correlation needs at least 2")
    if np.ptp(xs) == 0 or np.ptp(ys) == 0:
        side = "x" if np.ptp(xs) == 0 else "y"
        return undefined(n, method, f"every {side} value is the same: nothing to rank")
    return _Points(xs, ys)


def _correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: str,
    seed: int,
    resamples: int,
) -> Estimate:
    check_resamples(resamples)
    pts = _points_or_undefined(x, y, method)
    if isinstance(pts, Estimate):
        return pts
    n = len(x)
    statistic = _spearman_weighted if method == "spearman" else _kendall_weighted
    label = method
    points = len(pts.counts)
    if method == "spearman":
        used = max(MIN_SPEARMAN_RESAMPLES, min(resamples, SPEARMAN_BUDGET // max(1, points)))
    else:
        used = max(MIN_KENDALL_RESAMPLES, min(resamples, KENDALL_BUDGET // max(1, points**2)))
    if used < resamples:
        label = f"{method} ({used} resamples: {points} distinct points)"
    resamples = used
    value = float(statistic(pts, pts.counts[None, :])[0])
    draws = np.concatenate([statistic(pts, w) for w in pts.draws(resamples, seed)])
    ci, note = percentile_interval(draws, resamples)
    return Estimate(value, ci, n, label, note)


def spearman(
    x: Sequence[float], y: Sequence[float], *, seed: int = SEED, resamples: int = RESAMPLES
) -> Estimate:
    """Spearman's rho of x against y, with a percentile bootstrap 95% interval over rows:
    Pearson's correlation of the ranks, tied values sharing the average of the ranks they span
    (Spearman 1904; the tie rule of scipy.stats.spearmanr and of Kendall and Gibbons 1990,
    ch. 3)."""
    return _correlation(x, y, "spearman", seed, resamples)


def spearman_value(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho alone, None where spearman() has none: for a statistic computed on each
    resample of a bootstrap of its own (calibration's paired difference), where an interval
    would be thrown away, and even one asked for draws MIN_SPEARMAN_RESAMPLES."""
    pts = _points_or_undefined(x, y, "spearman")
    if isinstance(pts, Estimate):
        return None
    return float(_spearman_weighted(pts, pts.counts[None, :])[0])


def kendall(
    x: Sequence[float], y: Sequence[float], *, seed: int = SEED, resamples: int = RESAMPLES
) -> Estimate:
    """Kendall's tau-b of x against y, with a percentile bootstrap 95% interval over rows:
    (C - D) / sqrt((P - Tx)(P - Ty)) over the P = n(n-1)/2 pairs, C concordant, D discordant,
    Tx and Ty tied on each side (Kendall 1945; scipy's kendalltau(variant="b")). Tau-b rather
    than tau-a because 1-5 ratings tie constantly, and tau-a would then read low."""
    return _correlation(x, y, "kendall tau-b", seed, resamples)
