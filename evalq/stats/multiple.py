"""Holm's correction for several tests at once: comparing k candidates makes k(k-1)/2 pairs,
and at 5% each some pair looks significant by chance alone."""

from __future__ import annotations

from collections.abc import Sequence

HOLM_NOTE = "Holm step-down correction over {m} comparisons (family-wise error rate at {alpha})"


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the input order; a missing p stays missing and is not
    counted among the tests. Step-down: the smallest p times m, the next times m - 1, and so
    on, each kept at least as large as the one before; it keeps the chance of any false
    finding at 5% and rejects at least as much as Bonferroni."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
