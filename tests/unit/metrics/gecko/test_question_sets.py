"""Gecko records the fingerprint of the questions it scored a row on, and answers for the
question sets its plans hold (evalq.core.metric.QuestionSetMetric)."""

from __future__ import annotations

from evalq.core.metric import QuestionSetMetric, get_metric
from evalq.core.models import Coverage, Question, RowInput, Rubric
from evalq.core.question_sets import question_set_fingerprint
from evalq.core.row_questions import question_items
from evalq.metrics.gecko.plan import GeckoPlan
from evalq.metrics.gecko.question_sets import metric_for_columns
from evalq.metrics.gecko.scoring import score_row
from evalq.metrics.gecko_video.metric import video_questions

SET = [
    Question(question="Is there a cat?", expected="yes", tag="object"),
    Question(
        question="What moves?",
        expected="b",
        tag="action",
        choices=["a) walks", "b) runs", "c) sits", "d) flies"],
    ),
]
RUBRIC = Rubric(questions=SET, coverage=Coverage(), template_version="t", judge_model="m")


def test_gecko_records_the_fingerprint_of_the_rubric_it_scored_on() -> None:
    row = RowInput(id="r", line=1, prompt="a cat")
    result = score_row(row, RUBRIC, {})
    assert result.status == "failed"  # nothing answered: the set is recorded all the same
    assert result.question_set == question_set_fingerprint(SET)


def test_gecko_metrics_say_the_questions_of_a_plan_and_others_have_none() -> None:
    plan = GeckoPlan(
        units=[], rubric=RUBRIC, validator="per-question", validator_template="v", judges=["m"]
    )
    for name in ("gecko-image", "gecko-video"):
        metric = get_metric(name)
        assert isinstance(metric, QuestionSetMetric)
        assert metric.plan_questions(plan) == SET
    assert not isinstance(get_metric("pointwise"), QuestionSetMetric)
    image, video = get_metric("gecko-image"), get_metric("gecko-video")
    assert isinstance(image, QuestionSetMetric) and isinstance(video, QuestionSetMetric)
    assert image.rubric_key("p", "m") != video.rubric_key("p", "m")  # their templates differ
    assert image.rubric_key("p", "m") != image.rubric_key("p", "other")


def test_a_video_question_written_back_reads_the_same() -> None:
    read = video_questions(question_items(SET[1:]), "r")
    assert read is not None
    assert question_set_fingerprint(read) == question_set_fingerprint(SET[1:])


def test_the_dataset_columns_choose_the_gecko_metric() -> None:
    assert metric_for_columns({"prompt", "video"}) == "gecko-video"
    assert metric_for_columns({"prompt", "image"}) == "gecko-image"
    assert metric_for_columns({"prompt"}) == "gecko-image"
    assert metric_for_columns({"prompt", "response"}) == "rubric"
