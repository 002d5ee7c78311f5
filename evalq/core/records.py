"""Reading dataset files into records, each with the physical line it starts on, and the checks
every field of a record must pass: a bad record fails alone (InputError), a file that is no dataset
raises DatasetError."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from evalq.core.bounds import InputBounds, short, some_names
from evalq.core.column_names import RENAME, refuse_repeated_columns, repeats_said, said_list
from evalq.core.errors import DatasetError, InputError

# A row is stored as JSON and read back by every task; the JSON reader in between refuses values
# nested much deeper than this (about 200 levels, the row's own included), and no evaluation
# reads a value nested this deep.
MAX_VALUE_DEPTH = 64
# The csv module's own cap is per process and aborts the whole file; ours is per row, so the
# module's is set out of the way.
_CSV_MODULE_FIELD_LIMIT = 2**31 - 1


def records(
    path: Path,
    required: tuple[str, ...],
    warnings: list[str],
    bounds: InputBounds | None = None,
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(physical line number where the record starts, record or a message why it is none).

    The file is read as it streams: a JSONL line ends only at a line end (never at U+2028 or
    other characters str.splitlines would split on, which JSON strings may hold), and a CSV
    record ends where the csv module says, so quoted line breaks stay in their cell. A column
    named twice (a CSV header's, a JSONL key at any depth) raises DatasetError, as a record
    would keep only the last value in silence (evalq.core.column_names)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            yield from _csv_records(path, required, warnings, bounds or InputBounds())
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


class _Objects:
    """json.loads's object_pairs_hook: each object as a dict, as json builds it, keeping the
    objects that name a key twice (json keeps the last value in silence) with their keys as
    written, and the pairs of the last object built: for a line that is an object, its own."""

    def __init__(self) -> None:
        self.repeating: list[tuple[dict[str, Any], list[str]]] = []
        self.last: list[tuple[str, Any]] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        built = dict(pairs)
        if len(built) < len(pairs):
            self.repeating.append((built, [key for key, _ in pairs]))
        self.last = pairs
        return built


def _jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    with _open(path, None) as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            objects = _Objects()
            try:
                value = json.loads(line, object_pairs_hook=objects)
            except (ValueError, RecursionError) as exc:  # ValueError: an int of 4,300+ digits
                yield number, f"not valid JSON ({exc.__class__.__name__}: {str(exc)[:80]})"
                continue
            if not isinstance(value, dict):
                yield number, f"expected a JSON object, got {type(value).__name__}"
                continue
            yield number, _columns(path, number, value, objects)


def _columns(path: Path, number: int, value: dict[str, Any], objects: _Objects) -> dict[str, Any]:
    """A line's object with its keys read as column names (without the spaces around them, as
    a CSV header's), refused when a key repeats in it or in any object it holds: JSON would
    keep only the last value, and the others would be lost in silence."""
    keys = [key for key, _ in objects.last]
    where = f"{path}: line {number}"
    refuse_repeated_columns(where, keys, "JSON keeps only the last", what="key")
    if objects.repeating:
        at, inner = _repeating_at(value, objects.repeating)
        raise DatasetError(
            f"{where}: in {at}, {repeats_said(inner, 'key')}; JSON keeps only the last, so "
            f"nothing was submitted: {RENAME}, or drop the one not meant"
        )
    if all(key == key.strip() for key in keys):
        return value
    return {key.strip(): item for key, item in value.items()}


def _repeating_at(
    value: dict[str, Any], repeating: list[tuple[dict[str, Any], list[str]]]
) -> tuple[str, list[str]]:
    """Where in a line's value (questions[0]) the first object naming a key twice is, and its
    keys as written. (The objects are kept alive by `repeating`, so their ids are theirs.)"""
    keys_of = {id(built): keys for built, keys in repeating}
    stack: list[tuple[Any, str]] = [(item, str(key)) for key, item in reversed(value.items())]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            if id(item) in keys_of:
                return at, keys_of[id(item)]
            stack.extend((v, f"{at}.{k}") for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in reversed(list(enumerate(item))))
    return "an object of the line", repeating[0][1]  # only in an object a repeat dropped


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
    path: Path, required: tuple[str, ...], warnings: list[str], bounds: InputBounds
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
            if len(names) > bounds.max_csv_columns:
                raise DatasetError(
                    f"{path}: the CSV header has {len(names):,} columns, "
                    f"{bounds.over('max_csv_columns', 'columns per CSV')}; nothing was submitted"
                )
            named = [h if h.strip() else f"\0{i}" for i, h in enumerate(header or [])]
            refuse_repeated_columns(str(path), named, "only the last would be read")
            unnamed = [i for i, n in enumerate(names) if not n]
            missing = [c for c in required if c not in names]
            if not header or missing:
                raise DatasetError(
                    f"{path}: CSV header has no {', '.join(map(repr, missing))} column"
                    f" (header: {some_names(names)})"
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
                if len(unnamed) > 1:
                    _refuse_unnamed_values(path, start, cells, unnamed)
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


def _refuse_unnamed_values(path: Path, line: int, cells: list[str], unnamed: list[int]) -> None:
    """Header cells left empty are one column, named "": its values are kept as an extra column
    of that name. With several such columns, a row holding a value in any of them would keep
    only the last one's: refused, unless every such cell of the row is empty (trailing commas)."""
    held = [i for i in unnamed if i < len(cells) and cells[i].strip()]
    if held:
        places = said_list([str(i + 1) for i in unnamed])
        raise DatasetError(
            f"{path}: line {line}: position {held[0] + 1} holds a value, but the header leaves "
            f"its column unnamed, as it does positions {places}; a row keeps only one unnamed "
            "column, so nothing was submitted: name them in the header"
        )


_SURROGATE = "not valid Unicode text (a lone surrogate)"
_CONTAINERS = (list, dict)


def _storage_fault(value: Any, name: str) -> tuple[str, str] | None:
    """(where in a field's value, e.g. questions[0].question, what is wrong) for a value that
    can't be stored, or None. A string with a lone surrogate (a JSON "\\ud800" escape) can't be
    encoded, so it can't be stored or sent; strings that are JSON themselves (CSV cells) are
    looked into too, for that only, as they are stored as text. A value nested past
    MAX_VALUE_DEPTH would be written but never read back. Iterative, as the value may nest as
    deep as the JSON parser allows; a plain string (most fields) is checked without the walk."""
    if _has_surrogate(name):
        return _printable(name), _SURROGATE
    if isinstance(value, str) and not _has_surrogate(value) and not _json_with_escapes(value):
        return None
    stack: list[tuple[Any, str, int]] = [(value, name, 0)]  # depth < 0: inside a string
    while stack:
        item, at, depth = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return at, _SURROGATE
            if _json_with_escapes(item):
                with contextlib.suppress(ValueError, RecursionError):
                    stack.append((json.loads(item), at, -1))
            continue
        if not isinstance(item, _CONTAINERS):
            continue
        if depth >= MAX_VALUE_DEPTH:
            return at, (
                f"nested more than {MAX_VALUE_DEPTH} levels deep; a row is stored as JSON, "
                "which could not be read back"
            )
        inner = depth + 1 if depth >= 0 else -1
        if isinstance(item, list):
            stack.extend((v, f"{at}[{i}]", inner) for i, v in reversed(list(enumerate(item))))
            continue
        for key, v in reversed(list(item.items())):
            path = f"{at}.{_printable(str(key))}"
            if _has_surrogate(str(key)):
                return path, _SURROGATE
            stack.append((v, path, inner))
    return None


def _json_with_escapes(text: str) -> bool:
    """Whether a string is JSON that may spell a lone surrogate as an escape."""
    stripped = text.lstrip()
    return stripped[:1] in ("{", "[") and "\\u" in stripped


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


def check_fields(number: int, record: Mapping[str, Any], row_id: str, bounds: InputBounds) -> None:
    """Every field is storable and within its size limit, and the row within its own, or the
    row fails here, alone: a lone surrogate or a value nested 255 levels deep would crash the
    whole submit when rows are stored, a 10 MB prompt grow the worker without bound, and sixty
    1 MiB fields be stored whole. The id is checked first; a bad id names the row by its
    line. A row's size counts its fields' names and values."""
    sizes: dict[str, int] = {}  # name -> bytes of the name and its value
    for name in sorted(record, key=lambda k: k != "id"):
        value = record[name]
        who = str(number) if name == "id" else row_id
        fault = _storage_fault(value, name)
        if fault is not None:
            raise InputError(who, _printable(fault[0]), f"line {number}: {fault[1]}")
        size = _field_bytes(value)
        if size > bounds.max_field_bytes:
            raise InputError(
                who,
                _printable(name),
                f"line {number}: {size:,} bytes, {bounds.over('max_field_bytes', 'bytes per field')}",
            )
        sizes[name] = size + len(name.encode("utf-8"))
    total = sum(sizes.values())
    if total > bounds.max_row_bytes:
        largest = sorted(sizes, key=lambda n: -sizes[n])[:3]
        raise InputError(
            row_id,
            "(row)",
            f"line {number}: its {len(sizes):,} fields hold {total:,} bytes (names and values), "
            f"{bounds.over('max_row_bytes', 'bytes per row')}; the largest: "
            + ", ".join(f"{short(_printable(n))} ({sizes[n]:,} bytes)" for n in largest),
        )
