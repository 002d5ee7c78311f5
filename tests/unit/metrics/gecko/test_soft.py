"""Gecko --soft: a yes/no question scored by p(expected) / (p(yes) + p(no)) read from the
answer token's top candidates, from a reply body in the recorded wire shape; questions with no
usable log probabilities are unscored with why, never 0 or 1; the hard score is kept."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest
from google.genai import types

from evalq.core.errors import DatasetError
from evalq.core.judge import JudgeReply, JudgeRequest, ReplyLogprobs, TokenChoice, TokenStep
from evalq.core.models import Question, RowInput, Rubric, Verdict
from evalq.metrics.gecko.modes import soft_mode
from evalq.metrics.gecko.rubric import dataset_rubric
from evalq.metrics.gecko.scoring import score_row
from evalq.metrics.gecko.soft import (
    SOFT_TOP_CANDIDATES,
    answer_step,
    soft_answer,
    soft_score_questions,
)
from evalq.metrics.gecko.validation import validate_question
from evalq.worker.judges.reply_reading import reply_from_response
from tests.support.judges import ListJudge
from tests.support.recorded import recorded_logprobs

MEDIA: Any = None  # the in-memory judge never looks at it


def recorded() -> dict[str, Any]:
    return recorded_logprobs("stop_yes_with_logprobs")


def recorded_reply() -> JudgeReply:
    body = recorded()["body"]
    return reply_from_response("gemini-2.0-flash", types.GenerateContentResponse(**body))


def by_hand(body: dict[str, Any], expected: str) -> float:
    """The soft score worked out from the raw body, apart from evalq's reader."""
    step = recorded()["expect"]["answer_step"]
    top = body["candidates"][0]["logprobsResult"]["topCandidates"][step]["candidates"]
    mass = {"yes": 0.0, "no": 0.0}
    for c in top:
        word = c["token"].strip().lower()
        if word in mass:
            mass[word] += math.exp(c["logProbability"])
    return mass[expected] / (mass["yes"] + mass["no"])


def test_the_recorded_reply_is_read_step_by_step() -> None:
    reply = recorded_reply()
    expect = recorded()["expect"]
    assert reply.logprobs is not None
    steps = reply.logprobs.steps
    assert "".join(s.chosen.token for s in steps) == reply.text
    assert steps[expect["answer_step"]].chosen.token == "yes"
    assert len(steps[expect["answer_step"]].top) == expect["top_at_answer"]
    avg = recorded()["body"]["candidates"][0]["avgLogprobs"]
    assert reply.logprobs.avg_logprob == pytest.approx(avg)


def test_the_answer_step_is_the_answer_value_not_an_earlier_no() -> None:
    reply = recorded_reply()
    assert reply.logprobs is not None
    step = answer_step(reply.logprobs)
    assert step is not None and step.chosen.token == "yes"  # " no" in the explanation is skipped


@pytest.mark.parametrize("expected", ["yes", "no"])
def test_probability_of_the_expected_answer_normalised_over_yes_and_no(expected: str) -> None:
    reply = recorded_reply()
    read = soft_answer(expected, reply.logprobs)
    assert read.detail is None
    assert read.probability == pytest.approx(by_hand(recorded()["body"], expected))
    assert 0.0 < (read.probability or 0.0) < 1.0


def logprobs(*steps: TokenStep) -> ReplyLogprobs:
    return ReplyLogprobs(steps)


def chosen(token: str, logprob: float = 0.0, *top: tuple[str, float]) -> TokenStep:
    return TokenStep(TokenChoice(token, logprob), tuple(TokenChoice(t, p) for t, p in top))


JSON_HEAD = (chosen('{"answer'), chosen('": "'))


def test_a_chosen_answer_missing_from_its_top_list_still_counts() -> None:
    step = chosen("no", math.log(0.3), ("yes", math.log(0.6)))
    read = soft_answer("no", logprobs(*JSON_HEAD, step, chosen('"}')))
    assert read.probability == pytest.approx(0.3 / 0.9)


def test_a_bare_answer_is_read_too() -> None:
    step = chosen("yes", math.log(0.8), ("yes", math.log(0.8)), ("no", math.log(0.2)))
    assert soft_answer("yes", logprobs(step)).probability == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("reply_logprobs", "why"),
    [
        (None, "no log probabilities"),
        (logprobs(chosen("maybe")), "no token of the reply writes the answer"),
        (logprobs(*JSON_HEAD, chosen("perhaps"), chosen('"}')), "reads as neither"),
        (
            logprobs(*JSON_HEAD, chosen("yes", float("nan"), ("Sure", -0.1)), chosen('"}')),
            "neither yes nor no is among",
        ),
    ],
)
def test_no_usable_logprobs_gives_no_probability_and_says_why(
    reply_logprobs: ReplyLogprobs | None, why: str
) -> None:
    read = soft_answer("yes", reply_logprobs)
    assert read.probability is None
    assert read.detail is not None and why in read.detail


def test_a_question_that_is_not_yes_no_has_no_soft_score() -> None:
    read = soft_answer("B", recorded_reply().logprobs)
    assert read.probability is None and read.detail and "yes/no" in read.detail


def test_validate_question_asks_for_logprobs_and_records_both_answers() -> None:
    reply = recorded_reply()

    class Replying(ListJudge):
        def generate(self, request: JudgeRequest) -> JudgeReply:
            self.requests.append(request)
            return reply

    judge = Replying([])
    question = Question(question="Is there a red circle?", expected="yes", tag="object")
    verdict, _ = validate_question(judge, 0, question, MEDIA, soft=True)
    assert judge.requests[0].logprobs == SOFT_TOP_CANDIDATES
    assert verdict.answer == "yes"
    assert verdict.probability == pytest.approx(by_hand(recorded()["body"], "yes"))
    plain, _ = validate_question(judge, 0, question, MEDIA)
    assert judge.requests[1].logprobs is None and plain.probability is None


def rubric_of(expected: list[str], tags: list[str]) -> Rubric:
    questions = [
        {"question": f"q{i}?", "expected": e, "tag": t}
        for i, (e, t) in enumerate(zip(expected, tags, strict=True))
    ]
    row = RowInput.model_validate({"id": "r", "line": 1, "prompt": "p", "questions": questions})
    return dataset_rubric(row)


def test_row_and_tag_scores_are_means_of_probabilities_and_the_hard_score_is_kept() -> None:
    rubric = rubric_of(["yes", "no", "yes"], ["object", "object", "color"])
    verdicts = {
        0: Verdict(index=0, status="ok", answer="yes", probability=0.9),
        1: Verdict(index=1, status="ok", answer="yes", probability=0.25),  # hard: a miss
        2: Verdict(index=2, status="ok", answer="yes", probability=0.6),
    }
    row = RowInput(id="r", line=1, prompt="p")
    result = score_row(row, rubric, verdicts, soft=True)
    assert result.status == "scored"
    assert result.score == pytest.approx((0.9 + 0.25 + 0.6) / 3)
    assert result.tag_scores == pytest.approx({"object": (0.9 + 0.25) / 2, "color": 0.6})
    assert result.details["hard_score"] == pytest.approx(2 / 3)
    assert [q.result for q in result.questions] == [1, 0, 1]  # the hard results, recorded
    assert [q.probability for q in result.questions] == [0.9, 0.25, 0.6]


def test_a_question_with_no_probability_is_unscored_never_zero_or_one() -> None:
    rubric = rubric_of(["yes", "yes"], ["object", "object"])
    why = "--soft: the reply carries no log probabilities (logprobsResult)"
    verdicts = {
        0: Verdict(index=0, status="ok", answer="yes", probability=0.8),
        1: Verdict(index=1, status="ok", answer="yes", detail=why),
    }
    result = score_row(RowInput(id="r", line=1, prompt="p"), rubric, verdicts, soft=True)
    assert result.status == "partial"
    assert result.score == pytest.approx(0.8)
    second = result.questions[1]
    assert (second.status, second.reason, second.detail) == ("unscored", "parse_error", why)
    assert second.answer == "yes" and second.result == 1  # the hard answer is still there
    none = {1: Verdict(index=1, status="ok", answer="yes", detail=why)}
    failed = score_row(RowInput(id="r", line=1, prompt="p"), rubric_of(["yes"], ["o"]), {})
    assert failed.score is None
    assert soft_score_questions([]) == ("failed", None, {})
    assert score_row(RowInput(id="r", line=1, prompt="p"), rubric, none, soft=True).score is None


def test_soft_with_several_judges_averages_their_soft_scores() -> None:
    rubric = rubric_of(["yes"], ["object"])
    by_judge = {
        "a": {0: Verdict(index=0, status="ok", answer="yes", probability=0.9)},
        "b": {0: Verdict(index=0, status="ok", answer="no", probability=0.3)},
    }
    result = score_row(RowInput(id="r", line=1, prompt="p"), rubric, {}, by_judge, soft=True)
    assert result.score == pytest.approx(0.6)
    assert result.details["hard_score"] == pytest.approx(0.5)
    assert result.details["judges"]["b"]["score"] == pytest.approx(0.3)


def test_soft_is_refused_with_the_batched_validator() -> None:
    assert soft_mode({"soft": True}) is True
    assert soft_mode({}) is False
    with pytest.raises(DatasetError, match="per-question"):
        soft_mode({"soft": True, "validator": "batched"})


def test_the_request_without_soft_is_unchanged() -> None:
    request = JudgeRequest(prompt="p")
    assert request.logprobs is None
    assert replace(request, logprobs=5).logprobs == 5
