"""The dataset columns a rating template reads: a text row read into ``data`` (its document as
media), and the checks that a column the template needs is in the dataset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalq.core.errors import DatasetError
from evalq.core.media import MediaPlace
from evalq.core.models import RowInput
from evalq.core.row_columns import read_columns, text_cell
from evalq.metrics.ratings.rubrics import DOCUMENT
from evalq.metrics.ratings.templates import Template

PROMPT_ALIASES = ("instruction", "question")  # other names for the prompt column (built-ins)


def present_columns(row: RowInput) -> set[str]:
    """Columns of a row that hold a value the prompt can use."""
    return set(row.data) | set(row.media)


def dataset_columns(rows: Iterable[RowInput]) -> list[str]:
    seen: set[str] = set()
    for row in rows:
        seen |= present_columns(row) | set(row.extra)
    return sorted(seen)


def check_columns(template: Template, rows: Sequence[RowInput]) -> list[str]:
    """Fail the dataset when a column the template needs is in no row (a typo in a template
    or a header); warn about rows that lack one, which fail alone when they are prepared.
    With no valid row there is nothing to check: the rows' own errors say what is wrong."""
    if not rows:
        return []
    columns = dataset_columns(rows)
    available = ", ".join(columns) or "(none)"
    for group in template.requires:
        if any(column in columns for column in group):
            continue
        if template.rubric is None:
            raise DatasetError(
                f"template placeholder {{{group[0]}}} is not a column of the dataset (or is "
                f"empty in every row); columns available: {available}"
            )
        raise DatasetError(
            f"template {template.name} needs a column {' or '.join(group)}, which the dataset "
            f"does not have (or is empty in every row); columns available: {available}"
        )
    warnings = []
    for row in rows:
        lacking = missing_inputs(row, template.requires)
        if lacking:
            warnings.append(
                f"row {row.id} (line {row.line}): no value for {', '.join(lacking)}; "
                "it will fail with input_error"
            )
    return warnings


def missing_inputs(row: RowInput, groups: Iterable[tuple[str, ...]]) -> list[str]:
    present = present_columns(row)
    return [" or ".join(group) for group in groups if not any(c in present for c in group)]


def read_row(
    number: int,
    record: dict[str, Any],
    place: MediaPlace,
    known: frozenset[str],
    *,
    required: tuple[str, ...] = (),
    prompt_aliases: bool = False,
) -> RowInput:
    """A text row: known columns become ``data`` (a document becomes media), the rest extra.

    Template inputs are not required here: a column missing from every row is a dataset
    error (check_columns), and a row missing one fails alone when it is prepared."""
    aliases = PROMPT_ALIASES if prompt_aliases else ()
    known = known | {"id", DOCUMENT, *aliases}
    row_id, extra = read_columns(number, record, known, required)
    data: dict[str, str] = {}
    for column in sorted(set(record) & known - {"id", DOCUMENT}):
        text = text_cell(record[column], row_id, column)
        if text is not None:
            data[column] = text
    read_from: dict[str, str] = {}
    for alias in aliases:
        if alias in data and "prompt" not in data:
            data["prompt"] = data.pop(alias)
            read_from["prompt"] = alias
    media = {}
    document = record.get(DOCUMENT)
    if document is not None and not (isinstance(document, str) and not document.strip()):
        media[DOCUMENT] = place.parse(document, row_id, DOCUMENT)
    return RowInput(
        id=row_id,
        line=number,
        prompt=data.get("prompt", ""),
        media=media,
        data=data,
        extra=extra,
        read_from=read_from,
    )
