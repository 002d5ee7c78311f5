"""Reading dataset files into records, and the checks every field of a record must pass.

JSONL is read line by line and CSV with the csv module over the file itself, each record with
the physical line it starts on. A record whose fields can't be stored or are too large fails
alone (InputError naming the row, line and field); a file that is no dataset raises DatasetError.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from evalq.core.errors import DatasetError, InputError

# The default size limit per field (the worker settings pass EVALQ_MAX_FIELD_BYTES). A field is
# a cell, or a JSON value measured as JSON; one over it fails its row, not the file.
MAX_FIELD_BYTES = 1024 * 1024
# The csv module's own cap is per process and aborts the whole file; ours is per row, so the
# module's is set out of the way.
_CSV_MODULE_FIELD_LIMIT = 2**31 - 1


def records(
    path: Path, required: tuple[str, ...], warnings: list[str]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(physical line number where the record starts, record or a message why it is none).

    The file is read as it streams: a JSONL line ends only at a line end (never at U+2028 or
    other characters str.splitlines would split on, which JSON strings may hold), and a CSV
    record ends where the csv module says, so quoted line breaks stay in their cell."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            yield from _csv_records(path, required, warnings)
            return
        if suffix not in (".jsonl", ".ndjson", ".json") and _first_char(path) != "{":
            raise DatasetError(
                f"{path}: unknown dataset type {suffix or '(none)'}; use .jsonl or .csv"
            )
        yield from _jsonl_records(path)
    except UnicodeDecodeError:
        line = _undecodable_line(path)
        raise DatasetError(
            f"{path}: line {line}: not UTF-8 text; expected a UTF-8 JSONL or CSV file"
        ) from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _open(path: Path, newline: str | None) -> TextIO:
    return path.open(encoding="utf-8-sig", newline=newline)


def _first_char(path: Path) -> str:
    with _open(path, None) as fh:
        while chunk := fh.read(4096):
            if stripped := chunk.lstrip():
                return stripped[0]
    return ""


def _undecodable_line(path: Path) -> int:
    """The first line that is not UTF-8 (a multi-byte character never holds a newline byte)."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 1


def _jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    with _open(path, None) as fh:
        for number, line in enumerate(fh, start=1):
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


class _Lines:
    """The file's lines for csv.reader, keeping the ones the current record was read from."""

    def __init__(self, fh: TextIO) -> None:
        self._fh = fh
        self._taken: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self._fh)
        self._taken.append(line)
        return line

    def take(self) -> str:
        raw = "".join(self._taken)
        self._taken.clear()
        return raw


def _quotes_pair_up(raw: str, cells: list[str]) -> bool:
    """Whether the record's text reads the same under strict quoting. An unclosed quote (which
    swallows line ends and delimiters up to the next quote) or text after a closing quote read
    leniently gives a row that is not what the file meant."""
    try:
        return list(csv.reader(io.StringIO(raw, newline=""), strict=True)) == [cells]
    except csv.Error:
        return False


def _csv_records(
    path: Path, required: tuple[str, ...], warnings: list[str]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    if csv.field_size_limit() < _CSV_MODULE_FIELD_LIMIT:
        csv.field_size_limit(_CSV_MODULE_FIELD_LIMIT)
    with _open(path, "") as fh:
        lines = _Lines(fh)
        reader = csv.reader(lines)
        try:
            header = next((h for h in reader if any(c.strip() for c in h)), None)
            lines.take()
            names = [h.strip() for h in header or []]
            missing = [c for c in required if c not in names]
            if not header or missing:
                raise DatasetError(
                    f"{path}: CSV header has no {', '.join(map(repr, missing))} column"
                    f" (header: {header})"
                )
            end = reader.line_num
            for cells in reader:
                start, end = end + 1, reader.line_num
                raw = lines.take()
                if not any(c.strip() for c in cells):
                    continue
                if '"' in raw and not _quotes_pair_up(raw, cells):
                    read = f"lines {start}-{end} were" if end > start else "it was"
                    warnings.append(
                        f"line {start}: its quotes do not pair up (a quote left open, or text"
                        f" after a closing quote); {read} read as one row, check it"
                    )
                extra = cells[len(names) :]
                if any(c.strip() for c in extra):
                    yield (
                        start,
                        f"{len(cells)} cells, but the header has {len(names)} columns"
                        " (a delimiter inside an unquoted cell?)",
                    )
                    continue
                yield (
                    start,
                    {n: (cells[i] if i < len(cells) else None) for i, n in enumerate(names)},
                )
        except csv.Error as exc:
            raise DatasetError(f"{path}: CSV error at line {reader.line_num}: {exc}") from None


def _text_fault(value: Any, where: str) -> str | None:
    """Where in a field's value (a path such as questions[0].question) a string holds a lone
    surrogate, or None. Such a string (a JSON "\\ud800" escape) can't be encoded, so it can't be
    stored or sent; strings that are JSON themselves (CSV cells) are looked into too. Iterative,
    as the value may nest as deep as the JSON parser allows."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return at
            stripped = item.strip()
            if stripped[:1] in ("{", "[") and "\\u" in stripped:
                with contextlib.suppress(ValueError, RecursionError):
                    stack.append((json.loads(stripped), at))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            for key, v in reversed(list(item.items())):
                name = f"{at}.{_printable(str(key))}"
                if _has_surrogate(str(key)):
                    return name
                stack.append((v, name))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _field_bytes(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def check_fields(number: int, record: Mapping[str, Any], row_id: str, max_field_bytes: int) -> None:
    """Every field is storable text and within the size limit, or its row fails here: a lone
    surrogate used to crash the whole submit when rows were stored, and a 10 MB prompt to grow
    the worker without bound. The id is checked first; a bad id names the row by its line."""
    for name in sorted(record, key=lambda k: k != "id"):
        value = record[name]
        where = _printable(name)
        fault = where if _has_surrogate(name) else _text_fault(value, where)
        if fault is not None:
            raise InputError(
                str(number) if name == "id" else row_id,
                fault,
                f"line {number}: not valid Unicode text (a lone surrogate)",
            )
        if (size := _field_bytes(value)) > max_field_bytes:
            raise InputError(
                str(number) if name == "id" else row_id,
                where,
                f"line {number}: {size:,} bytes, over the limit of {max_field_bytes:,} bytes per"
                " field (EVALQ_MAX_FIELD_BYTES)",
            )
