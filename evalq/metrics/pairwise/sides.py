"""Which columns hold the two responses: ours (response_a, response_b) or Vertex AI's (response
the candidate, baseline_model_response the baseline), and what A and B stand for in a job."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.dataset import has_value, row_id_of
from evalq.core.errors import InputError
from evalq.core.models import RowInput, RowResult

# The two responses' columns, (shown as A, shown as B). Vertex AI's pairwise datasets call the
# candidate `response` and the baseline `baseline_model_response`; the candidate is A, so the
# job's mean score is the candidate's expected share and a win for A is a win for the candidate.
NATIVE_PAIR = ("response_a", "response_b")
VERTEX_PAIR = ("response", "baseline_model_response")
SIDE_LABELS: dict[tuple[str, str], dict[str, str]] = {
    NATIVE_PAIR: {"A": "response_a", "B": "response_b"},
    VERTEX_PAIR: {"A": "candidate (response)", "B": "baseline (baseline_model_response)"},
}


def pair_columns(number: int, record: Mapping[str, Any]) -> tuple[str, str]:
    """Which pair of columns a row uses: ours, or Vertex's when it has none of ours. A row
    with both is ambiguous (which one is the candidate?) and refused."""
    row_id = row_id_of(number, record)
    native = [c for c in NATIVE_PAIR if has_value(record.get(c))]
    vertex = [c for c in VERTEX_PAIR if has_value(record.get(c))]
    if native and vertex:
        raise InputError(
            row_id,
            vertex[0],
            f"the row has {', '.join(native)} and Vertex-style {', '.join(vertex)}; give "
            "either response_a and response_b, or response (the candidate) and "
            "baseline_model_response (the baseline)",
        )
    return VERTEX_PAIR if vertex else NATIVE_PAIR


def row_pair(row: RowInput) -> tuple[str, str]:
    """The columns a loaded row's two responses are in (A first)."""
    return NATIVE_PAIR if NATIVE_PAIR[0] in row.data else VERTEX_PAIR


def sides_of(rows: Sequence[RowResult]) -> dict[str, str]:
    """What A and B stand for in the job's win rates; a dataset mixing our columns and
    Vertex's says so (A is response_a or the candidate either way)."""
    labels = {tuple(r.details.get("sides", SIDE_LABELS[NATIVE_PAIR]).items()) for r in rows}
    if len(labels) == 1:
        return dict(labels.pop())
    return {
        "A": "response_a, or the candidate (response)",
        "B": "response_b, or the baseline (baseline_model_response)",
    }
