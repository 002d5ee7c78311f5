"""What the judge was shown, in the exports: each metric says which fields its judge read, named as
the dataset names them (a --candidates cell's column, a column read under another name, a --map
column); media by path, inline data by kind and size; a text never twice; CSV cells formula-safe."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from evalq.client.output.exports.csv_tables import results_csv
from evalq.client.output.exports.frames import results_frame
from evalq.client.output.exports.jsonl import results_jsonl
from evalq.client.output.judged_texts import judged_columns, judged_texts, media_name
from evalq.core.metric import get_metric
from evalq.core.models import MediaRef, RowInput, RowResult
from evalq.core.registry import metric_names
from tests.support.datasets import loaded_rows
from tests.support.job_configs import job_config

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def scored_result(row: RowInput, **fields: Any) -> RowResult:
    return RowResult.of(row, status="scored", score=1.0, candidate=row.candidate, **fields)


def test_every_metric_says_what_it_judges_and_in_what_words() -> None:
    words = {name: get_metric(name).judged_units for name in metric_names()}
    assert words == {
        "gecko-image": "questions",
        "gecko-video": "questions",
        "groundedness": "sentence labellings",
        "pointwise": "ratings",
        "pairwise": "comparisons",
        "rank": "comparisons",
        "rubric": "tests",
    }


def test_media_are_named_by_path_or_address_and_inline_data_by_its_size() -> None:
    assert media_name(MediaRef(kind="path", value="/data/a.png")) == "/data/a.png"
    assert media_name(MediaRef(kind="url", value="https://x/a.png")) == "https://x/a.png"
    assert media_name(MediaRef(kind="file_uri", value="gs://b/a.mp4")) == "gs://b/a.mp4"
    inline = MediaRef(kind="inline", value="aGVsbG8=", mime_type="image/png")  # "hello"
    assert media_name(inline) == "inline image/png, 5 bytes"


def test_a_mapped_field_and_an_alias_are_named_as_the_dataset_names_them(
    tmp_path: Path,
) -> None:
    """--map reads `reply` as the response; a built-in rubric reads `instruction` as its
    prompt: the export names both as the dataset does."""
    rows = loaded_rows(
        tmp_path,
        "pointwise",
        [{"id": "a", "instruction": "Summarise.", "context": "Text.", "reply": "Short."}],
        options={"template": "summarization_quality"},
        column_map={"response": "reply"},
    )
    cfg = job_config("pointwise", column_map={"response": "reply"})
    (texts,) = judged_texts(cfg, [scored_result(rows[0])], rows)
    assert texts == {"instruction": "Summarise.", "context": "Text.", "reply": "Short."}


def test_vertex_prompt_read_as_groundedness_query_is_the_prompt_column_once(
    tmp_path: Path,
) -> None:
    rows = loaded_rows(
        tmp_path,
        "groundedness",
        [
            {"id": "v", "prompt": "Q?", "context": "C.", "response": "R."},
            {"id": "q", "query": "Q2?", "context": "C.", "response": "R."},
        ],
    )
    texts = judged_texts(job_config("groundedness"), [scored_result(r) for r in rows], rows)
    assert texts == [
        {"context": "C.", "response": "R."},  # `prompt` is evalq's prompt column already
        {"query": "Q2?", "context": "C.", "response": "R."},
    ]


def test_candidate_cells_name_their_own_column_and_generated_responses_come_from_details(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    cells = loaded_rows(
        tmp_path,
        "gecko-image",
        [{"id": "r", "prompt": "p", "sdxl": "a.png", "flux": "https://example.com/b.png"}],
        options={"candidates": ["sdxl", "flux"]},
    )
    cfg = job_config("gecko-image", options={"candidates": ["sdxl", "flux"]})
    texts = judged_texts(cfg, [scored_result(c) for c in cells], cells)
    assert texts == [
        {"sdxl": str((tmp_path / "a.png").resolve())},
        {"flux": "https://example.com/b.png"},
    ]

    options = {"candidates": "a,b", "candidate_prompts": {"b": "Answer briefly."}}
    ranked = loaded_rows(
        tmp_path, "rank", [{"id": "k", "prompt": "p", "a": "A says."}], options=options
    )
    details = {"candidates": ["a", "b"], "generated": {"b": "B wrote this."}}
    (texts_rank,) = judged_texts(
        job_config("rank", options=options), [scored_result(ranked[0], details=details)], ranked
    )
    assert texts_rank == {"a": "A says.", "b": "B wrote this."}


def test_a_row_refused_at_load_shows_nothing() -> None:
    failed = RowResult(id="7", line=7, prompt="", status="failed", score=None)
    assert judged_texts(job_config("pairwise"), [failed], []) == [{}]


def test_a_name_the_table_has_is_left_out_when_it_holds_the_same_text_else_prefixed() -> None:
    texts = [{"response": "R.", "score": "S.", "context": "C."}]
    own = [{"response": "R."}]
    taken = ["id", "prompt", "score", "response"]
    assert judged_columns(texts, own, taken) == {"score": "input:score", "context": "context"}
    assert judged_columns(texts, [{"response": "other"}], taken)["response"] == "input:response"


@pytest.fixture
def pair() -> tuple[list[RowResult], list[dict[str, str]]]:
    rows = [
        RowResult(
            id="r1",
            line=1,
            prompt="Q?",
            status="scored",
            score=1.0,
            details={"sides": {"A": "response", "B": "baseline_model_response"}, "winner": "A"},
            extra={"tier": "gold"},
        )
    ]
    return rows, [{"response": "=1+1", "baseline_model_response": "B."}]


def test_csv_and_frame_put_the_texts_after_the_metric_columns_formula_safe(
    pair: tuple[list[RowResult], list[dict[str, str]]],
) -> None:
    rows, texts = pair
    text = results_csv(rows, texts)
    header = next(csv.reader(io.StringIO(text)))
    at = header.index("explanation")
    assert header[at + 1 : at + 5] == [
        "response",
        "baseline_model_response",
        "questions",
        "details",
    ]
    assert header[-1] == "tier"
    (line,) = csv.DictReader(io.StringIO(text))
    assert line["response"] == "'=1+1" and line["baseline_model_response"] == "B."
    frame = results_frame(rows, texts)
    assert list(frame.columns) == header
    assert frame.loc[0, "response"] == "=1+1"


def test_jsonl_adds_inputs_after_the_result_and_changes_nothing_without_them(
    pair: tuple[list[RowResult], list[dict[str, str]]],
) -> None:
    rows, texts = pair
    (plain,) = results_jsonl(rows)
    (line,) = results_jsonl(rows, texts)
    assert line == plain[:-2] + ',"inputs":{"response":"=1+1","baseline_model_response":"B."}}\n'
    assert json.loads(line)["inputs"] == texts[0]


@pytest.mark.parametrize(
    ("metric", "label"),
    [("pointwise", "unscored ratings"), ("gecko-image", "unscored questions")],
)
def test_the_summary_counts_unscored_units_in_the_metrics_words(metric: str, label: str) -> None:
    from evalq.client.output.terminal.summary import summary_rows
    from evalq.core.counters import JobCounters
    from evalq.core.summary import build_summary

    cfg = job_config(metric)
    s = build_summary(cfg, JobCounters(status="finished"), {"parse_error": 2}, [], now=1.0)
    assert (label, "parse_error 2") in summary_rows(s)
    older = s.model_copy(update={"judged_units": None})  # a summary stored before the word
    assert ("unscored verdicts", "parse_error 2") in summary_rows(older)
