"""`--fail-under X`: the check a CI run makes of a comparison.

A pair fails when its mean paired difference A - B (in the compared value's own units: rating
points for pointwise, a share for the others) is below X; with --group-by, each group of each
pair is checked the same way. A pair or group with no paired row has no difference to check,
and fails too: a check that could not be made must not pass in silence.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalq.comparisons.comparison import Comparison
from evalq.stats.paired import PairedDifference


@dataclass(frozen=True)
class Shortfall:
    """One pair (or one group of a pair) below the threshold."""

    a: str
    b: str
    mean_diff: float | None  # None: no paired row
    rows: int
    column: str | None = None  # the --group-by column, None for the pair as a whole
    group: str | None = None

    def line(self, threshold: float, unit: str) -> str:
        where = f"{self.a} vs {self.b}"
        if self.column is not None:
            where += f", {self.column}={self.group}"
        if self.mean_diff is None:
            return f"{where}: no paired row, so A - B can not be checked against {threshold:+g}"
        return (
            f"{where}: mean difference A - B {self.mean_diff:+.3f} ({unit}, {self.rows} rows) "
            f"is below {threshold:+g}"
        )


def _short(stats: PairedDifference, threshold: float) -> bool:
    return stats.mean_diff is None or stats.mean_diff < threshold


def shortfalls(comparison: Comparison, threshold: float) -> list[Shortfall]:
    """Every pair, and every group of every pair, whose mean difference A - B is below
    ``threshold`` (or has no paired row), in the comparison's order."""
    out = []
    for pair in comparison.pairs:
        if _short(pair.overall, threshold):
            out.append(Shortfall(pair.a, pair.b, pair.overall.mean_diff, pair.overall.n))
        for g in pair.groups:
            if _short(g.stats, threshold):
                out.append(
                    Shortfall(pair.a, pair.b, g.stats.mean_diff, g.stats.n, g.column, g.value)
                )
    return out
