"""The value of a row two jobs are compared on (`evalq compare`), as its metric declares it
(Metric.compared_on). A row without it (failed, unscored) has None and is left out of the paired
figures and counted, never a 0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalq.core.models import RowResult


@dataclass(frozen=True)
class RowValue:
    """What a comparison compares, when a row score on [0, 1] is not what a reader wants (a
    pointwise 0.75 is a rating of 4): ``name`` on [low, high]; ``by_question``: Gecko's pairing
    on the questions both sides scored; ``detail``: the row's details key holding the value,
    None for the row score."""

    key: str  # stable, for JSON and DataFrames: "score", "mean_rating", ...
    name: str  # words, e.g. "mean rating"
    low: float = 0.0
    high: float = 1.0
    by_question: bool = False
    note: str | None = None  # what the value is not, where a reader could take it for more
    detail: str | None = None

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
        if self.detail is not None:
            return _number(row.details.get(self.detail))
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


# A row score paired question by question where both rows carry scored questions (Gecko's
# share of questions answered as expected, and any metric that declares nothing better).
QUESTION_SHARE = RowValue("score", "share of questions answered as expected", by_question=True)
