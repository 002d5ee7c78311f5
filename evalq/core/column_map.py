"""Reading a dataset's own column names as the metric's fields (--map FIELD=COLUMN, `column_map=`),
so a promptfoo or in-house CSV runs without being rewritten first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalq.core.errors import DatasetError


def check_column_map(column_map: Mapping[str, str] | None) -> dict[str, str]:
    """The map as given, refused when it cannot mean one thing: an empty name, a field mapped
    twice (names are read without the spaces around them, so {"response": "a", "response ":
    "b"} maps one field from two columns), or two fields read from one column (each row would
    be judged with one text in two roles)."""
    if not column_map:
        return {}
    out: dict[str, str] = {}
    by_column: dict[str, str] = {}
    by_field: dict[str, str] = {}
    for given_field, given_column in column_map.items():
        if not isinstance(given_field, str) or not isinstance(given_column, str):
            raise DatasetError(
                f"column map {given_field!r}={given_column!r}: field and column must be text"
            )
        field, column = given_field.strip(), given_column.strip()
        if not field or not column:
            raise DatasetError(f"column map {field!r}={column!r}: write FIELD=COLUMN, both named")
        if field in by_field:
            raise DatasetError(mapped_twice("column map", field, [by_field[field], column]))
        by_field[field] = column
        if column in by_column and by_column[column] != field:
            raise DatasetError(
                f"column map: column {column!r} is mapped to both {by_column[column]!r} and "
                f"{field!r}; map each column to one field"
            )
        by_column[column] = field
        if field != column:
            out[field] = column
    return out


def mapped_twice(flag: str, field: str, columns: list[str]) -> str:
    said = ", ".join(f"{field}={column}" for column in columns)
    return f"{flag}: field {field!r} is mapped twice ({said}); map each field once"


def parse_assignments(items: Iterable[str], flag: str = "--map") -> dict[str, str]:
    """FIELD=COLUMN items (a repeatable flag) as a map; a malformed item names itself, and a
    field given twice (even from one column) is named with both."""
    out: dict[str, str] = {}
    for item in items:
        field, sep, column = item.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise DatasetError(f"{flag} {item!r}: write FIELD=COLUMN (e.g. query=customer_message)")
        if field.strip() in out:
            raise DatasetError(
                mapped_twice(flag, field.strip(), [out[field.strip()], column.strip()])
            )
        out[field.strip()] = column.strip()
    return check_column_map(out)


def rename_columns(
    number: int, record: dict[str, Any], column_map: Mapping[str, str], path: Path
) -> dict[str, Any]:
    """The record with each mapped column under its field's name, in the record's own order,
    before the metric parses it, so every check and error downstream speaks of the field. A
    record that has both the field and the column it is mapped from is refused: which of the
    two the metric should read is not ours to guess."""
    if not column_map:
        return record
    fields_of = {column: field for field, column in column_map.items()}
    for field, column in column_map.items():
        if field in record and column in record:
            raise DatasetError(
                f"{path}: line {number} has both column {field!r} and column {column!r}, "
                f"which the column map reads as {field!r}; drop one, or map {field!r} "
                "from the column you mean"
            )
    return {fields_of.get(name, name): value for name, value in record.items()}


def unseen_columns(column_map: Mapping[str, str], seen: set[str]) -> list[str]:
    """Mapped columns that no record has (a typo in the map, or the wrong dataset)."""
    return [column for column in column_map.values() if column not in seen]


def refuse_unseen(path: Path, column_map: Mapping[str, str], seen: set[str]) -> None:
    if absent := unseen_columns(column_map, seen):
        raise DatasetError(
            f"{path}: the column map names column(s) {', '.join(map(repr, absent))}, which no "
            f"row has; columns present: {', '.join(sorted(seen)) or '(none)'}"
        )


def header_columns(required: tuple[str, ...], column_map: Mapping[str, str]) -> tuple[str, ...]:
    """The columns a CSV header needs: a mapped field is looked for under its column's name."""
    return tuple(column_map.get(name, name) for name in required)
