"""Asking the validator: one question alone, or all of a row's at once (one verdict per question
in the unit's value), as a ValidatorSpec says; expand_batch reads a batched verdict back.

Rate limits and spent daily quotas propagate (the task reschedules or pauses); every other judge
failure is an unscored verdict with its reason. With --soft a question's call also asks for log
probabilities, and its verdict carries the probability of the expected answer (gecko.soft).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from evalq.core.errors import JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeReply, JudgeRequest, MediaPart
from evalq.core.models import (
    Question,
    Verdict,
)
from evalq.core.parsing_choice import split_batched_reply
from evalq.core.reply_schemas import VerdictReply
from evalq.core.verdicts import unscored
from evalq.metrics.gecko.choices import (
    MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION,
    ImageChoiceReply,
    MixedBatchReply,
    is_yes_no,
    mixed_batch_validator_prompt,
    parse_answer,
)
from evalq.metrics.gecko.parsing import BatchVerdictReply
from evalq.metrics.gecko.prompts import (
    BATCH_VALIDATOR_TEMPLATE_VERSION,
    CHOICE_VALIDATOR_TEMPLATE_VERSION,
    VALIDATOR_TEMPLATE_VERSION,
    batch_validator_prompt,
    choice_validator_prompt,
    validator_prompt,
)
from evalq.metrics.gecko.soft import SOFT_TOP_CANDIDATES, soft_answer


@dataclass(frozen=True)
class ValidatorSpec:
    """How one metric asks its validator: a question alone, or all of a row's at once, and how
    an answer is read (yes/no or a choice letter for images, a choice letter for videos)."""

    request: Callable[[Question, MediaPart], JudgeRequest]
    batch_request: Callable[[Sequence[Question], MediaPart], JudgeRequest]
    parse: Callable[[str, Question], str]  # (reply text, question) -> answer
    # The template versions of its yes/no questions (images) or of all its questions (videos):
    # (per question, batched), indexed by `batched` as choice_template_versions is.
    template_versions: tuple[str, str]
    # The template version(s) a row's questions are asked with, when they vary by question.
    versions: Callable[[Sequence[Question], bool], str] | None = None
    # Where questions with choices have templates of their own (images): (per question,
    # batched), so a job's setup names them even before any row asks one.
    choice_template_versions: tuple[str, str] | None = None

    def version(self, questions: Sequence[Question], batched: bool) -> str:
        if self.versions is not None:
            return self.versions(questions, batched)
        return self.template_versions[batched]

    def templates(self, batched: bool) -> dict[str, str]:
        """Every template this validator may ask with in one mode, by what it asks."""
        asked = {"validator": self.template_versions[batched]}
        if self.choice_template_versions is not None:
            asked["choice validator"] = self.choice_template_versions[batched]
        return asked


def validator_request(prompt: str, media: MediaPart, schema: type[BaseModel]) -> JudgeRequest:
    """A validator call: the prompt, the media it looks at, and the reply's schema."""
    return JudgeRequest(prompt=prompt, media=(media,), schema=schema, role="validator")


def _image_request(question: Question, media: MediaPart) -> JudgeRequest:
    if is_yes_no(question):
        return validator_request(validator_prompt(question.question), media, VerdictReply)
    prompt = choice_validator_prompt(question.question, question.choices)
    return validator_request(prompt, media, ImageChoiceReply)


def _image_batch_request(questions: Sequence[Question], media: MediaPart) -> JudgeRequest:
    if all(is_yes_no(q) for q in questions):
        prompt = batch_validator_prompt([q.question for q in questions])
        return validator_request(prompt, media, BatchVerdictReply)
    return validator_request(mixed_batch_validator_prompt(questions), media, MixedBatchReply)


def _image_versions(questions: Sequence[Question], batched: bool) -> str:
    choices = any(not is_yes_no(q) for q in questions)
    if batched:
        return (
            MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION if choices else BATCH_VALIDATOR_TEMPLATE_VERSION
        )
    if choices and all(not is_yes_no(q) for q in questions):
        return CHOICE_VALIDATOR_TEMPLATE_VERSION
    return VALIDATOR_TEMPLATE_VERSION + (f"+{CHOICE_VALIDATOR_TEMPLATE_VERSION}" if choices else "")


IMAGE_VALIDATOR = ValidatorSpec(
    request=_image_request,
    batch_request=_image_batch_request,
    parse=parse_answer,
    template_versions=(VALIDATOR_TEMPLATE_VERSION, BATCH_VALIDATOR_TEMPLATE_VERSION),
    versions=_image_versions,
    choice_template_versions=(
        CHOICE_VALIDATOR_TEMPLATE_VERSION,
        MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION,
    ),
)


def validate_question(
    judge: Judge,
    index: int,
    question: Question,
    media: MediaPart,
    spec: ValidatorSpec = IMAGE_VALIDATOR,
    *,
    soft: bool = False,
) -> tuple[Verdict, JudgeReply | None]:
    """One validator call; rate limits and spent daily quotas propagate (the task reschedules
    or pauses), every other failure is an unscored verdict. With ``soft`` the call asks for
    log probabilities and the verdict holds p(expected), or in ``detail`` why it has none."""
    request = spec.request(question, media)
    if soft:
        request = replace(request, logprobs=SOFT_TOP_CANDIDATES)
    try:
        reply = judge.generate(request)
    except JudgeError as exc:
        if must_propagate(exc):
            raise
        return unscored(index, exc.reason, exc.message, exc.raw), None
    try:
        answer = spec.parse(reply.text, question)
    except UnparseableReply as exc:
        verdict = unscored(index, "parse_error", exc.message, exc.raw)
        return verdict.model_copy(update={"simulated": reply.simulated}), reply
    verdict = Verdict(
        index=index, status="ok", answer=answer, raw=reply.text[:2000], simulated=reply.simulated
    )
    if soft:
        read = soft_answer(question.expected, reply.logprobs)
        verdict = verdict.model_copy(
            update={"probability": read.probability, "detail": read.detail}
        )
    return verdict, reply


def validate_batch(
    judge: Judge,
    questions: Sequence[Question],
    media: MediaPart,
    spec: ValidatorSpec = IMAGE_VALIDATOR,
) -> tuple[Verdict, JudgeReply | None]:
    """All of a row's questions in one call: one unit verdict whose ``value`` holds a verdict
    per question. A question the reply does not answer is unscored (parse_error) on its own."""
    try:
        reply = judge.generate(spec.batch_request(questions, media))
    except JudgeError as exc:
        if must_propagate(exc):
            raise
        return unscored(0, exc.reason, exc.message, exc.raw), None
    try:
        pieces = split_batched_reply(reply.text, len(questions))
    except UnparseableReply as exc:
        verdict = unscored(0, "parse_error", exc.message, exc.raw)
        return verdict.model_copy(update={"simulated": reply.simulated}), reply
    per_question: list[Verdict] = []
    for index, question in enumerate(questions):
        piece = pieces.get(index + 1)
        if piece is None:
            detail = f"the reply has no answer for question {index + 1}"
            per_question.append(unscored(index, "parse_error", detail, reply.text[:2000]))
            continue
        try:
            answer = spec.parse(piece, question)
        except UnparseableReply as exc:
            detail = f"question {index + 1}: {exc.message}"
            per_question.append(unscored(index, "parse_error", detail, piece[:2000]))
            continue
        per_question.append(Verdict(index=index, status="ok", answer=answer, raw=piece[:2000]))
    answered = any(v.status == "ok" for v in per_question)
    return Verdict(
        index=0,
        status="ok" if answered else "unscored",
        reason=None if answered else "parse_error",
        detail=None if answered else "no question could be read from the reply",
        value=[v.model_dump() for v in per_question],
        raw=reply.text[:2000],
        simulated=reply.simulated,
    ), reply


def expand_batch(unit: Verdict | None, count: int) -> dict[int, Verdict]:
    """Per-question verdicts from a batched unit's verdict; a failed call unscores them all.
    Each carries what the one reply was: simulated or not, and the version that wrote it."""
    if unit is None:
        return {}
    shared = {"simulated": unit.simulated, "model_version": unit.model_version}
    if isinstance(unit.value, list) and unit.value:
        verdicts = [Verdict.model_validate(v) for v in unit.value]
        return {v.index: v.model_copy(update=shared) for v in verdicts if 0 <= v.index < count}
    reason = unit.reason or "judge_error"
    detail = unit.detail or "the batched validator call failed"
    return {
        i: unscored(i, reason, detail, unit.raw).model_copy(update=shared) for i in range(count)
    }
