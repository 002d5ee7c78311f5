"""Dataset loading and row validation for JSONL and CSV files.

A file that is not a dataset fails before anything is enqueued (DatasetError). A bad row
becomes an InputError naming the row and the field, and the other rows go on.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalq.errors import DatasetError, InputError
from evalq.media import parse_media
from evalq.models import Question, RowInput

KNOWN_COLUMNS = frozenset({"id", "prompt", "image", "questions"})
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


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, record or a message why the line is no record)."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a text file (not UTF-8); expected JSONL or CSV") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if suffix == ".csv":
        yield from _csv_records(path, text)
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


def _csv_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    csv.field_size_limit(_MAX_FIELD)
    reader = csv.DictReader(text.splitlines())
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise DatasetError(f"{path}: not a CSV file: {exc}") from None
    if not header or "prompt" not in [h.strip() for h in header]:
        raise DatasetError(f"{path}: CSV header has no 'prompt' column (header: {header})")
    try:
        for record in reader:
            extra = record.pop(None, None)
            if extra:
                yield reader.line_num, f"{len(extra)} more cells than the header has columns"
                continue
            yield reader.line_num, {k.strip(): v for k, v in record.items() if k is not None}
    except csv.Error as exc:
        raise DatasetError(f"{path}: CSV error at line {reader.line_num}: {exc}") from None


def _questions(value: Any, row_id: str) -> list[Question] | None:
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
        choices = item.get("choices") or ["yes", "no"]
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            raise InputError(row_id, f"{where}.choices", "must be a list of strings")
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


def _row(number: int, record: dict[str, Any], base_dir: Path, warnings: list[str]) -> RowInput:
    raw_id = record.get("id")
    row_id = str(raw_id).strip() if raw_id not in (None, "") else str(number)
    unknown = sorted(set(record) - KNOWN_COLUMNS)
    prompt = record.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        hint = f" (unknown column(s) {', '.join(map(repr, unknown))}: a typo?)" if unknown else ""
        raise InputError(
            row_id, "prompt", ("empty" if isinstance(prompt, str) else "missing") + hint
        )
    if "image" not in record and unknown:
        raise InputError(
            row_id, "image", f"missing (unknown column(s) {', '.join(map(repr, unknown))}: a typo?)"
        )
    if unknown:
        warnings.append(
            f"row {row_id} (line {number}): unknown column(s) {', '.join(map(repr, unknown))} kept as extra"
        )
    image = parse_media(record.get("image"), base_dir, row_id, "image")
    return RowInput(
        id=row_id,
        line=number,
        prompt=prompt.strip(),
        image=image,
        questions=_questions(record.get("questions"), row_id),
        extra={k: record[k] for k in unknown},
    )


def load_dataset(path: str | Path) -> LoadedDataset:
    """Read and validate every row; raise DatasetError if the file is no dataset at all."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    loaded = LoadedDataset(path=path)
    seen: set[str] = set()
    bad_lines = 0
    for number, record in _records(path):
        if isinstance(record, str):
            bad_lines += 1
            loaded.errors.append((number, InputError(str(number), "(line)", record)))
            continue
        try:
            row = _row(number, record, path.parent, loaded.warnings)
            if row.id in seen:
                raise InputError(row.id, "id", f"duplicate id (line {number})")
        except InputError as exc:
            loaded.errors.append((number, exc))
            continue
        seen.add(row.id)
        loaded.rows.append(row)
    if loaded.total == 0:
        raise DatasetError(f"{path}: no rows")
    if bad_lines == loaded.total:
        raise DatasetError(f"{path}: no line is a JSON object; not a JSONL dataset")
    return loaded
