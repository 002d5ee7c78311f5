"""A batched validator unit answers every question of a row in one reply: each question's
verdict carries that reply's version, scored or not, and the row's question results keep it
per judge."""

from __future__ import annotations

from evalq.core.models import Coverage, Question, RowInput, Rubric, Verdict
from evalq.metrics.gecko.scoring import score_row
from evalq.metrics.gecko.validation import expand_batch

QUESTIONS = [Question(question="Red?", expected="yes"), Question(question="Round?", expected="yes")]


def batch_unit(value: list[dict[str, object]] | None, version: str) -> Verdict:
    status = "ok" if value else "unscored"
    return Verdict(
        index=0,
        status=status,
        value=value,
        reason=None if value else "parse_error",
        model_version=version,
    )


def test_every_question_of_a_batched_reply_carries_its_version() -> None:
    answers = [Verdict(index=i, status="ok", answer="yes").model_dump() for i in range(2)]
    scored = expand_batch(batch_unit(answers, "flash-002"), 2)
    failed = expand_batch(batch_unit(None, "flash-001"), 2)
    assert {v.model_version for v in scored.values()} == {"flash-002"}
    assert {(v.reason, v.model_version) for v in failed.values()} == {("parse_error", "flash-001")}


def test_each_judges_questions_keep_their_own_version() -> None:
    rubric = Rubric(questions=QUESTIONS, coverage=Coverage(), template_version="t", judge_model="m")
    row = RowInput(id="r", line=1, prompt="a red circle")

    def verdicts(version: str) -> dict[int, Verdict]:
        return {
            i: Verdict(index=i, status="ok", answer="yes", model_version=version) for i in range(2)
        }

    result = score_row(
        row, rubric, {}, {"flash": verdicts("flash-002"), "pro": verdicts("pro-001")}
    )
    assert {(q.judge_model, q.model_version) for q in result.questions} == {
        ("flash", "flash-002"),
        ("pro", "pro-001"),
    }
