"""Dataset loading and row validation for JSONL and CSV files.

A file that is not a dataset fails before anything is enqueued (DatasetError). A bad row
becomes an InputError naming the row and the field, and the other rows go on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalq.core.candidates import (
    candidate_field,
    cell_candidates,
    cell_error,
    cell_record,
    required_with_candidates,
)
from evalq.core.errors import CellInputError, DatasetError, InputError, MissingField
from evalq.core.media import MediaPlace, MediaRules
from evalq.core.models import Question, RowInput
from evalq.core.parsing_choice import choice_text, label_choices, letters_for
from evalq.core.records import MAX_FIELD_BYTES, check_fields, records

if TYPE_CHECKING:
    from evalq.core.metric import Metric


@dataclass
class LoadedDataset:
    path: Path
    rows: list[RowInput] = field(default_factory=list)
    errors: list[tuple[int, InputError]] = field(default_factory=list)  # (line, error)
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.rows) + len(self.errors)


_YES = frozenset({"yes", "y", "true"})
_NO = frozenset({"no", "n", "false"})
MAX_QUESTION_CHOICES = 10  # a) .. j)


def yes_no_answer(value: Any) -> str | None:
    """ "yes"/"no" from the spellings people write (Yes, true, y, no, False, n), else None."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    word = value.strip().strip(".!").strip().lower()
    return "yes" if word in _YES else "no" if word in _NO else None


def _is_yes_no(choices: list[str]) -> bool:
    return len(choices) == 2 and {yes_no_answer(c) for c in choices} == {"yes", "no"}


def _choice_answer(answer: str, choices: list[str]) -> str | None:
    """The letter an expected answer names: a choice's own text first, then a letter label."""
    letters = letters_for(choices)
    wanted = {" ".join(text.lower().split()) for text in (answer, choice_text(answer))} - {""}
    by_text = [
        letter
        for letter, choice in zip(letters, choices, strict=False)
        if " ".join(choice_text(choice).lower().split()) in wanted
    ]
    if len(by_text) == 1:
        return by_text[0]
    label = answer.strip().strip("()[]").rstrip(").:").strip().lower()
    return label if len(label) == 1 and label in letters else None


def _checked_choices(value: Any, row_id: str, where: str, shown: str, most: int) -> list[str]:
    """Two to ``most`` distinct, non-empty choices, labelled a), b), ..."""
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise InputError(row_id, f"{where}.choices", f"{shown}: must be a list of strings")
    texts = [" ".join(choice_text(c).lower().split()) for c in value]
    if not 2 <= len(value) <= most:
        problem = f"needs 2 to {most} choices, got {len(value)}"
    elif not all(texts) or len(set(texts)) != len(texts):
        problem = "choices must be distinct and non-empty"
    else:
        return label_choices(value)
    raise InputError(row_id, f"{where}.choices", f"{shown}: {problem}")


def parse_questions(
    value: Any,
    row_id: str,
    *,
    choices_required: bool = False,
    max_choices: int = MAX_QUESTION_CHOICES,
) -> list[Question] | None:
    """A row's own questions [{question, answer, tag?, choices?, keywords?}] (a JSON string in
    CSV), made into what the validator can answer, or refused naming row, question and field.

    Without choices (or with yes and no as the choices) a question is yes/no and its answer is
    normalised from the usual spellings. With other choices it is multiple choice: the choices
    are labelled a), b), ... and the answer, given as a choice's text or its letter, becomes
    that letter. ``choices_required``: every question must be multiple choice (video)."""
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
        shown = f"question {i} {question.strip()!r}"
        if isinstance(answer, bool):
            answer = "yes" if answer else "no"
        if not isinstance(answer, str) or not answer.strip():
            raise InputError(row_id, f"{where}.answer", f"{shown}: missing or empty")
        choices = item.get("choices")
        if choices is None and choices_required:
            raise InputError(row_id, f"{where}.choices", f"{shown}: must be a list of choices")
        if choices is None or (
            not choices_required and isinstance(choices, list) and _is_yes_no(choices)
        ):
            expected = yes_no_answer(answer)
            if expected is None:
                raise InputError(
                    row_id,
                    f"{where}.answer",
                    f"{shown}: {answer!r} is not yes or no (write yes/no, true/false or y/n, "
                    "or give the question choices)",
                )
            choices = ["yes", "no"]
        else:
            choices = _checked_choices(choices, row_id, where, shown, max_choices)
            letter = _choice_answer(answer, choices)
            if letter is None:
                raise InputError(
                    row_id,
                    f"{where}.answer",
                    f"{shown}: {answer!r} is not one of its choices ({'; '.join(choices)}) "
                    "nor a choice's letter",
                )
            expected = letter
        keywords = item.get("keywords", [])
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise InputError(row_id, f"{where}.keywords", f"{shown}: must be a list of strings")
        tag = item.get("tag", "other")
        out.append(
            Question(
                question=question.strip(),
                expected=expected,
                tag=str(tag).strip().lower() or "other",
                choices=choices,
                keywords=[k.strip() for k in keywords if k.strip()],
                justification=str(item.get("justification", "")),
                source="dataset",
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
            raise MissingField(row_id, field_name, state + hint)
    if unknown:
        warnings.append(f"row {row_id} (line {number}): unknown column(s) {names} kept as extra")
    return unknown


def require_text(record: Mapping[str, Any], row_id: str, field_name: str) -> str:
    value = record.get(field_name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
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


def _read_cells(
    spec: Metric[Any, Any],
    metric: str,
    number: int,
    record: dict[str, Any],
    cells: list[str],
    options: Mapping[str, Any],
    loaded: LoadedDataset,
    missing: dict[str, MissingField],
    place: MediaPlace,
) -> None:
    """One cell per candidate: the row with that candidate's column as the judged field. A bad
    cell fails alone, named by row and candidate column; a warning about the row is said once."""
    field = candidate_field(metric)
    if has_value(record.get(field)) and field not in cells:
        loaded.warnings.append(
            f"row {row_id_of(number, record)} (line {number}): column {field!r} is not read: "
            "--candidates names the columns judged"
        )
    seen: set[str] = set()  # this row's warnings, said once for all its cells
    for candidate in cells:
        said: list[str] = []
        try:
            row = spec.parse_row(
                number,
                cell_record(record, field, cells, candidate),
                place,
                options,
                said,
            )
        except InputError as exc:
            error = cell_error(exc, field, candidate)
            if isinstance(exc, MissingField):
                missing.setdefault(error.field, MissingField(exc.row_id, error.field, exc.message))
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
    max_field_bytes: int = MAX_FIELD_BYTES,
) -> LoadedDataset:
    """Read and validate every row; raise DatasetError if the file is no dataset at all.
    Media cells are checked against ``rules`` (without them: files under the dataset's folder
    and public URLs only)."""
    from evalq.core.metric import get_metric

    spec = get_metric(metric)
    options = options or {}
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    cells = cell_candidates(metric, options)
    required = spec.required_columns
    if cells is not None:
        required = required_with_candidates(required, candidate_field(metric), cells)
    loaded = LoadedDataset(path=path)
    place = MediaPlace(path.parent, rules)
    present: set[str] = set()  # columns with a value in at least one record
    missing: dict[str, MissingField] = {}  # field -> the first row refused for lacking it
    ids: list[tuple[int, str]] = []  # (line, id) of every record, rejected ones included
    bad_lines = 0
    for number, record in records(path, required, loaded.warnings):
        if isinstance(record, str):
            bad_lines += 1
            ids.append((number, str(number)))
            loaded.errors += _line_errors(number, InputError(str(number), "(line)", record), cells)
            continue
        present |= {k for k, v in record.items() if has_value(v)}
        ids.append((number, row_id_of(number, record)))
        try:
            check_fields(number, record, row_id_of(number, record), max_field_bytes)
        except InputError as exc:
            loaded.errors += _line_errors(number, exc, cells)
            continue
        if cells is not None:
            _read_cells(spec, metric, number, record, cells, options, loaded, missing, place)
            continue
        try:
            row = spec.parse_row(number, record, place, options, loaded.warnings)
        except InputError as exc:
            if isinstance(exc, MissingField):
                missing.setdefault(exc.field, exc)
            loaded.errors.append((number, exc))
            continue
        loaded.rows.append(row)
    if loaded.total == 0:
        raise DatasetError(f"{path}: no rows")
    if bad_lines * max(1, len(cells or ())) == loaded.total:
        raise DatasetError(f"{path}: no line is a JSON object; not a JSONL dataset")
    refuse_missing_columns(path, metric, loaded, missing, present)
    if cells is not None and (absent := [c for c in cells if c not in present]):
        raise DatasetError(
            f"{path}: no row has a value for candidate column(s) {', '.join(map(repr, absent))} "
            f"(--candidates); columns present: {', '.join(sorted(present)) or '(none)'}"
        )
    refuse_duplicate_ids(path, ids)
    loaded.warnings += spec.check(loaded.rows, options)
    return loaded
