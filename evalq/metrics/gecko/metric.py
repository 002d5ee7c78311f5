"""Gecko: rubric generation, validation (per question, or batched per row) and row scoring.

GeckoMetric holds the flow every Gecko metric shares; a RubricSpec and a ValidatorSpec say what
differs (GeckoImage here: yes/no questions; evalq.metrics.gecko_video.metric: multiple choice). Pure domain
logic: it talks to a Judge and returns models; Celery and Redis live elsewhere. Errors whose
retry policy is "countdown" or "pause" are re-raised for the task to schedule; every other
judge failure becomes an unscored verdict with its reason.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from evalq.core.dataset import parse_questions, row_id_of, unknown_columns
from evalq.core.dry_run import DryEnv, expected_questions
from evalq.core.errors import DatasetError, InputError, JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeReply, JudgeRequest, MediaPart
from evalq.core.kv import ClaimingKeyValue
from evalq.core.media import parse_media
from evalq.core.metric import Plan, RowContext, Unit
from evalq.core.models import (
    Coverage,
    Question,
    RowInput,
    RowResult,
    Rubric,
    RubricReply,
    Verdict,
    VerdictReply,
)
from evalq.core.parsing_choice import split_batched_reply
from evalq.core.scoring import (
    checked_keywords,
    covers,
    missing_keywords,
    question_results,
    repeated_keywords,
    score_questions,
)
from evalq.core.shared_work import written_once
from evalq.core.verdicts import unscored
from evalq.metrics.gecko.choices import (
    MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION,
    ImageChoiceReply,
    MixedBatchReply,
    is_yes_no,
    mixed_batch_validator_prompt,
    parse_answer,
)
from evalq.metrics.gecko.judges import (
    combine,
    judged_results,
    rubric_model,
    summarize_judges,
)
from evalq.metrics.gecko.parsing import BatchVerdictReply, ParsedRubric, parse_image_rubric
from evalq.metrics.gecko.prompts import (
    BATCH_VALIDATOR_TEMPLATE_VERSION,
    CHOICE_VALIDATOR_TEMPLATE_VERSION,
    RUBRIC_TEMPLATE_VERSION,
    VALIDATOR_TEMPLATE_VERSION,
    RubricGap,
    batch_validator_prompt,
    choice_validator_prompt,
    rubric_prompt,
    validator_prompt,
)


@dataclass(frozen=True)
class RubricSpec:
    """What differs between Gecko rubrics (image yes/no, video multiple choice): the prompt,
    the reply schema and how a reply is read. Coverage and the one re-ask are shared."""

    template_version: str
    schema: type[BaseModel]
    prompt: Callable[[str, RubricGap | None], str]  # (description, the gap to fill) -> prompt
    parse: Callable[[str], ParsedRubric]


IMAGE_RUBRIC = RubricSpec(
    template_version=RUBRIC_TEMPLATE_VERSION,
    schema=RubricReply,
    prompt=rubric_prompt,
    parse=parse_image_rubric,
)


def _ask_rubric(
    judge: Judge,
    prompt: str,
    gap: RubricGap | None,
    replies: list[JudgeReply],
    spec: RubricSpec,
) -> ParsedRubric:
    request = JudgeRequest(prompt=spec.prompt(prompt, gap), schema=spec.schema, role="rubric")
    reply = judge.generate(request)
    replies.append(reply)
    return _bounded(spec.parse(reply.text), reply.text)


# A rubric is stored in the row's plan and cached for every row with the same prompt, and each
# question costs a judge call per row: a reply beyond these bounds is no rubric (parse_error).
MAX_RUBRIC_QUESTIONS = 100
MAX_RUBRIC_KEYWORDS = 200
MAX_RUBRIC_CHARS = 100_000  # all its keywords, questions, answers, choices and justifications


def _bounded(parsed: ParsedRubric, text: str) -> ParsedRubric:
    keywords, questions = parsed
    chars = sum(map(len, keywords)) + sum(
        len(q.question)
        + len(q.expected)
        + len(q.justification)
        + sum(map(len, q.choices))
        + sum(map(len, q.keywords))
        for q in questions
    )
    for what, count, most in (
        ("questions", len(questions), MAX_RUBRIC_QUESTIONS),
        ("keywords", len(keywords), MAX_RUBRIC_KEYWORDS),
        ("characters of text", chars, MAX_RUBRIC_CHARS),
    ):
        if count > most:
            raise UnparseableReply(
                f"rubric reply has {count:,} {what}; at most {most:,}", raw=text[:4000]
            )
    return parsed


def _question_key(question: Question) -> tuple[str, tuple[str, ...]]:
    """Same question, same choices: a re-ask repeating it adds nothing."""
    return question.question.strip().lower(), tuple(c.strip().lower() for c in question.choices)


def gap_questions(
    keywords: Sequence[str], asked: Sequence[Question], missing: Sequence[str], more: list[Question]
) -> list[Question]:
    """From a re-ask's reply, the questions that cover a keyword still missing: one per missing
    keyword at most (a question checking two missing keywords covers both), none that repeats
    a question already asked or checks only keywords that already have one."""
    known = {_question_key(q) for q in asked}
    still = list(missing)
    added: list[Question] = []
    for question in more:
        if _question_key(question) in known:
            continue
        covered = [k for k in still if covers(question, k)]
        if not covered:
            continue
        added.append(question.model_copy(update={"keywords": checked_keywords(keywords, question)}))
        known.add(_question_key(question))
        still = [k for k in still if k not in covered]
    return added


def generate_rubric(
    judge: Judge, prompt: str, spec: RubricSpec = IMAGE_RUBRIC
) -> tuple[Rubric, list[JudgeReply]]:
    """Ask for keywords and one question per keyword; if some keywords go unasked, ask once
    more for those only, showing the questions already asked, and merge what fills the gaps."""
    replies: list[JudgeReply] = []
    keywords, questions = _ask_rubric(judge, prompt, None, replies, spec)
    questions = [
        q.model_copy(update={"keywords": checked_keywords(keywords, q)}) for q in questions
    ]
    missing = missing_keywords(keywords, questions)
    asked_again = False
    if missing:
        asked_again = True
        gap = RubricGap(asked=questions, missing=missing)
        try:
            _, more = _ask_rubric(judge, prompt, gap, replies, spec)
        except JudgeError as exc:
            if must_propagate(exc):
                raise
        else:
            new = gap_questions(keywords, questions, missing, more)
            questions += new[: max(0, MAX_RUBRIC_QUESTIONS - len(questions))]
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
        questions=[q.model_copy(update={"source": "dataset"}) for q in row.questions or []],
        coverage=Coverage(source="dataset"),
        template_version="dataset",
        judge_model="",
    )


@dataclass(frozen=True)
class ValidatorSpec:
    """How one metric asks its validator: a question alone, or all of a row's at once, and how
    an answer is read (yes/no or a choice letter for images, a choice letter for videos)."""

    request: Callable[[Question, MediaPart], JudgeRequest]
    batch_request: Callable[[Sequence[Question], MediaPart], JudgeRequest]
    parse: Callable[[str, Question], str]  # (reply text, question) -> answer
    template_version: str
    batch_template_version: str
    # The template version(s) a row's questions are asked with, when they vary by question.
    versions: Callable[[Sequence[Question], bool], str] | None = None

    def version(self, questions: Sequence[Question], batched: bool) -> str:
        if self.versions is not None:
            return self.versions(questions, batched)
        return self.batch_template_version if batched else self.template_version


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
    template_version=VALIDATOR_TEMPLATE_VERSION,
    batch_template_version=BATCH_VALIDATOR_TEMPLATE_VERSION,
    versions=_image_versions,
)


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
        if must_propagate(exc):
            raise
        return unscored(index, exc.reason, exc.message, exc.raw), None
    try:
        answer = spec.parse(reply.text, question)
    except UnparseableReply as exc:
        verdict = unscored(index, "parse_error", exc.message, exc.raw)
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


def score_row(
    row: RowInput,
    rubric: Rubric,
    verdicts: Mapping[int, Verdict],
    by_judge: Mapping[str, Mapping[int, Verdict]] | None = None,
) -> RowResult:
    """The row's score from its questions' verdicts; with ``by_judge`` (several validator
    judges, each with its verdicts) the mean over the judges, and each judge's own figures in
    details["judges"]."""
    details: dict[str, Any] = {}
    if by_judge is not None and len(by_judge) > 1:
        status, score, tag_scores, results, entries = combine(
            {m: judged_results(rubric.questions, v, m) for m, v in by_judge.items()}
        )
        details["judges"] = entries
        every = [v for judged in by_judge.values() for v in judged.values()]
    else:
        if by_judge:
            ((model, verdicts),) = by_judge.items()
            results = judged_results(rubric.questions, verdicts, model)
        else:
            results = question_results(rubric.questions, verdicts)
        status, score, tag_scores = score_questions(results)
        every = list(verdicts.values())
    if repeated := repeated_keywords(rubric.questions):
        details["keywords_with_several_questions"] = repeated
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
        simulated=rubric.simulated or any(v.simulated for v in every),
        details=details,
        extra=row.extra,
    )


def _read_rubric(stored: str) -> Rubric:
    return Rubric.model_validate_json(stored)


def rubric_cache_id(prompt: str, model: str, template_version: str) -> str:
    """A generated rubric's name in the shared cache: what it was made from, hashed. Where it
    lives (a Redis key on workers) is the runtime's business."""
    return hashlib.sha256(json.dumps([prompt, model, template_version]).encode()).hexdigest()


# Answers' lengths a dry run assumes (evalq's own figures, from the replies' JSON shapes): a
# rubric is its keywords plus one question with keywords and justification each; a validator
# answer is a short explanation and the answer.
RUBRIC_ANSWER_TOKENS = 40
RUBRIC_TOKENS_PER_QUESTION = 60
VALIDATOR_ANSWER_TOKENS = 50
BATCH_TOKENS_PER_QUESTION = 45

ValidatorMode = Literal["per-question", "batched"]
VALIDATOR_MODES: tuple[str, ...] = ("per-question", "batched")
QuestionsMode = Literal["replace", "extend"]
QUESTIONS_MODES: tuple[str, ...] = ("replace", "extend")


def validator_mode(options: Mapping[str, Any]) -> ValidatorMode:
    """The --validator option: one call per question (default) or one per row."""
    value = options.get("validator") or "per-question"
    if value not in VALIDATOR_MODES:
        raise DatasetError(
            f"unknown validator mode {value!r}; use one of: {', '.join(VALIDATOR_MODES)}"
        )
    return "batched" if value == "batched" else "per-question"


def questions_mode(options: Mapping[str, Any]) -> QuestionsMode:
    """The --questions option: a row's own questions replace the generated rubric (default)
    or are added to it."""
    value = options.get("questions") or "replace"
    if value not in QUESTIONS_MODES:
        raise DatasetError(
            f"unknown questions mode {value!r} (option questions); use one of: "
            f"{', '.join(QUESTIONS_MODES)}"
        )
    return "extend" if value == "extend" else "replace"


def extend_rubric(rubric: Rubric, own: Sequence[Question]) -> Rubric:
    """A generated rubric with the row's own questions after its own; the keywords they
    check count towards coverage."""
    questions = rubric.questions + [q.model_copy(update={"source": "dataset"}) for q in own]
    coverage = rubric.coverage.model_copy(
        update={"missing": missing_keywords(rubric.coverage.missing, questions)}
    )
    return rubric.model_copy(update={"questions": questions, "coverage": coverage})


class QuestionUnit(Unit):
    """One validator judge on one question of the rubric."""

    kind: Literal["question"] = "question"
    judge_model: str
    question: int  # its index in the rubric


class BatchUnit(Unit):
    """One validator judge on all of the row's questions, in one call."""

    kind: Literal["batch"] = "batch"
    judge_model: str
    questions: int  # how many


GeckoUnit = Annotated[QuestionUnit | BatchUnit, Field(discriminator="kind")]


class GeckoPlan(Plan[GeckoUnit]):
    """A Gecko row's plan: its rubric (written once, whatever the judges) and who validates."""

    rubric: Rubric
    validator: ValidatorMode
    validator_template: str
    judges: list[str]
    rubric_model: str | None = None  # None: the row's own questions, no rubric written


class GeckoMetric:
    """Gecko: a rubric of questions per prompt, then a validator looking at the media.

    Subclasses choose the media field, the rubric and the validator; the flow is shared. In
    per-question mode each question is one unit (one call) per validator judge; in batched mode
    each judge answers all of the row's questions in one unit, which the summary's judge_calls
    and tokens show. The rubric is written once, by the rubric model, whatever the judges.
    """

    name: str
    media_field: str
    required_columns: tuple[str, ...]
    known_columns: frozenset[str]
    rubric_spec: RubricSpec
    validator_spec: ValidatorSpec
    plan_model = GeckoPlan

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
        mode = questions_mode(options)
        named = options.get("rubric_model")
        if named is not None and (not isinstance(named, str) or not named.strip()):
            raise DatasetError(f"option rubric_model must name a model, got {named!r}")
        if mode == "extend" and not any(row.questions for row in rows):
            return [
                "--questions extend: no row has questions of its own, so every rubric is generated"
            ]
        return []

    def plan(self, ctx: RowContext) -> GeckoPlan:
        ctx.media(self.media_field)  # broken media fails the row before any judge call
        rubric = self._rubric(ctx)
        mode = validator_mode(ctx.options)
        judges = ctx.job.judges
        count = len(rubric.questions)
        batched = mode == "batched" and count > 0
        units: list[QuestionUnit | BatchUnit]
        if batched:
            units = [
                BatchUnit(index=j, questions=count, judge_model=model)
                for j, model in enumerate(judges)
            ]
        else:
            units = [
                QuestionUnit(index=j * count + i, judge_model=model, question=i)
                for j, model in enumerate(judges)
                for i in range(count)
            ]
        return GeckoPlan(
            units=units,
            rubric=rubric,
            validator=mode,
            validator_template=self.validator_spec.version(rubric.questions, batched),
            judges=judges,
            rubric_model=rubric.judge_model or None,
            simulated=rubric.simulated,
        )

    def _rubric(self, ctx: RowContext) -> Rubric:
        row = ctx.row
        extend = questions_mode(ctx.options) == "extend"
        if row.questions and not extend:
            return dataset_rubric(row)
        model = rubric_model(ctx.job)
        key = rubric_cache_id(row.prompt, model, self.rubric_spec.template_version)
        if ctx.job.use_cache and (cached := ctx.kv.get(key)):
            ctx.count("rubric_cache_hits", 1)
            rubric = Rubric.model_validate_json(cached)
        elif ctx.job.use_cache and isinstance(ctx.kv, ClaimingKeyValue):
            rubric, wrote = written_once(
                ctx.kv, key, ctx.cache_ttl_s, lambda: self._write_rubric(ctx), _read_rubric
            )
            if not wrote:
                ctx.count("rubric_cache_hits", 1)
        else:
            rubric = self._write_rubric(ctx)
            ctx.kv.set(key, rubric.model_dump_json(), ctx.cache_ttl_s)
        return extend_rubric(rubric, row.questions) if row.questions else rubric

    def _write_rubric(self, ctx: RowContext) -> Rubric:
        model = rubric_model(ctx.job)
        return generate_rubric(ctx.judge(model), ctx.row.prompt, self.rubric_spec)[0]

    def placeholder_question(self, keyword: str) -> Question:
        """A question of the kind a rubric still to write would hold, for a dry run's sizes."""
        return Question(question=f"Does the image show {keyword}?", expected="yes", tag="object")

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The row's rubric call (unless given, cached, or written for an earlier row with the
        same prompt) and its validator calls, per judge: one per question or one per row."""
        media = env.media(row, self.media_field)
        extend = questions_mode(env.options) == "extend"
        if row.questions and not extend:
            questions = list(row.questions)
            env.count("rubrics_given")
        else:
            model = rubric_model(env.job)
            key = rubric_cache_id(row.prompt, model, self.rubric_spec.template_version)
            cached = env.cached(key)
            if cached is not None:
                questions = Rubric.model_validate_json(cached).questions
                env.count("rubrics_cached")
            else:
                keywords = expected_questions(row.prompt)
                questions = [self.placeholder_question(k) for k in keywords]
                env.count("questions_estimated", len(questions))
                if env.first(key):
                    request = JudgeRequest(
                        prompt=self.rubric_spec.prompt(row.prompt, None),
                        schema=self.rubric_spec.schema,
                        role="rubric",
                    )
                    answer = RUBRIC_ANSWER_TOKENS + RUBRIC_TOKENS_PER_QUESTION * len(questions)
                    env.call(request, model, answer)
                    env.count("rubrics_to_write")
                else:
                    env.count("rubrics_shared")  # written once for an earlier row's prompt
            questions += list(row.questions or [])
        env.count("questions_expected", len(questions))
        if not questions:
            return
        for model in env.job.judges:
            if validator_mode(env.options) == "batched":
                answer = BATCH_TOKENS_PER_QUESTION * len(questions)
                env.call(self.validator_spec.batch_request(questions, media), model, answer)
                continue
            for question in questions:
                request = self.validator_spec.request(question, media)
                env.call(request, model, VALIDATOR_ANSWER_TOKENS)

    def run_unit(self, ctx: RowContext, plan: GeckoPlan, unit: QuestionUnit | BatchUnit) -> Verdict:
        rubric, model = plan.rubric, unit.judge_model
        try:
            media = ctx.media(self.media_field)
        except InputError as exc:
            verdict = unscored(unit.index, "input_error", str(exc))
            return verdict.model_copy(update={"judge_model": model})
        except JudgeError as exc:  # uploading large media to the judge's file store failed
            if must_propagate(exc):
                raise
            verdict = unscored(unit.index, exc.reason, f"sending the media: {exc.message}")
            return verdict.model_copy(update={"judge_model": model})
        judge = ctx.judge(model)
        if isinstance(unit, BatchUnit):
            verdict, _ = validate_batch(judge, rubric.questions, media, self.validator_spec)
        else:
            question = rubric.questions[unit.question]
            verdict, _ = validate_question(judge, unit.index, question, media, self.validator_spec)
        return verdict.model_copy(update={"judge_model": model})

    def aggregate(
        self, row: RowInput, plan: GeckoPlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        by_judge = verdicts_by_judge(plan, results, len(plan.rubric.questions))
        result = score_row(row, plan.rubric, {}, by_judge)
        result.details = {"validator": plan.validator, **result.details}
        if "judges" in result.details:
            result.details["rubric_model"] = plan.rubric_model
        return result

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        """How many questions were asked and scored, which validator mode the rows used, and
        with several judges each judge's means and how far they agree."""
        modes = Counter(str(r.details["validator"]) for r in rows if "validator" in r.details)
        questions = [q for r in rows for q in r.questions]
        summary: dict[str, Any] = {
            "validator": dict(sorted(modes.items())),
            "questions": len(questions),
            "questions_scored": sum(q.result is not None for q in questions),
        }
        judged = [r.details["judges"] for r in rows if isinstance(r.details.get("judges"), dict)]
        if judged:
            summary.update(summarize_judges(judged))
        return summary


def verdicts_by_judge(
    plan: GeckoPlan, results: Mapping[int, Verdict], count: int
) -> dict[str, dict[int, Verdict]]:
    """Each judge's verdicts by question index, from per-question or batched units."""
    out: dict[str, dict[int, Verdict]] = {model: {} for model in plan.judges}
    for unit in plan.units:
        bucket = out.setdefault(unit.judge_model, {})
        if isinstance(unit, BatchUnit):
            bucket.update(expand_batch(results.get(unit.index), count))
        elif (verdict := results.get(unit.index)) is not None:
            bucket[unit.question] = verdict.model_copy(update={"index": unit.question})
    return out


class GeckoImage(GeckoMetric):
    """Gecko for text-to-image: yes/no questions per prompt, validated against the image."""

    name = "gecko-image"
    media_field = "image"
    required_columns: tuple[str, ...] = ("prompt", "image")
    known_columns = frozenset({"id", "prompt", "image", "questions"})
    rubric_spec = IMAGE_RUBRIC
    validator_spec = IMAGE_VALIDATOR


GECKO_IMAGE = GeckoImage()
