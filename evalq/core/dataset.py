"""Dataset loading and row validation for JSONL and CSV files: a file that is no dataset fails
before anything is enqueued (DatasetError); a bad row fails alone (InputError), the others go on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalq.core.bounds import NAMES_SHOWN, InputBounds, clip, short, some_names
from evalq.core.candidates import (
    candidate_field,
    cell_candidates,
    cell_record,
    required_with_candidates,
)
from evalq.core.column_map import check_column_map, header_columns, refuse_unseen, rename_columns
from evalq.core.errors import CellInputError, DatasetError, InputError, MissingField
from evalq.core.human.labels import check_human_column, label_columns
from evalq.core.media import MediaPlace, MediaRules
from evalq.core.models import RowInput
from evalq.core.records import check_fields, records

if TYPE_CHECKING:
    from evalq.core.metric import Metric


@dataclass
class LoadedDataset:
    path: Path
    rows: list[RowInput] = field(default_factory=list)
    errors: list[tuple[int, InputError]] = field(default_factory=list)  # (line, error)
    warnings: list[str] = field(default_factory=list)
    # line -> the short plain columns of a record refused at load, for the failed row it
    # becomes (its --group-by value, its human label); a line that is no JSON object has none.
    rejected_columns: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.rows) + len(self.errors)


def row_id_of(number: int, record: Mapping[str, Any]) -> str:
    """The record's id. The loader gives every record one before a metric reads it (its own,
    or its ordinal: with_default_id); ``number`` stands in only for a record read otherwise."""
    raw_id = record.get("id")
    return str(raw_id).strip() if raw_id not in (None, "") else str(number)


def with_default_id(record: dict[str, Any], ordinal: int) -> dict[str, Any]:
    """The record with an id: its own when it has one, else its ordinal among the dataset's
    records (1, 2, 3...: the header and blank lines do not count, so a CSV record spanning
    several lines, a quoted cell with line breaks, still counts one). Rows stay keyed by
    their line number inside evalq; only the id a user reads is the ordinal."""
    if record.get("id") not in (None, ""):
        return record
    return {**record, "id": str(ordinal)}


def refuse_duplicate_ids(path: Path, ids: list[tuple[int, str]], shown: int = 50) -> None:
    """Refuse a dataset whose ids repeat, naming every line involved.

    Results are read back by id, so two rows under one id would make one of them unreadable;
    a rejected line counts with the id it has (or its default, its ordinal), because its
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
        f"{path}: row ids must be unique (a row without an id takes its ordinal, 1, 2, 3...); "
        f"nothing was submitted: {'; '.join(parts)}"
    )


def unknown_columns(
    row_id: str,
    record: Mapping[str, Any],
    known: frozenset[str],
    required: tuple[str, ...],
) -> list[str]:
    """Columns the metric does not know: kept as extra (the loader warns of them once per
    dataset), or named in the error when a required field is missing (a typo such as `promt`
    is the likely cause)."""
    unknown = sorted(set(record) - known)
    for field_name in required:
        value = record.get(field_name)
        if value is None or (isinstance(value, str) and not value.strip()):
            state = "empty" if isinstance(value, str) else "missing"
            hint = f" (unknown column(s) {some_names(unknown)}: a typo?)" if unknown else ""
            raise MissingField(row_id, field_name, state + hint)
    return unknown


def unknown_columns_warning(rows: list[RowInput], read: frozenset[str] = frozenset()) -> list[str]:
    """One warning for the whole dataset: which columns no metric field reads (kept in each
    row's extra) and in how many rows, the columns most rows have first. Its length does not
    grow with the dataset: at most NAMES_SHOWN names, each shortened. ``read``: extra columns
    that are read all the same (human labels), so not named."""
    counts: Counter[str] = Counter()
    total, previous = 0, -1
    for row in rows:  # a line's cells (one per candidate) come together and count once
        if row.line != previous:
            total, previous = total + 1, row.line
            counts.update(name for name in row.extra if name not in read)
    if not counts:
        return []
    by_count: dict[int, list[str]] = {}
    for name, count in sorted(counts.items()):
        by_count.setdefault(count, []).append(name)
    parts, room = [], NAMES_SHOWN
    for count in sorted(by_count, reverse=True):
        names = by_count[count][:room]
        if not names:
            break
        room -= len(names)
        parts.append(f"{', '.join(map(short, names))} in {count:,} of {total:,} rows")
    more = len(counts) - (NAMES_SHOWN - room)
    tail = f"; and {more:,} more columns" if more > 0 else ""
    return [f"unknown column(s) {'; '.join(parts)}{tail}: kept as extra, not read by the metric"]


def require_text(record: Mapping[str, Any], row_id: str, field_name: str) -> str:
    """The field's text (a number is taken as its text). A value of another kind (a JSON object,
    a list, true) is not missing: it is named for what it is."""
    value = record.get(field_name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if value is not None and not isinstance(value, str):
        raise InputError(row_id, field_name, f"must be text, got {type(value).__name__}")
    if value is None or not value.strip():
        raise MissingField(row_id, field_name, "empty" if isinstance(value, str) else "missing")
    return value.strip()


def has_value(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def refuse_missing_columns(
    path: Path,
    metric: str,
    loaded: LoadedDataset,
    missing: Mapping[str, MissingField],
    present: set[str],
) -> None:
    """A field some row was refused for lacking, that no row has and no row did without, is a
    column the dataset lacks: refuse the dataset as a whole, naming it and what is there."""
    if loaded.rows:
        return
    # The reader's warnings often say why (an unclosed CSV quote that swallowed every line).
    why = "".join(f"; {warning}" for warning in loaded.warnings[:3])
    for field_name, error in missing.items():
        if field_name not in present:
            raise DatasetError(
                f"{path}: no row has a value for {field_name!r}, which metric {metric} needs "
                f"(row {error.row_id}: {error.message}); columns present: "
                f"{', '.join(sorted(present)) or '(none)'}{why}"
            )


def _line_errors(
    number: int, exc: InputError, cells: list[str] | None
) -> list[tuple[int, InputError]]:
    """A line refused as a whole: one error, or in a multi-candidate job one per candidate (every
    candidate's cell of the row fails, so each candidate's counts stay whole)."""
    if cells is None:
        return [(number, exc)]
    return [(number, CellInputError(exc.row_id, exc.field, exc.message, c)) for c in cells]


def _parse(
    spec: Metric[Any, Any],
    number: int,
    record: dict[str, Any],
    place: MediaPlace,
    options: Mapping[str, Any],
    warnings: list[str],
    bounds: InputBounds,
) -> RowInput:
    """The metric's row, within the bounds a parsed row keeps. The question count is checked
    here, for every metric alike: each question is a judge call per judge."""
    try:
        row = spec.parse_row(number, record, place, options, warnings)
    except RecursionError:  # a cell's JSON nested past what the parser reads
        raise InputError(
            row_id_of(number, record), "(row)", f"line {number}: a value nests too deep to read"
        ) from None
    if row.questions is not None and len(row.questions) > bounds.max_questions_per_row:
        raise InputError(
            row.id,
            "questions",
            f"line {number}: {len(row.questions):,} questions, "
            f"{bounds.over('max_questions_per_row', 'questions per row')}",
        )
    return row


SHORT_COLUMN_CHARS = 200


def short_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    """A refused record's columns that can name a group or hold a label: text up to 200
    characters, numbers and true/false. Long text and nested values stay out of the store."""
    return {
        key: value
        for key, value in record.items()
        if isinstance(value, (bool, int, float))
        or (isinstance(value, str) and len(value) <= SHORT_COLUMN_CHARS)
    }


@dataclass
class _Reader:
    """What reading each record of one dataset shares: the metric, its options, the candidate
    columns (None: one row per record), where media may come from, the bounds, and what has
    been read so far."""

    spec: Metric[Any, Any]
    metric: str
    cells: list[str] | None
    options: Mapping[str, Any]
    place: MediaPlace
    bounds: InputBounds
    loaded: LoadedDataset
    missing: dict[str, MissingField] = field(default_factory=dict)  # field -> first refused

    def read(self, number: int, record: dict[str, Any]) -> None:
        """One JSON record: its row (or one per candidate), or the errors that refuse it."""
        loaded = self.loaded
        try:
            check_fields(number, record, row_id_of(number, record), self.bounds)
        except InputError as exc:
            loaded.errors += _line_errors(number, exc, self.cells)
            return
        if self.cells is not None:
            self._read_cells(number, record, self.cells)
            return
        try:
            row = self._parse(number, record, loaded.warnings)
        except InputError as exc:
            if isinstance(exc, MissingField):
                self.missing.setdefault(exc.field, exc)
            loaded.errors.append((number, exc))
            return
        loaded.rows.append(row)

    def _parse(self, number: int, record: dict[str, Any], warnings: list[str]) -> RowInput:
        return _parse(self.spec, number, record, self.place, self.options, warnings, self.bounds)

    def _read_cells(self, number: int, record: dict[str, Any], cells: list[str]) -> None:
        """One cell per candidate: the row with that candidate's column as the judged field. A
        bad cell fails alone, named by row and candidate column; a warning about the row is said
        once."""
        loaded = self.loaded
        field = candidate_field(self.metric)
        if has_value(record.get(field)) and field not in cells:
            loaded.warnings.append(
                f"row {row_id_of(number, record)} (line {number}): column {field!r} is not read: "
                "--candidates names the columns judged"
            )
        seen: set[str] = set()  # this row's warnings, said once for all its cells
        for candidate in cells:
            said: list[str] = []
            try:
                row = self._parse(number, cell_record(record, field, cells, candidate), said)
            except InputError as exc:
                error = CellInputError.naming_column(exc, field, candidate)
                if isinstance(exc, MissingField):
                    refused = MissingField(exc.row_id, error.field, exc.message)
                    self.missing.setdefault(error.field, refused)
                loaded.errors.append((number, error))
            else:
                loaded.rows.append(row.model_copy(update={"candidate": candidate}))
            loaded.warnings += [w for w in said if w not in seen]
            seen.update(said)


def load_dataset(
    path: str | Path,
    metric: str = "gecko-image",
    options: Mapping[str, Any] | None = None,
    rules: MediaRules | None = None,
    *,
    bounds: InputBounds | None = None,
    column_map: Mapping[str, str] | None = None,
    read_columns: Iterable[str] = (),
) -> LoadedDataset:
    """Read and validate every row; raise DatasetError if the file is no dataset at all, or is
    over a dataset's bounds (then before a row is read past the bound, so nothing is stored).
    Media cells are checked against ``rules`` (without them: files under the dataset's folder
    and public URLs only). ``column_map`` (field -> the dataset's column) renames each record's
    columns before the metric reads it (evalq.core.column_map)."""
    from evalq.core.metric import get_metric

    spec = get_metric(metric)
    options = options or {}
    bounds = bounds or InputBounds()
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    if (size := path.stat().st_size) > bounds.max_dataset_bytes:
        raise DatasetError(
            f"{path}: {size:,} bytes, {bounds.over('max_dataset_bytes', 'bytes per dataset')}; "
            "nothing was submitted"
        )
    renames = check_column_map(column_map)
    cells = cell_candidates(metric, options)
    required = spec.required_columns
    if cells is not None:
        required = required_with_candidates(required, candidate_field(metric), cells)
    loaded = LoadedDataset(path=path)
    reader = _Reader(spec, metric, cells, options, MediaPlace(path.parent, rules), bounds, loaded)
    present: set[str] = set()  # columns with a value in at least one record
    ids: list[tuple[int, str]] = []  # (line, id) of every record, rejected ones included
    bad_lines = 0
    seen: set[str] = set()  # the dataset's own column names, before the map
    header = header_columns(required, renames)
    for number, read in records(path, header, loaded.warnings, bounds):
        if len(ids) == bounds.max_rows_per_job:
            raise DatasetError(
                f"{path}: more than {len(ids):,} rows (line {number} is one too many), "
                f"{bounds.over('max_rows_per_job', 'rows per job')}; nothing was submitted"
            )
        ordinal = len(ids) + 1  # the record's place in the dataset: its default id
        if isinstance(read, str):
            bad_lines += 1
            ids.append((number, str(ordinal)))
            refused_line = InputError(str(ordinal), "(line)", f"line {number}: {read}")
            loaded.errors += _line_errors(number, refused_line, cells)
            continue
        seen.update(read)
        record = rename_columns(number, read, renames, path)
        present |= {k for k, v in record.items() if has_value(v)}
        identified = with_default_id(record, ordinal)
        ids.append((number, row_id_of(number, identified)))
        refused = len(loaded.errors)
        reader.read(number, identified)
        if len(loaded.errors) > refused:
            loaded.rejected_columns[number] = short_columns(record)
    if loaded.total == 0:
        raise DatasetError(f"{path}: no rows")
    if bad_lines * max(1, len(cells or ())) == loaded.total:
        raise DatasetError(f"{path}: no line is a JSON object; not a JSONL dataset")
    refuse_unseen(path, renames, seen)
    refuse_missing_columns(path, metric, loaded, reader.missing, present)
    if cells is not None and (absent := [c for c in cells if c not in present]):
        raise DatasetError(
            f"{path}: no row has a value for candidate column(s) {', '.join(map(repr, absent))} "
            f"(--candidates); columns present: {', '.join(sorted(present)) or '(none)'}"
        )
    refuse_duplicate_ids(path, ids)
    check_human_column(options, loaded.rows)
    not_unknown = label_columns(metric, options) | frozenset(read_columns)  # labels, --group-by
    loaded.warnings += unknown_columns_warning(loaded.rows, not_unknown)
    loaded.warnings += spec.check(loaded.rows, options)
    loaded.warnings = [clip(warning) for warning in loaded.warnings]
    return loaded
