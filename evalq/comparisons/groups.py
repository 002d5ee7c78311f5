"""A pair's paired differences per value of the user's own columns (--group-by).

A dataset's extra columns (Gecko's `category`, a promptfoo `topic`) travel with each row in
RowResult.extra. Each paired row goes to the group of its value, the paired statistics run
inside each group, and Holm's correction runs over every group of the pair (all columns
together), since reading many groups is many tests. A row's group is named as `evalq status`
names it (evalq.core.groups.group_value): a row without the column, or with an empty value,
goes to the group "(no value)" rather than out of sight.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_args

from evalq.comparisons.paired_rows import PairedRow, PairStatus
from evalq.core.groups import NO_VALUE, group_value
from evalq.core.models import RowResult
from evalq.stats.multiple import holm
from evalq.stats.paired import PairedDifference

Stats = Callable[[list[float], list[float]], PairedDifference]


@dataclass(frozen=True)
class GroupDifference:
    """Side A against side B on the rows of one value of one column (A minus B)."""

    column: str
    value: str
    stats: PairedDifference
    p_holm: float | None = None  # over every group of this pair
    counts: dict[str, int] = field(default_factory=dict)  # the group's rows by pair status


def column_value(row: RowResult | None, column: str) -> str | None:
    """The row's value of the column as a group's name; None where the row has none."""
    if row is None:
        return None
    value = group_value(row.extra.get(column))
    return None if value == NO_VALUE else value


def group_of(a: RowResult | None, b: RowResult | None, column: str) -> str:
    """The row's value of the column: side A's, else side B's (the same dataset row on both
    sides as a rule), else "(no value)"."""
    return column_value(a, column) or column_value(b, column) or NO_VALUE


def with_groups(rows: Sequence[PairedRow], columns: Sequence[str]) -> list[PairedRow]:
    if not columns:
        return list(rows)
    return [replace(r, groups={c: group_of(r.row_a, r.row_b, c) for c in columns}) for r in rows]


def compare_groups(
    rows: Sequence[PairedRow], columns: Sequence[str], stats: Stats
) -> list[GroupDifference]:
    """Every group of every column, in the order its values are first met, Holm over all."""
    out: list[GroupDifference] = []
    for column in columns:
        values = list(dict.fromkeys(r.groups.get(column, NO_VALUE) for r in rows))
        for value in values:
            members = [r for r in rows if r.groups.get(column, NO_VALUE) == value]
            paired = [r for r in members if r.status == "paired"]
            statuses = Counter(r.status for r in members)
            out.append(
                GroupDifference(
                    column,
                    value,
                    stats([r.score_a or 0.0 for r in paired], [r.score_b or 0.0 for r in paired]),
                    counts={s: statuses.get(s, 0) for s in get_args(PairStatus)},
                )
            )
    adjusted = holm([g.stats.p_permutation for g in out])
    return [replace(g, p_holm=p) for g, p in zip(out, adjusted, strict=True)]


def group_dict(group: GroupDifference, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "column": group.column,
        "value": group.value,
        **stats,
        "p_holm_groups": group.p_holm,
        "counts": group.counts,
    }
