"""A pairwise row in a report: each comparison in both orders, the winner as the headline, and
the two responses as "A · COLUMN" and "B · COLUMN" (the side the verdicts name, then the
user's column: ours, Vertex's, or a --map column)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalq.core.models import RowInput, RowResult
from evalq.core.row_view import (
    JudgedInput,
    Text,
    ViewParts,
    judge_label,
    shown,
    texts_of,
    unscored_units,
)
from evalq.metrics.pairwise.sides import row_pair
from evalq.metrics.ratings.views import comparison_line, side_name


def pairwise_view(
    result: RowResult, named: Sequence[JudgedInput], row: RowInput | None
) -> ViewParts:
    details = result.details
    sides: Mapping[str, str] = details.get("sides") or {"A": "response_a", "B": "response_b"}
    comparisons = details.get("comparisons") or []
    verdicts = tuple(
        comparison_line(
            c,
            judge_label(shown(c.get("judge")), c.get("sample", 0), len(comparisons)),
            sides,
            "winner " + side_name(c.get("outcome"), sides),
        )
        for c in comparisons
    )
    winner = details.get("winner")
    if winner is None:
        headline = "no winner (unscored)"
    else:
        headline = "tie" if winner == "tie" else f"winner {side_name(winner, sides)}"
    texts: tuple[Text, ...] = ()
    if row is not None:
        labels = dict(zip(row_pair(row), ("A · {column}", "B · {column}"), strict=True))
        texts = texts_of(named, labels)
    return ViewParts(
        headline=headline,
        tone="plain" if winner is not None else "unscored",
        texts=texts,
        verdicts=verdicts + unscored_units(result),
    )
