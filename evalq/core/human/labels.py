"""Reading a rater's labels from a dataset, at the level the metric judges. A label that cannot be
read is left out of the agreement figures, counted and named, and never touches the row's
score: a rater's typo must not cost the judge a row."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalq.core.errors import DatasetError
from evalq.core.label_reading import HumanLabels
from evalq.core.models import JobConfig, RowInput, RowResult
from evalq.core.row_questions import yes_no_answer

# The groundedness dataset column holding a rater's labels for the response's sentences.
SENTENCE_LABELS_COLUMN = "human_labels"
SENTENCE_LABELS = ("supported", "unsupported", "contradictory", "no_rad")
# The pairwise sides a rater may name: A, B or a tie, or the column of the preferred response
# (ours or Vertex AI's names, as evalq.metrics.pairwise.sides reads them; A is the first).
_SIDE_WORDS = {"a": "A", "b": "B", "tie": "tie", "same": "tie", "equal": "tie", "draw": "tie"}
_SIDE_COLUMNS = {
    "response_a": "A",
    "response": "A",
    "response_b": "B",
    "baseline_model_response": "B",
}
PREFERENCES = ("A", "B", "tie")


def metric_labels(metric: str) -> HumanLabels:
    """The metric's way of reading labels; a metric this evalq does not have (a stored job of
    a metric package since removed) reads the --human column as scores, as most do."""
    from evalq.core.metric import known_metric

    known = known_metric(metric)
    return HumanLabels() if known is None else known.human_labels


def has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


@dataclass(frozen=True)
class LabelSources:
    """Where a job's human labels are: a --human column, questions' own labels, groundedness
    sentence labels."""

    column: str | None
    questions: bool
    sentences: bool

    def __bool__(self) -> bool:
        return self.column is not None or self.questions or self.sentences


def label_sources(rows: Sequence[RowResult], config: JobConfig) -> LabelSources:
    """Cheap, so that a summary without labels never loads the agreement statistics (numpy):
    `evalq status` of a running job builds one on every call."""
    column = config.options.get("human")
    return LabelSources(
        column=column if isinstance(column, str) and column else None,
        questions=any(q.human or q.human_error for r in rows for q in r.questions),
        sentences=metric_labels(config.metric).sentences
        and any(has_value(r.extra.get(SENTENCE_LABELS_COLUMN)) for r in rows),
    )


class BadLabel(ValueError):
    """A label left out: why (a short reason to count by) and a message naming where; raised
    by the readers for the caller to count."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def _shown(value: Any) -> str:
    """A label as the dataset wrote it, clipped: text quoted, a number or list as JSON."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:39] + "…")
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:39] + "…"


def row_number(value: Any, where: str) -> float:
    """A row-level human rating as a number: a number, a numeric text, or yes/no as 1/0."""
    if not has_value(value):
        raise BadLabel("missing", f"{where}: no human label")
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        word = yes_no_answer(value)
        if word is not None:
            return 1.0 if word == "yes" else 0.0
        try:
            number = float(str(value).strip())
        except ValueError:
            raise BadLabel(
                "not_a_number", f"{where}: human {_shown(value)} is not a number or yes/no"
            ) from None
    if not math.isfinite(number):
        raise BadLabel("not_a_number", f"{where}: human {_shown(value)} is not a finite number")
    return number


def rating_label(value: Any, where: str, low: int, high: int) -> int:
    """A human rating on an ordinal scale (pointwise 1-5): a whole number in range."""
    number = row_number(value, where)
    if number != int(number) or not low <= number <= high:
        raise BadLabel(
            "out_of_range", f"{where}: human {_shown(value)} is not a whole rating {low}-{high}"
        )
    return int(number)


def preference(value: Any, where: str) -> str:
    """A pairwise preference: A, B or tie, or the preferred response's column name."""
    if not has_value(value):
        raise BadLabel("missing", f"{where}: no human preference")
    word = str(value).strip().strip(".").lower()
    side = _SIDE_WORDS.get(word) or _SIDE_COLUMNS.get(word)
    if side is None:
        raise BadLabel(
            "unknown_label",
            f"{where}: human {_shown(value)} is not A, B, tie or a response column's name",
        )
    return side


def sentence_label(value: Any, where: str) -> str:
    word = re.sub(r"[\s-]+", "_", str(value).strip().lower()) if isinstance(value, str) else ""
    if word == "norad":
        word = "no_rad"
    if word not in SENTENCE_LABELS:
        raise BadLabel(
            "unknown_label",
            f"{where}: human {_shown(value)} is not one of {', '.join(SENTENCE_LABELS)}",
        )
    return word


def sentence_entries(value: Any, where: str) -> list[tuple[str | None, Any]]:
    """The `human_labels` cell as (sentence or None, label) in order: a JSON list of labels in
    the order evalq splits the response, or of {"sentence", "label"} objects."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise BadLabel("unreadable", f"{where}: {SENTENCE_LABELS_COLUMN} is not JSON") from None
    if not isinstance(value, list):
        raise BadLabel("unreadable", f"{where}: {SENTENCE_LABELS_COLUMN} must be a list of labels")
    out: list[tuple[str | None, Any]] = []
    for item in value:
        if isinstance(item, Mapping):
            sentence = item.get("sentence")
            out.append((sentence if isinstance(sentence, str) else "", item.get("label")))
        else:
            out.append((None, item))
    return out


def check_human_column(options: Mapping[str, Any], rows: Sequence[RowInput]) -> None:
    """Refuse a --human column no row has (a typo would give no agreement at all)."""
    column = options.get("human")
    if not column or not rows or any(column in row.extra for row in rows):
        return
    there = sorted({name for row in rows for name in row.extra})
    raise DatasetError(
        f"--human {column!r}: no row has this column; the columns the metric does not read "
        f"are: {', '.join(there) or '(none)'}"
    )


def label_columns(metric: str, options: Mapping[str, Any]) -> frozenset[str]:
    """The extra columns read as human labels (not 'unknown' to the loader's warning)."""
    column = options.get("human")
    named = {column} if isinstance(column, str) else set()
    sentences = {SENTENCE_LABELS_COLUMN} if metric_labels(metric).sentences else set()
    return frozenset(named | sentences)
