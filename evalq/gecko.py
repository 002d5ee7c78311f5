"""Gecko for images: rubric generation, per-question validation and row scoring.

Pure domain logic: it talks to a Judge and returns models; Celery and Redis live elsewhere.
Errors whose retry policy is "countdown" (rate limits) are re-raised for the task to schedule;
every other judge failure becomes an unscored verdict with its reason.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalq.dataset import parse_questions, row_id_of, unknown_columns
from evalq.errors import InputError, JudgeError, UnparseableReply
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
from evalq.prompts import RUBRIC_TEMPLATE_VERSION, rubric_prompt, validator_prompt
from evalq.scoring import missing_keywords, question_results, score_questions


def _questions_from(reply: RubricReply) -> list[Question]:
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


def _ask_rubric(
    judge: Judge, prompt: str, missing: list[str] | None, replies: list[JudgeReply]
) -> RubricReply:
    reply = judge.generate(JudgeRequest(prompt=rubric_prompt(prompt, missing), schema=RubricReply))
    replies.append(reply)
    try:
        return parse_rubric(reply.text)
    except UnparseableReply as exc:
        if reply.finish_reason == "MAX_TOKENS":
            exc.message += " (the reply was cut off at MAX_TOKENS)"
        raise


def generate_rubric(judge: Judge, prompt: str) -> tuple[Rubric, list[JudgeReply]]:
    """Ask for keywords and questions; if some keywords go unasked, ask once more naming them."""
    replies: list[JudgeReply] = []
    first = _ask_rubric(judge, prompt, None, replies)
    questions = _questions_from(first)
    missing = missing_keywords(first.keywords, questions)
    asked_again = False
    if missing:
        asked_again = True
        try:
            second = _ask_rubric(judge, prompt, missing, replies)
        except JudgeError as exc:
            if exc.retry in ("countdown", "pause"):
                raise
        else:
            known = {q.question.strip().lower() for q in questions}
            questions += [
                q for q in _questions_from(second) if q.question.strip().lower() not in known
            ]
            missing = missing_keywords(first.keywords, questions)
    rubric = Rubric(
        questions=questions,
        coverage=Coverage(keywords=first.keywords, missing=missing, asked_again=asked_again),
        template_version=RUBRIC_TEMPLATE_VERSION,
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


def validate_question(
    judge: Judge, index: int, question: Question, media: MediaPart
) -> tuple[Verdict, JudgeReply | None]:
    """One validator call; rate limits and spent daily quotas propagate (the task reschedules
    or pauses), every other failure is an unscored verdict."""
    request = JudgeRequest(
        prompt=validator_prompt(question.question), media=(media,), schema=VerdictReply
    )
    try:
        reply = judge.generate(request)
    except JudgeError as exc:
        if exc.retry in ("countdown", "pause"):
            raise
        return unscored(index, exc.reason, exc.message, exc.raw), None
    try:
        answer = parse_yes_no(reply.text, strict=reply.finish_reason == "MAX_TOKENS")
    except UnparseableReply as exc:
        detail = exc.message
        if reply.finish_reason == "MAX_TOKENS":
            detail += " (the reply was cut off at MAX_TOKENS)"
        verdict = unscored(index, "parse_error", detail, exc.raw)
        return verdict.model_copy(update={"simulated": reply.simulated}), reply
    return Verdict(
        index=index, status="ok", answer=answer, raw=reply.text[:2000], simulated=reply.simulated
    ), reply


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


RUBRIC_TTL_S = 30 * 24 * 3600


class GeckoImage:
    """Gecko for text-to-image: rubric per prompt, one validator call per question."""

    name = "gecko-image"
    media_field = "image"
    required_columns: tuple[str, ...] = ("prompt", "image")
    known_columns = frozenset({"id", "prompt", "image", "questions"})

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
            questions=parse_questions(record.get("questions"), row_id),
            extra={k: record[k] for k in unknown},
        )

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        return []

    def plan(self, ctx: RowContext) -> Plan:
        ctx.media(self.media_field)  # a broken image fails the row before any judge call
        rubric = self._rubric(ctx)
        units = [Unit(index=i) for i in range(len(rubric.questions))]
        return Plan(units=units, data={"rubric": rubric.model_dump()}, simulated=rubric.simulated)

    def _rubric(self, ctx: RowContext) -> Rubric:
        row = ctx.row
        if row.questions:
            return dataset_rubric(row)
        model = ctx.job.judge_model
        key = rubric_cache_key(row.prompt, model, RUBRIC_TEMPLATE_VERSION)
        if ctx.job.use_cache and (cached := ctx.kv.get(key)):
            ctx.count("rubric_cache_hits", 1)
            return Rubric.model_validate_json(cached)
        rubric, _ = generate_rubric(ctx.judge(model), row.prompt)
        ctx.kv.set(key, rubric.model_dump_json(), RUBRIC_TTL_S)
        return rubric

    def run_unit(self, ctx: RowContext, plan: Plan, unit: Unit) -> Verdict:
        rubric = Rubric.model_validate(plan.data["rubric"])
        try:
            media = ctx.media(self.media_field)
        except InputError as exc:
            return unscored(unit.index, "input_error", str(exc))
        verdict, _ = validate_question(
            ctx.judge(ctx.job.judge_model), unit.index, rubric.questions[unit.index], media
        )
        return verdict

    def aggregate(self, row: RowInput, plan: Plan, results: Mapping[int, Verdict]) -> RowResult:
        return score_row(row, Rubric.model_validate(plan.data["rubric"]), results)

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        return {}


GECKO_IMAGE = GeckoImage()
