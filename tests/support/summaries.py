"""Job summaries in tests: what two runs of one dataset must agree on, whatever happened in
between (killed workers, a Redis outage, batch mode instead of online), and a summary built
by hand for the client side's tables, reports and comparisons to read."""

from __future__ import annotations

from typing import Any

from evalq.core.models import JobSummary


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


def job_summary(rows: int, **fields: Any) -> JobSummary:
    """A finished job of `rows` rows, every one scored with one judge call, with `fields` over
    that: a test names only the figures it is about, and a field JobSummary gains is filled
    in here once."""
    base: dict[str, Any] = {
        "job_id": "j1",
        "metric": "pointwise",
        "status": "finished",
        "judge_model": "m",
        "simulated": False,
        "rows_total": rows,
        "rows_done": rows,
        "rows_scored": rows,
        "rows_partial": 0,
        "rows_failed": 0,
        "mean_score": 0.5,
        "ci95": None,
        "tag_scores": {},
        "tag_counts": {},
        "unscored_by_reason": {},
        "rows_failed_by_reason": {},
        "judge_calls": rows,
        "prompt_tokens": 10,
        "output_tokens": 5,
        "rubric_cache_hits": 0,
        "retries": 0,
        "rate_limited": 0,
    }
    return JobSummary(**(base | fields))
