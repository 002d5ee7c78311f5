"""How a metric reads a rater's labels: declared by the metric (Metric.human_labels), as are
the value it is compared on (row_value) and its report view (row_view); evalq.core.human reads
the labels by it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class HumanLabels:
    """How a metric reads a rater's labels (Metric.human_labels). ``row``: what the --human
    column holds and is compared with: a number or yes/no against the row score ("score"), a
    1-5 rating against the mean rating, ordinal ("rating"), or the preferred side against the
    judges' winner ("preference"). ``sentences``: the metric's rows may carry a rater's
    labels for the response's sentences (the human_labels column)."""

    row: Literal["score", "rating", "preference"] = "score"
    sentences: bool = False
