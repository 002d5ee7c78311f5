"""Several candidates in one job: a dataset row names each model's output in a column of its
own (`--candidates sdxl,flux`), and becomes one cell per candidate when it is read.

A cell is the row with the candidate's column standing in for the field the metric judges (a
Gecko image or video, a pointwise response), so planning, storage and aggregation stay per row
as for any job, and every candidate of a prompt is judged on the same rubric. A cell that is
bad (its file missing, its column empty) fails alone; the prompt's other candidates score.

Rank keeps its own meaning of --candidates (the columns it compares pairwise inside each
row): the flag names columns for every metric that takes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.column_names import refuse_repeated_names
from evalq.core.errors import CellInputError, DatasetError, InputError

# The field each metric judges, which a candidate's column stands in for.
CANDIDATE_FIELDS: dict[str, str] = {
    "gecko-image": "image",
    "gecko-video": "video",
    "pointwise": "response",
}
# Rank reads its candidates itself: each row holds every candidate, compared in pairs.
OWN_CANDIDATES = frozenset({"rank"})
MAX_CANDIDATES = 20
# A name is a column and a part of `JOB:CANDIDATE` and of row keys: no spaces, no ":" or "=".
_NAME = re.compile(r"[^\s:=,/]+")
# Columns that mean something else in a row.
_RESERVED = frozenset({"id", "prompt", "questions"})


def cell_candidates(metric: str, options: Mapping[str, Any]) -> list[str] | None:
    """The candidate columns of a multi-candidate job, checked; None for a one-candidate job
    (and for rank, which reads its candidates itself)."""
    raw = options.get("candidates")
    if raw is None or metric in OWN_CANDIDATES:
        return None
    field = CANDIDATE_FIELDS.get(metric)
    if field is None:
        takes = ", ".join(sorted([*CANDIDATE_FIELDS, *OWN_CANDIDATES]))
        raise DatasetError(f"metric {metric} takes no candidates (--candidates): only {takes}")
    if isinstance(raw, str):
        raw = [part for part in raw.split(",")]
    if not isinstance(raw, Sequence) or not all(isinstance(c, str) for c in raw):
        raise DatasetError(f"candidates must be a list of column names, got {raw!r}")
    names = [c.strip() for c in raw if c.strip()]
    if not names:
        raise DatasetError("--candidates names no column")
    bad = [n for n in names if not _NAME.fullmatch(n)]
    if bad:
        raise DatasetError(
            f"candidate names are column names without spaces, ':', '=', ',' or '/': {bad}"
        )
    refuse_repeated_names("--candidates", names)
    if reserved := sorted(set(names) & _RESERVED):
        raise DatasetError(f"candidates can not be the row's own columns: {reserved}")
    if len(names) > MAX_CANDIDATES:
        raise DatasetError(f"at most {MAX_CANDIDATES} candidates, got {len(names)}")
    return names


def candidate_field(metric: str) -> str:
    return CANDIDATE_FIELDS[metric]


def required_with_candidates(
    required: tuple[str, ...], field: str, candidates: Sequence[str]
) -> tuple[str, ...]:
    """A CSV header needs the candidate columns in place of the judged field."""
    return tuple(c for c in required if c != field) + tuple(candidates)


def cell_record(
    record: Mapping[str, Any], field: str, candidates: Sequence[str], candidate: str
) -> dict[str, Any]:
    """The record one candidate's cell is read from: the other candidates' columns dropped,
    and the candidate's column under the judged field's name."""
    cell = {k: v for k, v in record.items() if k not in candidates and k != field}
    if candidate in record:
        cell[field] = record[candidate]
    return cell


def cell_error(exc: InputError, field: str, candidate: str) -> CellInputError:
    """A cell's input error naming the row and the candidate's column (not the judged field,
    which the dataset does not have)."""
    where = candidate if exc.field == field else exc.field
    message = exc.message.replace(f"{field!r}", f"{candidate!r}")
    return CellInputError(exc.row_id, where, message, candidate)


def candidate_of(exc: InputError) -> str | None:
    return exc.candidate if isinstance(exc, CellInputError) else None
