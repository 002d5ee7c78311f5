"""Two judge setups' rows against one rater's labels, built by hand: the calibration's
figures (evalq.core.human.calibration) and the client's views of them (evalq.client.calibrate*)
are tested on the same rows, so each side's expectations hold for the other."""

from __future__ import annotations

from typing import Any

from evalq.core.human.calibration import SetupRows
from evalq.core.models import JobSummary, RowResult
from tests.support.summaries import job_summary

HUMAN = [5, 4, 4, 3, 2, 1, 5, 3, 2, 1, 4, 2]
# A's ratings follow the labels but for one swap; B's barely do.
RATINGS_A = [5, 4, 3, 3, 2, 1, 5, 3, 2, 2, 4, 1]
RATINGS_B = [3, 5, 2, 4, 5, 3, 2, 5, 4, 3, 1, 5]


def summary(job_id: str, **overrides: Any) -> JobSummary:
    return job_summary(15, **({"job_id": job_id, "dataset": "/data/labelled.jsonl"} | overrides))


def row(i: int, rating: float | None, label: Any) -> RowResult:
    extra = {} if label is ... else {"human": label}
    return RowResult(
        id=f"r{i}",
        line=i + 1,
        prompt=f"prompt {i // 3}",
        status="scored" if rating is not None else "failed",
        score=None if rating is None else (rating - 1) / 4,
        extra=extra,
    )


def setup_rows(name: str, ratings: list[int], cost: float | None = 0.03) -> SetupRows:
    rows = [row(i, r, h) for i, (r, h) in enumerate(zip(ratings, HUMAN, strict=True))]
    # Three rows that must be left out: no label, a label that is no number, an unscored row.
    rows += [row(12, 3, ...), row(13, 3, "great"), row(14, None, 4)]
    return SetupRows(name, summary(f"{name}job", cost_usd=cost), rows)
