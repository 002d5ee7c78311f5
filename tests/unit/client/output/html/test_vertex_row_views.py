"""A report's and a comparison's row shows every text the judge saw under the dataset's column name
(the exports' rule, evalq.client.output.judged_texts.named_inputs): Vertex's pairwise `response` /
`baseline_model_response`, a summarization row's `instruction`, groundedness's `prompt` read as its
query, a --map column, a response the model under test wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalq.client.output.html.row_views import row_view
from evalq.core.models import JobConfig, RowInput, RowResult
from tests.support.datasets import loaded_row
from tests.support.job_configs import job_config


def view_texts(metric: str, row: RowInput, config: JobConfig | None = None, **details: Any) -> list:
    result = RowResult.of(row, status="scored", score=1.0, details=details)
    return [(t.label, t.text) for t in row_view(metric, result, row, config).texts]


def test_vertex_pairwise_shows_both_responses_under_their_columns(tmp_path: Path) -> None:
    record = {
        "id": "v",
        "prompt": "Q?",
        "context": "C.",
        "response": "R1.",
        "baseline_model_response": "R2.",
    }
    row = loaded_row(tmp_path, "pairwise", record)
    sides = {"A": "candidate (response)", "B": "baseline (baseline_model_response)"}
    assert view_texts("pairwise", row, sides=sides) == [
        ("prompt", "Q?"),
        ("context", "C."),
        ("A · response", "R1."),
        ("B · baseline_model_response", "R2."),
    ]


def test_each_text_is_under_the_column_it_was_read_from(tmp_path: Path) -> None:
    summary = {"template": "summarization_quality"}
    row = loaded_row(
        tmp_path,
        "pointwise",
        {"id": "s", "instruction": "Sum up.", "context": "T.", "response": "S."},
        options=summary,
    )
    assert view_texts("pointwise", row) == [
        ("instruction", "Sum up."),
        ("context", "T."),
        ("response", "S."),
    ]

    grounded = loaded_row(tmp_path, "groundedness", {"id": "g", "prompt": "Q?", "context": "C."})
    written = {"response": "A.", "response_source": "candidate", "candidate_model": "m-1"}
    assert view_texts("groundedness", grounded, **written) == [
        ("prompt", "Q?"),
        ("context", "C."),
        ("response (written by m-1)", "A."),
    ]

    mapped = {"response_a": "x", "response_b": "y", "prompt": "ask"}
    row = loaded_row(
        tmp_path, "pairwise", {"id": "m", "ask": "Q?", "x": "R1.", "y": "R2."}, column_map=mapped
    )
    config = job_config("pairwise", column_map=mapped)
    assert view_texts("pairwise", row, config) == [
        ("ask", "Q?"),
        ("A · x", "R1."),
        ("B · y", "R2."),
    ]
