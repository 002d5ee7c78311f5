"""Figures per value of the user's own columns (--group-by): one mean with its interval per
category, per candidate in a multi-candidate job. Pure: rows in, GroupSummary out."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from evalq.core.column_names import refuse_repeated_names
from evalq.core.errors import DatasetError
from evalq.core.models import GroupSummary, RowInput, RowResult
from evalq.core.scoring import score_figures

NO_VALUE = "(no value)"


def group_value(value: Any) -> str:
    """A cell (from the result's `extra`, as the dataset had it) as a group's name: text as it
    is (trimmed), numbers as written, anything structured as compact JSON; an empty cell is
    NO_VALUE, its own group, so its rows are counted somewhere visible rather than dropped."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NO_VALUE
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def shared_with(row: RowResult, column: str | None) -> str:
    """What a row shares with the rows it is paired with (pairwise accuracy: rows of one
    prompt): the value of `column`, else the prompt, also when the metric's template does not
    read it (then it is kept as an extra column); NO_VALUE when the row has none."""
    if column is not None:
        return group_value(row.extra.get(column))
    return group_value(row.prompt or row.extra.get("prompt"))


def extra_columns(rows: Iterable[RowInput | RowResult]) -> list[str]:
    """The columns rows can be grouped by: every extra column some row (or result) has."""
    return sorted({name for row in rows for name in row.extra})


def group_by_columns(columns: Sequence[str]) -> list[str]:
    """--group-by's columns as given (each read without the spaces around it, as every column
    name is), refused in one line when one is named twice."""
    names = [str(column).strip() for column in columns]
    refuse_repeated_names("--group-by", names)
    return names


def check_group_columns(columns: Sequence[str], rows: Sequence[RowInput | RowResult]) -> None:
    """Refuse a column no row has, naming it and the columns there are. With no row read yet
    (a job just submitted) there is nothing to check against."""
    if not rows:
        return
    there = extra_columns(rows)
    for column in columns:
        if column not in there:
            raise DatasetError(
                f"--group-by {column!r}: no row has this column; the columns to group by (those "
                f"the metric does not read) are: {', '.join(there) or '(none)'}"
            )


def _summary(column: str, value: str, candidate: str | None, rows: list[RowResult]) -> GroupSummary:
    return GroupSummary(
        column=column,
        value=value,
        candidate=candidate,
        **score_figures(rows),
    )


def group_summaries(
    rows: Sequence[RowResult], columns: Sequence[str], candidates: Sequence[str] = ()
) -> list[GroupSummary]:
    """Per column, per value in the order first met, the rows' figures; in a multi-candidate
    job one entry per candidate (in `candidates` order, then any other met), each from that
    candidate's cells alone: pooling two models would hide which one a category favours."""
    named = [c for c in dict.fromkeys(r.candidate for r in rows) if c is not None]
    order: list[str | None] = [*candidates, *(c for c in named if c not in candidates)]
    out: list[GroupSummary] = []
    for column in dict.fromkeys(columns):
        by_value: dict[str, list[RowResult]] = {}
        for row in rows:
            by_value.setdefault(group_value(row.extra.get(column)), []).append(row)
        for value, members in by_value.items():
            if not order:
                out.append(_summary(column, value, None, members))
                continue
            for candidate in order:
                own = [r for r in members if r.candidate == candidate]
                if own:
                    out.append(_summary(column, value, candidate, own))
    return out
