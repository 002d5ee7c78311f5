"""The rubric metric in-process: tests written under guidelines, checked with rationales, scored
by importance and per tag; a hedge, a test left unanswered or a truncated reply is unscored for
that test, never a pass or a fail; a row's own tests in Vertex's forms."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalq.core.errors import DatasetError, InputError, TruncatedReply
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.metrics.rubric.metric import RUBRIC
from evalq.metrics.rubric.parsing import row_tests
from evalq.testing import Harness, MemoryJudge, simulated

MODEL = "gemini-2.5-flash"
ROW = {
    "id": "r1",
    "prompt": "Explain photosynthesis to a child in under 50 words.",
    "response": "Plants use sunlight, water and air to make food. That is photosynthesis!",
}
TESTS = [
    {"test": "The reply is short.", "importance": "high", "tag": "format"},
    {"test": "The reply names the sun.", "importance": "low", "tag": "content"},
    {"test": "The reply is kind.", "tag": "style"},
]


def _rubric_row(options: dict[str, Any], judge: Any, record: dict[str, Any] = ROW) -> Any:
    harness = Harness("rubric", options, {MODEL: judge})
    (row,) = harness.rows([record])
    return harness.run_row(row)


def _test_of(request: JudgeRequest) -> str:
    for marker in ("short", "sun", "kind"):
        if marker in request.prompt.split("kind=rubric_test>")[-1]:
            return marker
    raise AssertionError("no test in the request")


class ScriptedJudge:
    """Answers each test's call as `replies` says (a text, or an exception to raise)."""

    def __init__(self, replies: dict[str, Any]) -> None:
        self.model = MODEL
        self.replies = replies

    def generate(self, request: JudgeRequest) -> JudgeReply:
        said = self.replies[_test_of(request)]
        if isinstance(said, Exception):
            raise said
        return JudgeReply(
            text=said,
            model=MODEL,
            model_version="v",
            prompt_tokens=1,
            output_tokens=1,
            finish_reason="STOP",
        )


def test_simulated_tests_are_weighted_by_importance_and_tagged_with_rationales() -> None:
    _, _, result = _rubric_row({}, MemoryJudge(MODEL, simulated))
    assert result.status == "scored"
    by_test = {q.question: q for q in result.questions}
    child = by_test["The response mentions child."]
    assert child.result == 0 and child.weight == 2.0 and "never uses" in (child.rationale or "")
    passed = sum(q.weight * (q.result or 0) for q in result.questions)
    assert result.score == pytest.approx(passed / sum(q.weight for q in result.questions))
    assert result.tag_scores["content"] == 0.5
    assert {"instruction_following", "style", "safety"} <= set(result.tag_scores)


def test_unscored_rules_per_test_hedge_truncated_unparseable() -> None:
    judge = ScriptedJudge(
        {
            "short": '{"explanation": "fine", "answer": "yes"}',
            "sun": "yes or no, hard to say",  # a hedge
            "kind": TruncatedReply("finish reason MAX_TOKENS"),
        }
    )
    _, _, result = _rubric_row(
        {"questions": "replace"}, judge, {**ROW, "rubrics": json.dumps(TESTS)}
    )
    status = {q.question: (q.status, q.reason, q.result) for q in result.questions}
    assert status == {
        "The reply is short.": ("ok", None, 1),
        "The reply names the sun.": ("unscored", "parse_error", None),
        "The reply is kind.": ("unscored", "truncated", None),
    }
    assert result.status == "partial" and result.score == 1.0  # unscored: left out, never 0


def test_batched_test_left_unanswered_is_unscored() -> None:
    reply = {
        "answers": [
            {"question_id": 1, "explanation": "short", "answer": "no"},
            {"question_id": 3, "explanation": "kind", "answer": "yes"},
        ]
    }
    judge = MemoryJudge(MODEL, lambda request: json.dumps(reply))
    _, _, result = _rubric_row(
        {"validator": "batched"}, judge, {**ROW, "rubrics": json.dumps(TESTS)}
    )
    assert len(judge.requests) == 1  # one call for the row's three tests
    results = [(q.status, q.reason, q.result, q.rationale) for q in result.questions]
    assert results == [
        ("ok", None, 0, "short"),
        ("unscored", "parse_error", None, None),
        ("ok", None, 1, "kind"),
    ]
    assert result.score == pytest.approx(1.0 / 3.0)  # high (2) failed, medium (1) passed


def test_guidelines_change_the_rubric_request_and_its_cache_version(tmp_path: Any) -> None:
    asked: list[str] = []

    def rubric_writer(request: JudgeRequest) -> str:
        asked.append(request.prompt)
        return simulated(request)

    _rubric_row({"guidelines": "text_quality"}, MemoryJudge(MODEL, rubric_writer))
    _rubric_row(
        {"guidelines": "mine.txt", "guidelines_text": "Test only the spelling."},
        MemoryJudge(MODEL, rubric_writer),
    )
    writes = [p for p in asked if "kind=rubric_prompt>" in p and "rubric_response" not in p]
    assert "quality of the writing" in writes[0] and "Test only the spelling." in writes[1]
    spec = RUBRIC.rubric_spec_for  # type: ignore[attr-defined]
    versions = {spec(o).template_version for o in ({}, {"guidelines": "text_quality"})}
    assert len(versions) == 2
    with pytest.raises(DatasetError, match="--guidelines nope"):
        spec({"guidelines": "nope"})


def test_vertex_rubric_groups_and_plain_forms_read_as_tests() -> None:
    vertex = {
        "general_quality_rubrics": {
            "group_id": "g1",
            "rubrics": [
                {
                    "rubric_id": "a",
                    "content": {"property": {"description": "Gives a date."}},
                    "importance": "HIGH",
                    "type": "CONTENT",
                },
                {
                    "rubricId": "b",
                    "content": {"property": {"description": "Is polite."}},
                    "importance": "IMPORTANCE_UNSPECIFIED",
                },
            ],
        }
    }
    tests = row_tests(json.dumps(vertex), "r1", "rubric_groups") or []
    assert [(t.question, t.tag, t.weight) for t in tests] == [
        ("Gives a date.", "content", 2.0),
        ("Is polite.", "other", 1.0),
    ]
    plain = row_tests(["Gives a date.", {"question": "Is short.", "weight": 0.5}], "r1") or []
    assert [(t.question, t.weight) for t in plain] == [("Gives a date.", 1.0), ("Is short.", 0.5)]
    with pytest.raises(InputError, match="test 1 needs a text"):
        row_tests([{"importance": "HIGH"}], "r1")
    with pytest.raises(InputError, match="rubrics"):
        _rubric_row(
            {}, MemoryJudge(MODEL, simulated), {**ROW, "rubrics": "[]", "questions": ["x."]}
        )


def test_the_validator_sees_the_texts_in_blocks_and_no_media() -> None:
    judge = MemoryJudge(MODEL, simulated)
    record = {**ROW, "context": "A school lesson.", "reference": "Plants make food from light."}
    _rubric_row({}, judge, record)
    checks = [r for r in judge.requests if r.role == "validator"]
    assert checks and all(not r.media for r in checks)
    assert all(f"kind=rubric_{k}>" in checks[0].prompt for k in ("context", "reference"))


def test_repeated_tests_keep_their_samples_and_a_rationale() -> None:
    judge = MemoryJudge(MODEL, simulated)
    _, _, result = _rubric_row({"samples": 3}, judge, {**ROW, "rubrics": json.dumps(TESTS)})
    assert len(result.repeats) == len(TESTS) == len(result.questions)
    assert all(q.rationale for q in result.questions)
    assert len([r for r in judge.requests if r.role == "validator"]) >= len(TESTS)
