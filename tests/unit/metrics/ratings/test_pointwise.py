"""Pointwise metric logic with in-memory judges (no Redis, no Celery): units, parsing,
repeated samples, several judges, documents, and the simulated judge's ratings, run by the
harness in tests/support/metric_harness.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import Blocked, DatasetError, InputError, RateLimited
from evalq.core.judge import JudgeRequest
from evalq.core.metric import get_metric
from evalq.examples.ratings import write_pointwise_example
from tests.support.datasets import write_rows
from tests.support.metric_harness import (
    FailingJudge,
    Harness,
    MemoryJudge,
    qa_inputs,
    simulated,
)
from tests.support.prompts import extract_section
from tests.support.rating_replies import rating

QA = {"template": "question_answering_quality"}

# ---- tests --------------------------------------------------------------------------------


def test_unknown_placeholder_fails_loading_naming_it_and_the_columns(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "d.jsonl", [{"prompt": "p", "response": "r"}])
    options = {"template": "t.txt", "template_text": "Judge {response} for {instructions}."}
    with pytest.raises(DatasetError) as caught:
        load_dataset(data, "pointwise", options)
    assert "{instructions}" in str(caught.value)
    assert "prompt, response" in str(caught.value)


def test_user_template_rows_use_only_its_placeholders(tmp_path: Path) -> None:
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "a", "question": "Q?", "answer": "A.", "other": 1}, {"id": "b", "answer": "B."}],
    )
    options = {"template_text": "Rate {answer} to {question}."}
    loaded = load_dataset(data, "pointwise", options)
    assert [r.data for r in loaded.rows] == [{"answer": "A.", "question": "Q?"}, {"answer": "B."}]
    assert any("row b" in w and "question" in w for w in loaded.warnings)
    judge = MemoryJudge("j", lambda request: rating(3))
    harness = Harness("pointwise", options, {"j": judge})
    with pytest.raises(InputError, match="question"):
        harness.run_row(loaded.rows[1])  # fails alone, before any judge call
    assert judge.requests == []


def test_one_unit_per_judge_and_sample_with_temperature_for_samples() -> None:
    calls: list[JudgeRequest] = []

    def reply(request: JudgeRequest) -> str:
        calls.append(request)
        return rating(4)

    judges = {m: MemoryJudge(m, reply) for m in ("judge-1", "judge-2")}
    plan, _, result = Harness("pointwise", {**QA, "samples": 3}, judges).run_row(qa_inputs()[0])
    assert [(u.judge, u.sample) for u in plan.units] == [
        (m, k) for m in ("judge-1", "judge-2") for k in range(3)
    ]
    assert sorted(r.sample for r in calls) == [0, 0, 1, 1, 2, 2]
    assert {r.temperature for r in calls} == {0.7}
    assert all(r.schema is not None and "rating" in r.schema.model_fields for r in calls)
    single = MemoryJudge("j", reply)
    calls.clear()
    Harness("pointwise", QA, {"j": single}).run_row(qa_inputs()[0])
    assert [(r.sample, r.temperature) for r in calls] == [(0, 0.0)]
    assert result.details["judges"]["judge-2"]["ratings"] == [4, 4, 4]


def test_ratings_mean_and_spread_per_row() -> None:
    replies = iter([rating(5, "first"), rating(3, "second"), rating(4, "third")])
    judge = MemoryJudge("j", lambda request: next(replies))
    _, _, row = Harness("pointwise", {**QA, "samples": 3}, {"j": judge}).run_row(qa_inputs()[0])
    assert row.details["ratings"] == [5, 3, 4]
    assert row.details["mean_rating"] == 4.0
    assert row.details["stdev"] == pytest.approx(1.0)
    assert row.score == pytest.approx(0.75)  # (4 - 1) / 4
    samples = row.details["judges"]["j"]["samples"]
    assert [s["explanation"] for s in samples] == ["first", "second", "third"]
    assert row.status == "scored"


def test_out_of_range_and_unparseable_ratings_are_unscored_never_zero() -> None:
    replies = iter([rating(9), "Rating: 2", rating(2)])
    judge = MemoryJudge("j", lambda request: next(replies))
    _, verdicts, row = Harness("pointwise", {**QA, "samples": 3}, {"j": judge}).run_row(
        qa_inputs()[0]
    )
    assert [v.status for v in verdicts.values()] == ["unscored", "unscored", "ok"]
    assert [v.reason for v in verdicts.values()][:2] == ["parse_error", "parse_error"]
    assert "outside the scale" in (verdicts[0].detail or "")
    assert verdicts[1].raw == "Rating: 2"
    assert row.details["ratings"] == [2]
    assert (row.status, row.score) == ("partial", 0.25)
    assert [q.reason for q in row.questions] == ["parse_error", "parse_error", None]


def test_a_row_with_no_readable_rating_fails_without_a_score() -> None:
    judge = MemoryJudge("j", lambda request: rating(0))
    _, _, row = Harness("pointwise", QA, {"j": judge}).run_row(qa_inputs()[0])
    assert (row.status, row.score, row.reason) == ("failed", None, "parse_error")
    assert get_metric("pointwise").summarize([row]) == {}


def test_rate_limits_propagate_and_other_judge_errors_are_unscored() -> None:
    limited = FailingJudge("j", RateLimited("429", retry_after_s=2))
    harness = Harness("pointwise", QA, {"j": limited})
    ctx = harness.context(qa_inputs()[0])
    spec = get_metric("pointwise")
    plan = spec.plan(ctx)
    with pytest.raises(RateLimited):
        spec.run_unit(ctx, plan, plan.units[0])
    blocked = Harness("pointwise", QA, {"j": FailingJudge("j", Blocked("SAFETY"))})
    _, verdicts, row = blocked.run_row(qa_inputs()[0])
    assert (verdicts[0].status, verdicts[0].reason) == ("unscored", "blocked")
    assert (row.status, row.reason) == ("failed", "blocked")


def test_summary_reports_consistency_of_repeated_samples() -> None:
    answers = {"r0": [4, 4, 4], "r1": [2, 4, 3], "r2": [5, 5, 5]}
    queues = {k: iter(v) for k, v in answers.items()}

    def reply(request: JudgeRequest) -> str:
        row = (
            "r0"
            if "Question 0" in request.prompt
            else "r1"
            if "Question 1" in request.prompt
            else "r2"
        )
        return rating(next(queues[row]))

    judge = MemoryJudge("j", reply)
    rows, summary = Harness("pointwise", {**QA, "samples": 3}, {"j": judge}).run(qa_inputs(3))
    assert [r.details["mean_rating"] for r in rows] == [4.0, 3.0, 5.0]
    assert summary["mean_rating"] == pytest.approx(4.0)
    low, high = summary["mean_rating_ci95"]
    assert 1.0 <= low < 4.0 < high <= 5.0
    assert summary["rating_counts"] == {"1": 0, "2": 1, "3": 1, "4": 4, "5": 3}
    assert summary["consistency"]["unanimous_share"] == pytest.approx(2 / 3)
    assert summary["consistency"]["mean_stdev"] == pytest.approx(1 / 3)


def test_several_judges_have_their_own_results_and_agreement() -> None:
    ratings = {"judge-a": [5, 4, 2, 1], "judge-b": [5, 3, 2, 2]}

    def judge_for(model: str) -> MemoryJudge:
        def reply(request: JudgeRequest) -> str:
            row = int((extract_section(request.prompt, "prompt") or "")[len("Question ")])
            return rating(ratings[model][row])

        return MemoryJudge(model, reply)

    judges = {m: judge_for(m) for m in ratings}
    rows, summary = Harness("pointwise", QA, judges).run(qa_inputs(4))
    assert rows[1].details["judges"]["judge-a"]["mean_rating"] == 4
    assert rows[1].details["judges"]["judge-b"]["mean_rating"] == 3
    assert rows[1].details["mean_rating"] == 3.5  # each judge weighs the same
    assert summary["mean_rating_by_judge"] == {"judge-a": 3.0, "judge-b": 3.0}
    agreement = summary["agreement"]
    assert agreement["all_agree"] == 0.5
    pair = agreement["pairs"]["judge-a vs judge-b"]
    assert (pair["rows"], pair["mean_abs_diff"], pair["within_one"]) == (4, 0.5, 1.0)
    assert 0.8 < pair["pearson"] < 1.0
    assert 0.8 < agreement["krippendorff_alpha"] < 1.0


def test_simulated_judge_rates_faithful_summaries_above_poor_ones(tmp_path: Path) -> None:
    harness = Harness(
        "pointwise", {"template": "summarization_quality"}, {"sim": MemoryJudge("sim", simulated)}
    )
    loaded = harness.load(write_pointwise_example(tmp_path))
    assert not loaded.errors
    rows, summary = harness.run(loaded.rows)
    by_id = {r.id: r for r in rows}
    for topic in ("tides", "bees", "volcanoes"):  # context, text document, PDF document
        good, bad = by_id[f"{topic}-good"], by_id[f"{topic}-bad"]
        assert good.details["mean_rating"] > bad.details["mean_rating"], topic
        explanation = good.details["judges"]["sim"]["samples"][0]["explanation"]
        assert explanation.startswith("[simulated judge]")
    assert summary["template"] == "summarization_quality"
    judge = harness.judges["sim"]
    pdf_requests = [r for r in judge.requests if r.media]
    assert pdf_requests and all(
        m.mime_type == "application/pdf" for r in pdf_requests for m in r.media
    )
    assert any("Honeybee colonies" in r.prompt for r in judge.requests)  # text inlined


def test_simulated_rating_depends_on_the_document_it_is_given(tmp_path: Path) -> None:
    from evalq.examples.ratings import BEES, VOLCANOES, write_pdf

    response = "Volcanoes form where magma reaches the surface, mostly along plate boundaries."
    rows = []
    for name, text in (("match", VOLCANOES), ("mismatch", BEES)):
        write_pdf(tmp_path / f"{name}.pdf", text)
        rows.append({"id": name, "document": f"{name}.pdf", "response": response})
    harness = Harness(
        "pointwise", {"template": "groundedness"}, {"sim": MemoryJudge("sim", simulated)}
    )
    results, _ = harness.run(harness.load(write_rows(tmp_path / "d.jsonl", rows)).rows)
    match, mismatch = (r.details["mean_rating"] for r in results)
    assert match > mismatch


def test_a_broken_document_fails_the_row_before_any_judge_call(tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(b"\x89PNG\r\n\x1a\n not a pdf")
    data = write_rows(tmp_path / "d.jsonl", [{"id": "x", "document": "doc.pdf", "response": "r"}])
    judge = MemoryJudge("j", lambda request: rating(3))
    harness = Harness("pointwise", {"template": "groundedness"}, {"j": judge})
    (row,) = harness.load(data).rows
    with pytest.raises(InputError, match="document"):
        harness.run_row(row)
    assert judge.requests == []


@pytest.mark.parametrize("template", ["summarization_quality", "question_answering_quality"])
def test_a_prompt_and_response_only_row_runs_with_the_text_in_the_prompt(
    tmp_path: Path, template: str
) -> None:
    # Vertex's and the seed's templates put the instruction and the text it is about in the
    # prompt; such a row has no context and no document, and must still be rated.
    prompt = "Summarise in one sentence: The tide rises twice a day. The Moon's pull causes it."
    path = write_rows(tmp_path / "d.jsonl", [{"prompt": prompt, "response": "The Moon pulls."}])
    judge = MemoryJudge("j", lambda request: rating(4))
    harness = Harness("pointwise", {"template": template}, {"j": judge})
    loaded = harness.load(path)
    assert not loaded.errors and not loaded.warnings
    results, _ = harness.run(loaded.rows)
    assert (results[0].status, results[0].score) == ("scored", 0.75)
    assert extract_section(judge.requests[0].prompt, "prompt") == prompt
