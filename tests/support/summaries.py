"""What two runs of one dataset must agree on, whatever happened in between (killed workers, a
Redis outage, batch mode instead of online)."""

from __future__ import annotations

from typing import Any


def comparable(summary: Any, digits: int | None = 9) -> dict[str, Any]:
    """Row counts, mean and tag scores (rounded to `digits`: the same scores summed in another
    order may differ in the last bits; None compares them exactly) and the unscored reasons."""

    def same(value: float | None) -> float | None:
        return value if value is None or digits is None else round(value, digits)

    return {
        "rows": (
            summary.rows_total,
            summary.rows_done,
            summary.rows_scored,
            summary.rows_partial,
            summary.rows_failed,
        ),
        "mean": same(summary.mean_score),
        "tags": {k: same(v) for k, v in summary.tag_scores.items()},
        "unscored": summary.unscored_by_reason,
    }
