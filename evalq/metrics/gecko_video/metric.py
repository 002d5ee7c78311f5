"""Gecko for text-to-video: typed keywords, one multiple-choice question per keyword, validated
by a judge that watches the video.

Same flow and scoring as Gecko for images (evalq.metrics.gecko.metric): rubric per prompt with the coverage
check and one re-ask, a validator per question or per row (--validator batched), unscored
never 0. What differs is the question form: four labelled choices and a letter, because a
video's details (which way something moves, what happens first) are better asked as "which of
these" than as yes/no, and because wrong-but-plausible choices make a lazy "yes" impossible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.metric import Metric
from evalq.core.models import Question
from evalq.core.parsing_choice import label_choices
from evalq.core.row_questions import parse_questions
from evalq.metrics.gecko.metric import GeckoMetric
from evalq.metrics.gecko.plan import GeckoPlan, GeckoUnit
from evalq.metrics.gecko.rubric import RubricSpec
from evalq.metrics.gecko.validation import ValidatorSpec, validator_request
from evalq.metrics.gecko_video.parsing import (
    MAX_CHOICES,
    BatchChoiceReply,
    ChoiceVerdictReply,
    VideoRubricReply,
    parse_choice_answer,
    parse_video_rubric,
)
from evalq.metrics.gecko_video.prompts import (
    VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION,
    VIDEO_RUBRIC_TEMPLATE_VERSION,
    VIDEO_VALIDATOR_TEMPLATE_VERSION,
    video_batch_validator_prompt,
    video_rubric_prompt,
    video_validator_prompt,
)

VIDEO_RUBRIC = RubricSpec(
    template_version=VIDEO_RUBRIC_TEMPLATE_VERSION,
    schema=VideoRubricReply,
    prompt=video_rubric_prompt,
    parse=parse_video_rubric,
)


def _request(question: Question, media: MediaPart) -> JudgeRequest:
    prompt = video_validator_prompt(question.question, question.choices)
    return validator_request(prompt, media, ChoiceVerdictReply)


def _batch_request(questions: Sequence[Question], media: MediaPart) -> JudgeRequest:
    return validator_request(video_batch_validator_prompt(questions), media, BatchChoiceReply)


VIDEO_VALIDATOR = ValidatorSpec(
    request=_request,
    batch_request=_batch_request,
    parse=parse_choice_answer,
    template_versions=(VIDEO_VALIDATOR_TEMPLATE_VERSION, VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION),
)


def video_questions(value: Any, row_id: str) -> list[Question] | None:
    """A row's own questions: [{question, choices: ["a) ..", ...], answer: "b", tag}]; two to
    four choices, the answer a choice's letter or its text (made the letter)."""
    return parse_questions(value, row_id, choices_required=True, max_choices=MAX_CHOICES)


class GeckoVideo(GeckoMetric):
    """Gecko for text-to-video: multiple-choice questions per prompt, validated on the video."""

    name = "gecko-video"
    media_field = "video"
    rubric_spec = VIDEO_RUBRIC
    validator_spec = VIDEO_VALIDATOR
    yes_no = False  # multiple choice: --soft scores only yes/no

    def row_questions(self, value: Any, row_id: str) -> list[Question] | None:
        return video_questions(value, row_id)

    def placeholder_question(self, keyword: str) -> Question:
        choices = [f"{keyword}, as described", "something else", "both", "neither"]
        return Question(
            question=f"Which of these does the video show for {keyword}?",
            expected="a",
            tag="object",
            choices=label_choices(choices),
        )


GECKO_VIDEO: Metric[GeckoPlan, GeckoUnit] = GeckoVideo()
