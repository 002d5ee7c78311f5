"""Which value of a row two sides are compared on: the one its metric declares
(Metric.compared_on, evalq.core.row_value.RowValue), e.g.

- gecko-image, gecko-video: the share of the rubric's questions answered as expected, paired
  question by question on the questions both sides asked (evalq.comparisons.paired_rows);
- pointwise: the row's mean rating on the 1-5 scale, so differences read in rating points;
- rank: the judge's consistency, with a note saying it is not a candidate's quality.

A metric this evalq does not have (a job stored by a metric package since removed) is
compared on its row score, paired on shared questions where both rows have them; sides of
different metrics on their row scores alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.metric import known_metric
from evalq.core.row_value import QUESTION_SHARE, RowValue

__all__ = ["QUESTION_SHARE", "ROW_SCORE", "SCORE", "RowValue", "value_for"]

ROW_SCORE = RowValue("score", "row score")
# A metric this module can not ask (or sides built without one): the row score, paired on
# shared questions where both rows carry the same scored questions, as Gecko's.
SCORE = RowValue("score", "score", by_question=True)


def value_for(metrics: Sequence[str]) -> tuple[RowValue, str | None]:
    """The value sides scored by these metrics are compared on, and a note when the metrics
    differ (then only the row scores, each on [0, 1], can be set side by side)."""
    named = sorted({m for m in metrics if m})
    if len(named) == 1:
        metric = known_metric(named[0])
        return (SCORE if metric is None else metric.compared_on), None
    if not named:
        return SCORE, None
    return ROW_SCORE, (
        f"the sides were scored by different metrics ({', '.join(named)}): their row scores "
        "(each on 0-1) are compared, which may not measure the same thing"
    )
