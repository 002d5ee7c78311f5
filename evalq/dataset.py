"""Dataset loading and row validation for JSONL and CSV files.

A file that is not a dataset fails before anything is enqueued (DatasetError). A bad row
becomes an InputError naming the row and the field, and the other rows go on.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalq.errors import DatasetError, InputError
from evalq.models import Question, RowInput

_MAX_FIELD = 1_000_000


@dataclass
class LoadedDataset:
    path: Path
    rows: list[RowInput] = field(default_factory=list)
    errors: list[tuple[int, InputError]] = field(default_factory=list)  # (line, error)
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.rows) + len(self.errors)


def _records(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, record or a message why the line is no record)."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a text file (not UTF-8); expected JSONL or CSV") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if suffix == ".csv":
        yield from _csv_records(path, text, required)
        return
    if suffix not in (".jsonl", ".ndjson", ".json") and not text.lstrip().startswith("{"):
        raise DatasetError(f"{path}: unknown dataset type {suffix or '(none)'}; use .jsonl or .csv")
    yield from _jsonl_records(text)


def _jsonl_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            yield number, f"not valid JSON ({exc.__class__.__name__}: {str(exc)[:80]})"
            continue
        yield (
            number,
            value
            if isinstance(value, dict)
            else f"expected a JSON object, got {type(value).__name__}",
        )


def _csv_records(
    path: Path, text: str, required: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    csv.field_size_limit(_MAX_FIELD)
    reader = csv.DictReader(text.splitlines())
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise DatasetError(f"{path}: not a CSV file: {exc}") from None
    missing = [c for c in required if c not in [h.strip() for h in header or []]]
    if not header or missing:
        raise DatasetError(
            f"{path}: CSV header has no {', '.join(map(repr, missing))} column (header: {header})"
        )
    try:
        for record in reader:
            extra = record.pop(None, None)
            if extra:
                yield reader.line_num, f"{len(extra)} more cells than the header has columns"
                continue
            yield reader.line_num, {k.strip(): v for k, v in record.items() if k is not None}
    except csv.Error as exc:
        raise DatasetError(f"{path}: CSV error at line {reader.line_num}: {exc}") from None


def parse_questions(
    value: Any, row_id: str, *, choices_required: bool = False
) -> list[Question] | None:
    """A row's own questions [{question, answer, tag, choices?}] (a JSON string in CSV)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(row_id, "questions", "not a JSON list") from None
    if not isinstance(value, list) or not value:
        raise InputError(row_id, "questions", "must be a non-empty list of {question, answer, tag}")
    out = []
    for i, item in enumerate(value):
        where = f"questions[{i}]"
        if not isinstance(item, dict):
            raise InputError(row_id, where, "must be an object with question, answer, tag")
        question, answer = item.get("question"), item.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise InputError(row_id, f"{where}.question", "missing or empty")
        if not isinstance(answer, str) or not answer.strip():
            raise InputError(row_id, f"{where}.answer", "missing or empty")
        choices = item.get("choices") or (None if choices_required else ["yes", "no"])
        if (
            not isinstance(choices, list)
            or not choices
            or not all(isinstance(c, str) for c in choices)
        ):
            raise InputError(row_id, f"{where}.choices", "must be a non-empty list of strings")
        tag = item.get("tag", "other")
        out.append(
            Question(
                question=question.strip(),
                expected=answer.strip().lower(),
                tag=str(tag).strip().lower() or "other",
                choices=choices,
                justification=str(item.get("justification", "")),
            )
        )
    return out


def row_id_of(number: int, record: Mapping[str, Any]) -> str:
    raw_id = record.get("id")
    return str(raw_id).strip() if raw_id not in (None, "") else str(number)


def refuse_duplicate_ids(path: Path, ids: list[tuple[int, str]], shown: int = 50) -> None:
    """Refuse a dataset whose ids repeat, naming every line involved.

    Results are read back by id, so two rows under one id would make one of them unreadable;
    a rejected line counts with the id it has (or its default, the line number), because its
    failed result is reported under that id too. Workers key rows by line number, which the
    readers keep unique; a repeat there is a reader bug, refused rather than silently merged.
    """
    by_id: dict[str, list[int]] = {}
    lines: set[int] = set()
    for line, row_id in ids:
        if line in lines:
            raise DatasetError(f"{path}: line {line} was read twice (a bug in the reader)")
        lines.add(line)
        by_id.setdefault(row_id, []).append(line)
    repeated = [(row_id, where) for row_id, where in by_id.items() if len(where) > 1]
    if not repeated:
        return
    parts = [
        f"id {row_id!r} on lines {', '.join(map(str, where))}" for row_id, where in repeated[:shown]
    ]
    if len(repeated) > shown:
        rest = sorted(line for _, where in repeated[shown:] for line in where)
        parts.append(
            f"{len(repeated) - shown} more repeated ids on lines {', '.join(map(str, rest))}"
        )
    raise DatasetError(
        f"{path}: row ids must be unique (a row without an id takes its line number); "
        f"nothing was submitted: {'; '.join(parts)}"
    )


def unknown_columns(
    number: int,
    row_id: str,
    record: Mapping[str, Any],
    known: frozenset[str],
    required: tuple[str, ...],
    warnings: list[str],
) -> list[str]:
    """Columns the metric does not know: kept as extra with a warning, or named in the error
    when a required field is missing (a typo such as `promt` is the likely cause)."""
    unknown = sorted(set(record) - known)
    names = ", ".join(map(repr, unknown))
    for field_name in required:
        value = record.get(field_name)
        if value is None or (isinstance(value, str) and not value.strip()):
            state = "empty" if isinstance(value, str) else "missing"
            hint = f" (unknown column(s) {names}: a typo?)" if unknown else ""
            raise InputError(row_id, field_name, state + hint)
    if unknown:
        warnings.append(f"row {row_id} (line {number}): unknown column(s) {names} kept as extra")
    return unknown


def require_text(record: Mapping[str, Any], row_id: str, field_name: str) -> str:
    value = record.get(field_name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError(row_id, field_name, "empty" if isinstance(value, str) else "missing")
    return value.strip()


def load_dataset(
    path: str | Path, metric: str = "gecko-image", options: Mapping[str, Any] | None = None
) -> LoadedDataset:
    """Read and validate every row; raise DatasetError if the file is no dataset at all."""
    from evalq.metric import get_metric

    spec = get_metric(metric)
    options = options or {}
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    loaded = LoadedDataset(path=path)
    ids: list[tuple[int, str]] = []  # (line, id) of every record, rejected ones included
    bad_lines = 0
    for number, record in _records(path, spec.required_columns):
        if isinstance(record, str):
            bad_lines += 1
            ids.append((number, str(number)))
            loaded.errors.append((number, InputError(str(number), "(line)", record)))
            continue
        ids.append((number, row_id_of(number, record)))
        try:
            row = spec.parse_row(number, record, path.parent, options, loaded.warnings)
        except InputError as exc:
            loaded.errors.append((number, exc))
            continue
        loaded.rows.append(row)
    if loaded.total == 0:
        raise DatasetError(f"{path}: no rows")
    if bad_lines == loaded.total:
        raise DatasetError(f"{path}: no line is a JSON object; not a JSONL dataset")
    refuse_duplicate_ids(path, ids)
    loaded.warnings += spec.check(loaded.rows, options)
    return loaded
