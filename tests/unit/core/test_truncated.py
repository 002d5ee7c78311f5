"""One rule for replies that did not end normally, whatever the metric: never scored from the
part that parses, always unscored as `truncated`, with the finish reason and token counts.

Each reply below would read as a clean verdict if its text were parsed (a complete JSON object
before the cut, or a complete first sentence label): the judge stops with MAX_TOKENS, and the
verdict must still be unscored, never a score."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalq.core.errors import TruncatedReply
from evalq.core.judge import JudgeReply, ensure_complete, incomplete
from evalq.core.models import Question, RowInput
from evalq.metrics.gecko import metric as gecko
from evalq.metrics.gecko_video import metric as gecko_video
from evalq.metrics.groundedness import metric as g
from tests.support.gecko_rubrics import rubric_reply, yes_no_question
from tests.support.judges import ListJudge
from tests.support.metric_harness import Harness, qa_inputs
from tests.support.rating_replies import choice, rating
from tests.unit.metrics.gecko.test_gecko import IMAGE

CUT = "MAX_TOKENS"
VIDEO = IMAGE.__class__(mime_type="video/mp4", data=b"\x00\x00\x00\x18ftypmp42")


def assert_truncated(verdict: Any) -> None:
    assert (verdict.status, verdict.reason) == ("unscored", "truncated")
    assert verdict.result is None
    assert "finish_reason MAX_TOKENS" in (verdict.detail or "")
    assert "output tokens" in (verdict.detail or "")


def finished_reply(text: str, finish: str | None, thoughts: int = 0) -> JudgeReply:
    return JudgeReply(
        text=text,
        model="m",
        model_version=None,
        prompt_tokens=120,
        output_tokens=64,
        finish_reason=finish,
        thought_tokens=thoughts,
    )


# ---- the rule --------------------------------------------------------------------------------


def test_only_a_normal_stop_with_text_is_a_whole_reply() -> None:
    whole = finished_reply('{"answer": "yes"}', "STOP")
    assert ensure_complete(whole) is whole
    for finish in ("MAX_TOKENS", "OTHER", "LANGUAGE", None):
        error = incomplete(finished_reply('{"answer": "yes"}', finish))
        assert isinstance(error, TruncatedReply)
        assert error.reason == "truncated"
    thinking_only = incomplete(finished_reply("", "STOP", thoughts=60))
    assert thinking_only is not None
    assert "no text after thinking" in thinking_only.message
    assert "60 thinking tokens" in thinking_only.message
    with pytest.raises(TruncatedReply) as caught:
        ensure_complete(finished_reply('{"answer": "ye', "MAX_TOKENS"))
    assert "120 prompt tokens, 64 output tokens" in caught.value.message
    assert caught.value.raw == '{"answer": "ye'
    assert (caught.value.cost.prompt_tokens, caught.value.cost.output_tokens) == (120, 64)


# ---- every metric ----------------------------------------------------------------------------


def test_gecko_image_per_question() -> None:
    judge = ListJudge(['{"explanation": "a cat", "answer": "yes"}'], finish_reason=CUT)
    verdict, _ = gecko.validate_question(
        judge, 0, Question(question="A cat?", expected="yes"), IMAGE
    )
    assert_truncated(verdict)


def test_gecko_image_batched_unscores_every_question() -> None:
    answered_first = json.dumps(
        {"answers": [{"question_id": 1, "explanation": "a cat", "answer": "yes"}]}
    )
    judge = ListJudge([answered_first], finish_reason=CUT)
    questions = [
        Question(question="A cat?", expected="yes"),
        Question(question="A dog?", expected="yes"),
    ]
    unit, _ = gecko.validate_batch(judge, questions, IMAGE)
    assert_truncated(unit)
    expanded = gecko.expand_batch(unit, 2)
    assert [(v.status, v.reason) for v in expanded.values()] == [("unscored", "truncated")] * 2


def test_gecko_rubric_cut_off_fails_the_row_as_truncated() -> None:
    whole_rubric = rubric_reply(["cat"], [yes_no_question("Is there a cat?", ["cat"], "animal")])
    with pytest.raises(TruncatedReply):
        gecko.generate_rubric(ListJudge([whole_rubric], finish_reason=CUT), "a cat")


def test_gecko_video() -> None:
    question = Question(question="What moves?", choices=["a) a ball", "b) a car"], expected="a")
    judge = ListJudge(['{"explanation": "a ball rolls", "answer": "a"}'], finish_reason=CUT)
    verdict, _ = gecko.validate_question(judge, 0, question, VIDEO, gecko_video.VIDEO_VALIDATOR)
    assert_truncated(verdict)


CONTEXT = "Apples are red fruits. Bananas are yellow fruits."
CUT_IN_SECOND_LABEL = (
    '{"eligibility_rationale": "it answers", "eligible": true, "sentences": ['
    '{"sentence": "Apples are red.", "label": "supported", "rationale": "r", '
    '"excerpt": "Apples are red fruits."}, {"sentence": "Bananas cure cancer.", "label": "sup'
)


def test_groundedness_cut_in_its_second_label_is_not_grounded() -> None:
    judge = ListJudge([CUT_IN_SECOND_LABEL], finish_reason=CUT)
    verdict, _ = g.judge_response(
        judge, 0, "What colour are apples?", CONTEXT, "Apples are red. Bananas cure cancer."
    )
    assert_truncated(verdict)
    assert verdict.judge_model == judge.model


def test_groundedness_candidate_cut_off_fails_the_row() -> None:
    row = RowInput(id="r", line=1, prompt="q", data={"query": "q", "context": CONTEXT})
    writer = ListJudge(["Apples are red."], model="w", finish_reason=CUT)
    harness = Harness("groundedness", {"candidate_model": "w"}, {"j": ListJudge([])}, {"w": writer})
    with pytest.raises(TruncatedReply):
        harness.run_row(row)


def test_pointwise() -> None:
    judge = ListJudge([rating(5)], model="j", finish_reason=CUT)
    harness = Harness("pointwise", {"template": "question_answering_quality"}, {"j": judge})
    _, verdicts, row = harness.run_row(qa_inputs()[0])
    assert_truncated(verdicts[0])
    assert (row.status, row.score, row.reason) == ("failed", None, "truncated")
    assert [q.reason for q in row.questions] == ["truncated"]


def pair_row() -> RowInput:
    data = {"prompt": "Which?", "response_a": "One.", "response_b": "Two."}
    return RowInput(id="p", line=1, prompt="Which?", data=data)


def test_pairwise() -> None:
    judge = ListJudge(lambda request: choice("A"), model="j", finish_reason=CUT)
    _, verdicts, row = Harness("pairwise", {}, {"j": judge}).run_row(pair_row())
    for verdict in verdicts.values():
        assert_truncated(verdict)
    assert (row.status, row.score, row.reason) == ("failed", None, "truncated")
    assert {q.reason for q in row.questions} == {"truncated"}


def test_rank() -> None:
    judge = ListJudge(lambda request: choice("A"), model="j", finish_reason=CUT)
    row = RowInput(id="k", line=1, prompt="Which?", data={"prompt": "Which?", "x": "1", "y": "2"})
    harness = Harness("rank", {"candidates": ["x", "y"], "bootstrap": 10}, {"j": judge})
    _, verdicts, result = harness.run_row(row)
    for verdict in verdicts.values():
        assert_truncated(verdict)
    assert (result.status, result.score, result.reason) == ("failed", None, "truncated")


def test_rank_candidate_cut_off_fails_the_row() -> None:
    row = RowInput(id="k", line=1, prompt="Which?", data={"prompt": "Which?", "x": "1"})
    options = {
        "candidates": ["x", "y"],
        "candidate_prompts": {"y": "Be brief."},
        "candidate_model": "w",
    }
    writer = ListJudge(["A partial answ"], model="w", finish_reason=CUT)
    harness = Harness("rank", options, {"j": ListJudge([])}, {"w": writer})
    with pytest.raises(TruncatedReply):
        harness.run_row(row)
