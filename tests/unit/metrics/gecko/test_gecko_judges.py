"""Several validator judges for Gecko, the rubric model, and row questions that extend a
generated rubric. Pure metric logic against in-memory judges (plan -> units -> aggregate)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from evalq.client.cli.metric_flags import job_options
from evalq.core.errors import DatasetError
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.models import MediaRef, Question, RowInput
from evalq.metrics.gecko import metric as gecko
from evalq.metrics.gecko_video.metric import GECKO_VIDEO
from tests.support.contexts import row_context, run_row
from tests.support.gecko_rubrics import rubric_reply, yes_no_question
from tests.support.judges import ListJudge
from tests.support.prompts import extract_section

IMAGE = MediaPart(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n")
QUESTIONS = [
    Question(question="Is there a circle?", expected="yes", tag="object"),
    Question(question="Is the circle red?", expected="yes", tag="color"),
    Question(question="Is there a square?", expected="no", tag="object"),
    Question(question="Is the square blue?", expected="yes", tag="color"),
]


def run_with_judges(
    metric: Any,
    row: RowInput,
    judges: Mapping[str, ListJudge],
    options: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """plan -> run_unit per unit -> aggregate, as the tasks do, with one judge per model."""
    ctx = row_context(
        metric.name, row, judges, lambda field: IMAGE, several=True, options=options or {}
    )
    plan, _, result = run_row(metric, ctx)
    return plan, result


def answering(answers: Mapping[str, str]) -> ListJudge:
    """A judge that answers by question text, one at a time or all at once; a value that is
    not yes/no is sent as it is (an unreadable reply)."""

    def reply(request: JudgeRequest) -> str:
        block = extract_section(request.prompt, "questions")
        if block is not None:
            return json.dumps(
                {
                    "answers": [
                        {"question_id": i, "explanation": "x", "answer": answers[q.question]}
                        for i, q in enumerate(QUESTIONS, start=1)
                        if q.question in block
                    ]
                }
            )
        asked = extract_section(request.prompt, "question")
        return json.dumps({"explanation": "x", "answer": answers[str(asked)]})

    return ListJudge(reply)


JUDGE_A = {
    "Is there a circle?": "yes",
    "Is the circle red?": "yes",
    "Is there a square?": "no",
    "Is the square blue?": "yes",
}
JUDGE_B = {**JUDGE_A, "Is the circle red?": "no", "Is the square blue?": "maybe"}


def row_with_questions() -> RowInput:
    return RowInput(
        id="r",
        line=1,
        prompt="p",
        media={"image": MediaRef(kind="path", value="/x.png")},
        questions=QUESTIONS,
    )


@pytest.mark.parametrize("mode", ["per-question", "batched"])
def test_every_question_is_answered_by_every_judge(mode: str) -> None:
    judges = {"judge-a": answering(JUDGE_A), "judge-b": answering(JUDGE_B)}
    plan, result = run_with_judges(
        gecko.GECKO_IMAGE, row_with_questions(), judges, {"validator": mode}
    )
    calls = 1 if mode == "batched" else len(QUESTIONS)
    assert [len(j.requests) for j in judges.values()] == [calls, calls]
    assert len(plan.units) == 2 * calls
    per_judge = result.details["judges"]
    assert per_judge["judge-a"]["score"] == 1.0
    # judge-b: "maybe" is unscored and left out of its score (2 of 3), never a 0.
    assert per_judge["judge-b"]["score"] == pytest.approx(2 / 3)
    assert per_judge["judge-b"]["questions_unscored"] == 1
    assert per_judge["judge-b"]["tag_scores"] == {"color": 0.0, "object": 1.0}
    assert result.score == pytest.approx((1.0 + 2 / 3) / 2)
    assert result.tag_scores == {"color": 0.5, "object": 1.0}
    assert result.status == "partial"
    assert len(result.questions) == 2 * len(QUESTIONS)
    assert {q.judge_model for q in result.questions} == {"judge-a", "judge-b"}
    unscored = [q for q in result.questions if q.status == "unscored"]
    assert [(q.judge_model, q.question, q.reason) for q in unscored] == [
        ("judge-b", "Is the square blue?", "parse_error")
    ]


def test_the_summary_reports_per_judge_scores_and_agreement() -> None:
    judges = {"judge-a": answering(JUDGE_A), "judge-b": answering(JUDGE_B)}
    _, result = run_with_judges(gecko.GECKO_IMAGE, row_with_questions(), judges)
    summary = gecko.GECKO_IMAGE.summarize([result])
    assert summary["per_judge"]["judge-a"]["mean_score"] == 1.0
    assert summary["per_judge"]["judge-b"]["mean_score"] == pytest.approx(2 / 3)
    assert summary["per_judge"]["judge-b"]["tag_scores"] == {"color": 0.0, "object": 1.0}
    agreement = summary["agreement"]
    # Three questions both judges answered: they agree on two (circle, square), not on red.
    assert agreement["questions_compared"] == 3
    assert agreement["all_agree"] == pytest.approx(2 / 3)
    assert agreement["fleiss_kappa"] == pytest.approx(1 / 3)  # (2/3 - 1/2) / (1 - 1/2)
    assert set(agreement["cohen_kappa"]) == {"judge-a vs judge-b"}


def test_one_judge_rows_look_as_before() -> None:
    _, result = run_with_judges(
        gecko.GECKO_IMAGE, row_with_questions(), {"only": answering(JUDGE_A)}
    )
    assert result.details == {"validator": "per-question"}
    assert result.score == 1.0
    assert "agreement" not in gecko.GECKO_IMAGE.summarize([result])


def generated_row() -> RowInput:
    return RowInput(
        id="g", line=1, prompt="a circle", media={"image": MediaRef(kind="path", value="/x.png")}
    )


def rubric_writer_and_validator(name: str) -> ListJudge:
    def reply(request: JudgeRequest) -> str:
        if extract_section(request.prompt, "image_description") is not None:
            return rubric_reply(
                ["circle"], [yes_no_question(f"Is there a circle ({name})?", ["circle"])]
            )
        return json.dumps({"explanation": "x", "answer": "yes"})

    judge = ListJudge(reply)
    judge.model = name
    return judge


def rubric_requests(judge: ListJudge) -> int:
    return sum(extract_section(r.prompt, "image_description") is not None for r in judge.requests)


def test_the_rubric_is_written_once_by_the_first_judge() -> None:
    judges = {m: rubric_writer_and_validator(m) for m in ("judge-a", "judge-b")}
    plan, result = run_with_judges(gecko.GECKO_IMAGE, generated_row(), judges)
    assert [rubric_requests(j) for j in judges.values()] == [1, 0]
    assert [q.question for q in result.questions] == ["Is there a circle (judge-a)?"] * 2
    assert plan.rubric_model == "judge-a"


def test_rubric_model_names_another_writer() -> None:
    judges = {m: rubric_writer_and_validator(m) for m in ("judge-a", "judge-b", "writer")}
    validators = {m: judges[m] for m in ("judge-a", "judge-b")}

    class Judges(dict[str, ListJudge]):
        def __missing__(self, key: str) -> ListJudge:
            return judges[key]

    plan, result = run_with_judges(
        gecko.GECKO_IMAGE, generated_row(), Judges(validators), {"rubric_model": "writer"}
    )
    assert [rubric_requests(judges[m]) for m in ("judge-a", "judge-b", "writer")] == [0, 0, 1]
    assert len(judges["writer"].requests) == 1  # it writes the rubric and validates nothing
    assert {q.question for q in result.questions} == {"Is there a circle (writer)?"}
    assert plan.rubric_model == "writer"
    assert plan.rubric.judge_model == "writer"


def test_row_questions_extend_the_generated_rubric() -> None:
    row = generated_row().model_copy(
        update={"questions": [Question(question="Is the circle red?", expected="yes", tag="color")]}
    )
    judge = rubric_writer_and_validator("judge-a")
    _, result = run_with_judges(gecko.GECKO_IMAGE, row, {"judge-a": judge}, {"questions": "extend"})
    assert [(q.question, q.source) for q in result.questions] == [
        ("Is there a circle (judge-a)?", "generated"),
        ("Is the circle red?", "dataset"),
    ]
    assert result.coverage == 1.0  # coverage is the generated rubric's
    # By default the dataset's questions replace the generated rubric.
    judge = rubric_writer_and_validator("judge-a")
    _, result = run_with_judges(gecko.GECKO_IMAGE, row, {"judge-a": judge})
    assert [(q.question, q.source) for q in result.questions] == [("Is the circle red?", "dataset")]
    assert rubric_requests(judge) == 0


@pytest.mark.parametrize("metric", [gecko.GECKO_IMAGE, GECKO_VIDEO], ids=lambda m: m.name)
def test_bad_gecko_options_are_refused_before_anything_runs(metric: Any) -> None:
    with pytest.raises(DatasetError, match="questions"):
        metric.check([], {"questions": "append"})
    with pytest.raises(DatasetError, match="rubric_model"):
        metric.check([], {"rubric_model": ""})
    assert metric.check([], {"questions": "extend", "rubric_model": "m"}) == [
        "--questions extend: no row has questions of its own, so every rubric is generated"
    ]


def test_the_cli_flags_become_job_options(tmp_path: Path) -> None:
    not_given = dict.fromkeys(
        ["validator", "candidate_model", "prompt_template", "template", "samples"]
    )
    options = job_options(**not_given, rubric_model="gemini-2.5-pro", questions="extend")
    assert options == {"rubric_model": "gemini-2.5-pro", "questions": "extend"}
