"""Several candidates in one job (`--candidates sdxl,flux`): a dataset row names each model's output
in a column of its own and becomes one cell per candidate when read, so planning, storage and
aggregation stay per row and every candidate of a prompt is judged on the same rubric."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.column_names import refuse_repeated_names
from evalq.core.errors import CellInputError, DatasetError, InputError
from evalq.core.metric import get_metric
from evalq.core.registry import metric_names

MAX_CANDIDATES = 20
# A name is a column and a part of `JOB:CANDIDATE` and of row keys: no spaces, no ":" or "=".
_NAME = re.compile(r"[^\s:=,/]+")
# Columns that mean something else in a row.
_RESERVED = frozenset({"id", "prompt", "questions"})


def cell_candidates(metric: str, options: Mapping[str, Any]) -> list[str] | None:
    """The candidate columns of a multi-candidate job, checked; None for a one-candidate job
    (and for a metric that keeps its own meaning of --candidates, Metric.own_candidates, as
    rank does)."""
    raw = options.get("candidates")
    if raw is None or get_metric(metric).own_candidates:
        return None
    if get_metric(metric).candidate_field is None:
        takes = ", ".join(m for m in metric_names() if _takes_candidates(m))
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


def _takes_candidates(metric: str) -> bool:
    taker = get_metric(metric)
    return taker.own_candidates or taker.candidate_field is not None


def candidate_field(metric: str) -> str:
    """The field a candidate's column stands in for (for a metric cell_candidates accepts)."""
    field = get_metric(metric).candidate_field
    if field is None:
        raise DatasetError(f"metric {metric} takes no candidates (--candidates)")
    return field


def required_with_candidates(
    required: tuple[str, ...], field: str, candidates: Sequence[str]
) -> tuple[str, ...]:
    """A CSV header needs the candidate columns in place of the judged field."""
    return tuple(c for c in required if c != field) + tuple(candidates)


def cell_record(
    record: Mapping[str, Any], field: str, candidates: Sequence[str], candidate: str
) -> dict[str, Any]:
    """The record one candidate's cell is read from: the other candidates' columns dropped,
    and the candidate's column under the judged field's name (Metric.candidate_field). A bad
    cell fails alone; the prompt's other candidates score."""
    cell = {k: v for k, v in record.items() if k not in candidates and k != field}
    if candidate in record:
        cell[field] = record[candidate]
    return cell


def candidate_of(exc: InputError) -> str | None:
    return exc.candidate if isinstance(exc, CellInputError) else None
