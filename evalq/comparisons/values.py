"""Which value of a row two sides are compared on, per metric.

A row score is each metric's own summary on [0, 1], but only some metrics' score is what a
reader wants to compare: a pointwise score of 0.75 is a rating of 4, and a difference of 0.25
is a whole rating point. So each metric names the value its rows are compared on, its scale
and the words a table prints above it:

- gecko-image, gecko-video: the share of the rubric's questions answered as expected, paired
  question by question on the questions both sides asked (evalq.comparisons.paired_rows).
- pointwise: the row's mean rating on the 1-5 scale, so differences read in rating points.
- pairwise: the share of the row's verdicts won by response A (a tie counts a half).
- groundedness: the share of the row's judges that found the response grounded.
- rank: the row's score, the share of its candidate pairs whose verdict survived the order
  swap. That is the judge's consistency, not any candidate's quality: a rank job ranks its
  candidates inside the job (the metric summary's Bradley-Terry strengths, fitted over all
  rows), which has no per-row value to pair. The label says so.

Any other metric is compared on its row score (on shared questions where both rows have
them); sides of different metrics on their row scores alone. A row without the value (failed, unscored)
has None, and is left out of the paired figures and counted, never a 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalq.core.models import RowResult
from evalq.metrics.ratings.parsing import RATING_MAX, RATING_MIN


@dataclass(frozen=True)
class RowValue:
    """What a comparison compares: ``name`` on [low, high]; ``by_question``: Gecko's pairing
    on the questions both sides scored."""

    key: str  # stable, for JSON and DataFrames: "score", "mean_rating", ...
    name: str  # words, e.g. "mean rating"
    low: float = 0.0
    high: float = 1.0
    by_question: bool = False
    note: str | None = None  # what the value is not, where a reader could take it for more

    @property
    def scale(self) -> str:
        return f"{self.low:g}-{self.high:g}"

    @property
    def label(self) -> str:
        """e.g. "mean rating (1-5)"."""
        return f"{self.name} ({self.scale})"

    @property
    def width(self) -> float:
        return self.high - self.low

    def of(self, row: RowResult | None) -> float | None:
        """The row's value; None when the row is missing, failed or has no such value."""
        if row is None or row.status == "failed":
            return None
        if self.key == "mean_rating":
            return _number(row.details.get("mean_rating"))
        return row.score

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "label": self.label,
            "low": self.low,
            "high": self.high,
            "paired_by": "question" if self.by_question else "row",
            "note": self.note,
        }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


QUESTION_SHARE = RowValue("score", "share of questions answered as expected", by_question=True)
MEAN_RATING = RowValue("mean_rating", "mean rating", float(RATING_MIN), float(RATING_MAX))
WIN_SHARE_A = RowValue("win_share_a", "win share of response A")
GROUNDED_SHARE = RowValue("grounded_share", "grounded share")
RANK_CONSISTENCY = RowValue(
    "judge_consistency",
    "judge consistency",
    note=(
        "rank rows are compared on the share of candidate pairs whose verdict survived the "
        "order swap (the judge's consistency), not on a candidate's quality; the ranking of "
        "candidates is in each job's metric summary"
    ),
)
ROW_SCORE = RowValue("score", "row score")
# A metric this module does not know (or sides built without one): the row score, paired on
# shared questions where both rows carry the same scored questions, as Gecko's.
SCORE = RowValue("score", "score", by_question=True)

BY_METRIC: dict[str, RowValue] = {
    "gecko-image": QUESTION_SHARE,
    "gecko-video": QUESTION_SHARE,
    "pointwise": MEAN_RATING,
    "pairwise": WIN_SHARE_A,
    "groundedness": GROUNDED_SHARE,
    "rank": RANK_CONSISTENCY,
}


def value_for(metrics: Sequence[str]) -> tuple[RowValue, str | None]:
    """The value sides scored by these metrics are compared on, and a note when the metrics
    differ (then only the row scores, each on [0, 1], can be set side by side)."""
    named = sorted({m for m in metrics if m})
    if len(named) == 1:
        return BY_METRIC.get(named[0], SCORE), None
    if not named:
        return SCORE, None
    return ROW_SCORE, (
        f"the sides were scored by different metrics ({', '.join(named)}): their row scores "
        "(each on 0-1) are compared, which may not measure the same thing"
    )
