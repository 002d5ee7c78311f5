"""Gecko: rubric generation, validation (per question, or batched per row) and row scoring.

GeckoMetric holds the flow every Gecko metric shares; a RubricSpec and a ValidatorSpec say what
differs (GeckoImage here: yes/no questions; evalq.gecko_video: multiple choice). Pure domain
logic: it talks to a Judge and returns models; Celery and Redis live elsewhere. Errors whose
retry policy is "countdown" or "pause" are re-raised for the task to schedule; every other
judge failure becomes an unscored verdict with its reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from evalq.dataset import parse_questions, row_id_of, unknown_columns
from evalq.errors import DatasetError, InputError, JudgeError, UnparseableReply
from evalq.judge import Judge, JudgeReply, JudgeRequest, MediaPart
from evalq.media import parse_media
from evalq.metric import Plan, RowContext, Unit
from evalq.models import (
    Coverage,
    Question,
    RowInput,
    RowResult,
    Rubric,
    RubricReply,
    UnscoredReason,
    Verdict,
    VerdictReply,
)
from evalq.parsing import parse_rubric, parse_yes_no
from evalq.parsing_choice import split_batched_reply
from evalq.prompts import (
    _DATA_RULE,
    RUBRIC_TEMPLATE_VERSION,
    VALIDATOR_TEMPLATE_VERSION,
    delimit,
    rubric_prompt,
    validator_prompt,
)
from evalq.scoring import missing_keywords, question_results, score_questions

# ---- the batched validator (all of a row's questions in one call) ----------------------------

BATCH_VALIDATOR_TEMPLATE_VERSION = "gecko-image-batch-validator/1"

BATCH_VALIDATOR_PROMPT = """You check whether a generated image shows what each of several
questions asks about.

{data_rule}

Look at the attached image and answer every numbered question below with "yes" or "no",
judging only from what is visible. Treat each question on its own: an answer to one question
must not change your answer to another. Explain each answer briefly before giving it.

Questions:
{questions}

Reply with JSON only, one entry per question, in the order given:
{{"answers": [{{"question_id": 1, "explanation": "...", "answer": "yes" or "no"}}, ...]}}.
"""


class BatchVerdictItem(BaseModel):
    question_id: int
    explanation: str
    answer: Literal["yes", "no"]


class BatchVerdictReply(BaseModel):
    """Schema for the batched validator: one answer per numbered question."""

    answers: list[BatchVerdictItem]


def numbered(questions: Sequence[str]) -> str:
    """ "1. ...", one question a line; a line break inside a question can not fake a number."""
    return "\n".join(f"{i}. {_one_line(q)}" for i, q in enumerate(questions, start=1))


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def batch_validator_prompt(questions: Sequence[str]) -> str:
    return BATCH_VALIDATOR_PROMPT.format(
        data_rule=_DATA_RULE, questions=delimit("questions", numbered(questions))
    )


ParsedRubric = tuple[list[str], list[Question]]  # (the prompt's keywords, its questions)


@dataclass(frozen=True)
class RubricSpec:
    """What differs between Gecko rubrics (image yes/no, video multiple choice): the prompt,
    the reply schema and how a reply is read. Coverage and the one re-ask are shared."""

    template_version: str
    schema: type[BaseModel]
    prompt: Callable[[str, list[str] | None], str]  # (description, missing keywords) -> prompt
    parse: Callable[[str], ParsedRubric]


def _image_questions(reply: RubricReply) -> list[Question]:
    return [
        Question(
            question=q.question,
            expected=q.answer,
            tag=q.tag,
            keywords=q.keywords,
            justification=q.justification,
        )
        for q in reply.questions
    ]


def _parse_image_rubric(text: str) -> ParsedRubric:
    reply = parse_rubric(text)
    return reply.keywords, _image_questions(reply)


IMAGE_RUBRIC = RubricSpec(
    template_version=RUBRIC_TEMPLATE_VERSION,
    schema=RubricReply,
    prompt=rubric_prompt,
    parse=_parse_image_rubric,
)


def _ask_rubric(
    judge: Judge,
    prompt: str,
    missing: list[str] | None,
    replies: list[JudgeReply],
    spec: RubricSpec,
) -> ParsedRubric:
    request = JudgeRequest(prompt=spec.prompt(prompt, missing), schema=spec.schema, role="rubric")
    reply = judge.generate(request)
    replies.append(reply)
    try:
        return spec.parse(reply.text)
    except UnparseableReply as exc:
        if reply.finish_reason == "MAX_TOKENS":
            exc.message += " (the reply was cut off at MAX_TOKENS)"
        raise


def _question_key(question: Question) -> tuple[str, tuple[str, ...]]:
    """Same question, same choices: a re-ask repeating it adds nothing."""
    return question.question.strip().lower(), tuple(c.strip().lower() for c in question.choices)


def generate_rubric(
    judge: Judge, prompt: str, spec: RubricSpec = IMAGE_RUBRIC
) -> tuple[Rubric, list[JudgeReply]]:
    """Ask for keywords and questions; if some keywords go unasked, ask once more naming them."""
    replies: list[JudgeReply] = []
    keywords, questions = _ask_rubric(judge, prompt, None, replies, spec)
    missing = missing_keywords(keywords, questions)
    asked_again = False
    if missing:
        asked_again = True
        try:
            _, more = _ask_rubric(judge, prompt, missing, replies, spec)
        except JudgeError as exc:
            if exc.retry in ("countdown", "pause"):
                raise
        else:
            known = {_question_key(q) for q in questions}
            questions += [q for q in more if _question_key(q) not in known]
            missing = missing_keywords(keywords, questions)
    rubric = Rubric(
        questions=questions,
        coverage=Coverage(keywords=keywords, missing=missing, asked_again=asked_again),
        template_version=spec.template_version,
        judge_model=judge.model,
        simulated=any(r.simulated for r in replies),
    )
    return rubric, replies


def dataset_rubric(row: RowInput) -> Rubric:
    """The row's own questions, as the seeds allow questions to be written by hand."""
    return Rubric(
        questions=list(row.questions or []),
        coverage=Coverage(source="dataset"),
        template_version="dataset",
        judge_model="",
    )


def unscored(index: int, reason: UnscoredReason, detail: str, raw: str | None = None) -> Verdict:
    return Verdict(index=index, status="unscored", reason=reason, detail=detail, raw=raw)


@dataclass(frozen=True)
class ValidatorSpec:
    """How one metric asks its validator: a question alone, or all of a row's at once, and how
    an answer is read (yes/no for images, a choice letter for videos)."""

    request: Callable[[Question, MediaPart], JudgeRequest]
    batch_request: Callable[[Sequence[Question], MediaPart], JudgeRequest]
    parse: Callable[[str, Question, bool], str]  # (reply text, question, strict) -> answer
    template_version: str
    batch_template_version: str


def _parse_yes_no(text: str, question: Question, strict: bool) -> str:
    return parse_yes_no(text, strict=strict)


IMAGE_VALIDATOR = ValidatorSpec(
    request=lambda question, media: JudgeRequest(
        prompt=validator_prompt(question.question),
        media=(media,),
        schema=VerdictReply,
        role="validator",
    ),
    batch_request=lambda questions, media: JudgeRequest(
        prompt=batch_validator_prompt([q.question for q in questions]),
        media=(media,),
        schema=BatchVerdictReply,
        role="validator",
    ),
    parse=_parse_yes_no,
    template_version=VALIDATOR_TEMPLATE_VERSION,
    batch_template_version=BATCH_VALIDATOR_TEMPLATE_VERSION,
)


def _cut_off(detail: str, reply: JudgeReply) -> str:
    if reply.finish_reason == "MAX_TOKENS":
        return detail + " (the reply was cut off at MAX_TOKENS)"
    return detail


def validate_question(
    judge: Judge,
    index: int,
    question: Question,
    media: MediaPart,
    spec: ValidatorSpec = IMAGE_VALIDATOR,
) -> tuple[Verdict, JudgeReply | None]:
    """One validator call; rate limits and spent daily quotas propagate (the task reschedules
    or pauses), every other failure is an unscored verdict."""
    try:
        reply = judge.generate(spec.request(question, media))
    except JudgeError as exc:
        if exc.retry in ("countdown", "pause"):
            raise
        return unscored(index, exc.reason, exc.message, exc.raw), None
    try:
        answer = spec.parse(reply.text, question, reply.finish_reason == "MAX_TOKENS")
    except UnparseableReply as exc:
        verdict = unscored(index, "parse_error", _cut_off(exc.message, reply), exc.raw)
        return verdict.model_copy(update={"simulated": reply.simulated}), reply
    return Verdict(
        index=index, status="ok", answer=answer, raw=reply.text[:2000], simulated=reply.simulated
    ), reply


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
        if exc.retry in ("countdown", "pause"):
            raise
        return unscored(0, exc.reason, exc.message, exc.raw), None
    strict = reply.finish_reason == "MAX_TOKENS"
    try:
        pieces = split_batched_reply(reply.text, len(questions), strict=strict)
    except UnparseableReply as exc:
        verdict = unscored(0, "parse_error", _cut_off(exc.message, reply), exc.raw)
        return verdict.model_copy(update={"simulated": reply.simulated}), reply
    per_question: list[Verdict] = []
    for index, question in enumerate(questions):
        piece = pieces.get(index + 1)
        if piece is None:
            detail = _cut_off(f"the reply has no answer for question {index + 1}", reply)
            per_question.append(unscored(index, "parse_error", detail, reply.text[:2000]))
            continue
        try:
            answer = spec.parse(piece, question, False)
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
    """Per-question verdicts from a batched unit's verdict; a failed call unscores them all."""
    if unit is None:
        return {}
    if isinstance(unit.value, list) and unit.value:
        verdicts = [Verdict.model_validate(v) for v in unit.value]
        return {
            v.index: v.model_copy(update={"simulated": unit.simulated})
            for v in verdicts
            if 0 <= v.index < count
        }
    reason = unit.reason or "judge_error"
    detail = unit.detail or "the batched validator call failed"
    return {
        i: unscored(i, reason, detail, unit.raw).model_copy(update={"simulated": unit.simulated})
        for i in range(count)
    }


def score_row(row: RowInput, rubric: Rubric, verdicts: Mapping[int, Verdict]) -> RowResult:
    results = question_results(rubric.questions, verdicts)
    status, score, tag_scores = score_questions(results)
    reasons = {r.reason for r in results if r.reason}
    return RowResult(
        id=row.id,
        line=row.line,
        prompt=row.prompt,
        status=status,
        score=score,
        tag_scores=tag_scores,
        coverage=rubric.coverage.fraction,
        coverage_missing=rubric.coverage.missing,
        questions=results,
        reason=(sorted(reasons)[0] if status == "failed" and reasons else None),
        error=("no question could be scored" if status == "failed" else None),
        simulated=rubric.simulated or any(v.simulated for v in verdicts.values()),
        extra=row.extra,
    )


def failed_row(
    row_id: str, line: int, prompt: str, reason: UnscoredReason, error: str, simulated: bool = False
) -> RowResult:
    """A row that could not be evaluated at all (bad input, rubric generation failed)."""
    return RowResult(
        id=row_id,
        line=line,
        prompt=prompt,
        status="failed",
        score=None,
        reason=reason,
        error=error,
        simulated=simulated,
    )


def rubric_cache_key(prompt: str, model: str, template_version: str) -> str:
    digest = hashlib.sha256(json.dumps([prompt, model, template_version]).encode()).hexdigest()
    return f"evalq:rubric:{digest}"


ValidatorMode = Literal["per-question", "batched"]
VALIDATOR_MODES: tuple[str, ...] = ("per-question", "batched")


def validator_mode(options: Mapping[str, Any]) -> ValidatorMode:
    """The --validator option: one call per question (default) or one per row."""
    value = options.get("validator") or "per-question"
    if value not in VALIDATOR_MODES:
        raise DatasetError(
            f"unknown validator mode {value!r}; use one of: {', '.join(VALIDATOR_MODES)}"
        )
    return "batched" if value == "batched" else "per-question"


class GeckoMetric:
    """Gecko: a rubric of questions per prompt, then a validator looking at the media.

    Subclasses choose the media field, the rubric and the validator; the flow is shared. In
    per-question mode each question is one unit (one call); in batched mode the row is one unit
    whose single call answers every question, which the summary's judge_calls and tokens show.
    """

    name: str
    media_field: str
    required_columns: tuple[str, ...]
    known_columns: frozenset[str]
    rubric_spec: RubricSpec
    validator_spec: ValidatorSpec

    def row_questions(self, value: Any, row_id: str) -> list[Question] | None:
        """The row's own questions (the dataset's `questions` field), validated."""
        return parse_questions(value, row_id)

    def parse_row(
        self,
        number: int,
        record: dict[str, Any],
        base_dir: Path,
        options: Mapping[str, Any],
        warnings: list[str],
    ) -> RowInput:
        row_id = row_id_of(number, record)
        unknown = unknown_columns(
            number, row_id, record, self.known_columns, self.required_columns, warnings
        )
        prompt = record["prompt"]
        if not isinstance(prompt, str):
            raise InputError(row_id, "prompt", f"must be text, got {type(prompt).__name__}")
        media = parse_media(record.get(self.media_field), base_dir, row_id, self.media_field)
        return RowInput(
            id=row_id,
            line=number,
            prompt=prompt.strip(),
            media={self.media_field: media},
            questions=self.row_questions(record.get("questions"), row_id),
            extra={k: record[k] for k in unknown},
        )

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        validator_mode(options)
        return []

    def plan(self, ctx: RowContext) -> Plan:
        ctx.media(self.media_field)  # broken media fails the row before any judge call
        rubric = self._rubric(ctx)
        mode = validator_mode(ctx.options)
        if mode == "batched" and rubric.questions:
            units = [Unit(index=0, kind="batch", data={"questions": len(rubric.questions)})]
            version = self.validator_spec.batch_template_version
        else:
            units = [Unit(index=i) for i in range(len(rubric.questions))]
            version = self.validator_spec.template_version
        data = {"rubric": rubric.model_dump(), "validator": mode, "validator_template": version}
        return Plan(units=units, data=data, simulated=rubric.simulated)

    def _rubric(self, ctx: RowContext) -> Rubric:
        row = ctx.row
        if row.questions:
            return dataset_rubric(row)
        model = ctx.job.judge_model
        key = rubric_cache_key(row.prompt, model, self.rubric_spec.template_version)
        if ctx.job.use_cache and (cached := ctx.kv.get(key)):
            ctx.count("rubric_cache_hits", 1)
            return Rubric.model_validate_json(cached)
        rubric, _ = generate_rubric(ctx.judge(model), row.prompt, self.rubric_spec)
        ctx.kv.set(key, rubric.model_dump_json(), ctx.cache_ttl_s)
        return rubric

    def run_unit(self, ctx: RowContext, plan: Plan, unit: Unit) -> Verdict:
        rubric = Rubric.model_validate(plan.data["rubric"])
        try:
            media = ctx.media(self.media_field)
        except InputError as exc:
            return unscored(unit.index, "input_error", str(exc))
        except JudgeError as exc:  # uploading large media to the judge's file store failed
            if exc.retry in ("countdown", "pause"):
                raise
            return unscored(unit.index, exc.reason, f"sending the media: {exc.message}")
        judge = ctx.judge(ctx.job.judge_model)
        if unit.kind == "batch":
            verdict, _ = validate_batch(judge, rubric.questions, media, self.validator_spec)
        else:
            verdict, _ = validate_question(
                judge, unit.index, rubric.questions[unit.index], media, self.validator_spec
            )
        return verdict

    def aggregate(self, row: RowInput, plan: Plan, results: Mapping[int, Verdict]) -> RowResult:
        rubric = Rubric.model_validate(plan.data["rubric"])
        mode = plan.data.get("validator", "per-question")
        verdicts = (
            expand_batch(results.get(0), len(rubric.questions))
            if mode == "batched" and plan.units and plan.units[0].kind == "batch"
            else results
        )
        result = score_row(row, rubric, verdicts)
        result.details = {"validator": mode}
        return result

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        """How many questions were asked and scored, and which validator mode the rows used."""
        modes = Counter(str(r.details["validator"]) for r in rows if "validator" in r.details)
        questions = [q for r in rows for q in r.questions]
        return {
            "validator": dict(sorted(modes.items())),
            "questions": len(questions),
            "questions_scored": sum(q.result is not None for q in questions),
        }


class GeckoImage(GeckoMetric):
    """Gecko for text-to-image: yes/no questions per prompt, validated against the image."""

    name = "gecko-image"
    media_field = "image"
    required_columns: tuple[str, ...] = ("prompt", "image")
    known_columns = frozenset({"id", "prompt", "image", "questions"})
    rubric_spec = IMAGE_RUBRIC
    validator_spec = IMAGE_VALIDATOR


GECKO_IMAGE = GeckoImage()
