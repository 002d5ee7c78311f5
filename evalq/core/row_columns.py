"""A dataset record's id, its text cells and the columns its metric does not read, as every metric
takes them: an unknown column is kept in the row's ``extra``, so results carry the user's own
fields through."""

from __future__ import annotations

from typing import Any

from evalq.core.dataset import row_id_of, unknown_columns
from evalq.core.errors import InputError


def read_columns(
    number: int,
    record: dict[str, Any],
    known: frozenset[str],
    required: tuple[str, ...],
) -> tuple[str, dict[str, Any]]:
    """(the row's id, its extra columns) for a record whose metric reads ``known``."""
    row_id = row_id_of(number, record)
    unknown = unknown_columns(row_id, record, known, required)
    return row_id, {k: record[k] for k in unknown}


def text_cell(value: Any, row_id: str, column: str) -> str | None:
    """A column read as text: numbers as written, blank as absent; anything else refused."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InputError(row_id, column, f"must be text, got {type(value).__name__}")
    return value.strip() or None
