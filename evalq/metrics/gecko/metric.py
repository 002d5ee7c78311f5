"""Gecko: the plugin that wires a rubric per prompt, its validators and the row's score.

GeckoMetric holds the flow every Gecko metric shares; a RubricSpec and a ValidatorSpec say what
differs (GeckoImage here: yes/no questions; evalq.metrics.gecko_video.metric: multiple choice).
The pieces live beside it: rubric (writing, the gap re-ask, the cache id), validation (per
question or batched), scoring (score_row), plan (units and plan), modes (the options), dry (a
dry run's calls). Pure domain logic: it talks to a Judge and returns models; Celery and Redis
live elsewhere. Errors whose retry policy is "countdown" or "pause" are re-raised for the task
to schedule; every other judge failure becomes an unscored verdict with its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from statistics import fmean
from typing import Any

from evalq.core.dry_run import DryEnv
from evalq.core.errors import DatasetError, InputError, JudgeError, must_propagate
from evalq.core.judge import Judge, JudgeReply, MediaPart
from evalq.core.label_reading import HumanLabels
from evalq.core.media import MediaPlace
from evalq.core.metric import Judged, Metric, Options, Record, RowContext
from evalq.core.models import (
    Question,
    RowInput,
    RowResult,
    Rubric,
    Verdict,
)
from evalq.core.repeats import budget_of
from evalq.core.row_columns import read_columns
from evalq.core.row_questions import parse_questions
from evalq.core.row_value import QUESTION_SHARE
from evalq.core.row_view import JudgedInput, ViewParts, questions_view
from evalq.core.shared_cache import ClaimingKeyValue, written_once
from evalq.core.verdicts import unscored
from evalq.metrics.gecko.dry import dry_questions, dry_validations
from evalq.metrics.gecko.judges import (
    rubric_model,
    summarize_judges,
)
from evalq.metrics.gecko.modes import (
    QUESTIONS_MODES,
    VALIDATOR_MODES,
    QuestionsMode,
    ValidatorMode,
    questions_mode,
    soft_mode,
    validator_mode,
)
from evalq.metrics.gecko.plan import BatchUnit, GeckoPlan, GeckoUnit, QuestionUnit
from evalq.metrics.gecko.repeats import (
    question_repeats,
    repeated,
    repeated_question,
    samples_budget,
)
from evalq.metrics.gecko.rubric import (
    IMAGE_RUBRIC,
    MAX_RUBRIC_CHARS,
    MAX_RUBRIC_KEYWORDS,
    MAX_RUBRIC_QUESTIONS,
    RubricSpec,
    dataset_rubric,
    extend_rubric,
    gap_questions,
    generate_rubric,
    read_rubric,
    rubric_cache_id,
)
from evalq.metrics.gecko.scoring import score_row, verdicts_by_judge
from evalq.metrics.gecko.soft_models import refusal_message as soft_refusal
from evalq.metrics.gecko.validation import (
    IMAGE_VALIDATOR,
    ValidatorSpec,
    expand_batch,
    validate_batch,
    validate_question,
    validator_request,
)

__all__ = [
    "GECKO_IMAGE",
    "IMAGE_RUBRIC",
    "IMAGE_VALIDATOR",
    "MAX_RUBRIC_CHARS",
    "MAX_RUBRIC_KEYWORDS",
    "MAX_RUBRIC_QUESTIONS",
    "QUESTIONS_MODES",
    "VALIDATOR_MODES",
    "BatchUnit",
    "GeckoImage",
    "GeckoMetric",
    "GeckoPlan",
    "GeckoUnit",
    "QuestionUnit",
    "QuestionsMode",
    "RubricSpec",
    "ValidatorMode",
    "ValidatorSpec",
    "dataset_rubric",
    "expand_batch",
    "extend_rubric",
    "gap_questions",
    "generate_rubric",
    "questions_mode",
    "rubric_cache_id",
    "score_row",
    "validate_batch",
    "validate_question",
    "validator_mode",
    "validator_request",
    "verdicts_by_judge",
]


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
    judged_units = "questions"  # each unit answers a rubric question (or a row's, batched)
    judge_roles = ("rubric", "validator")
    own_candidates = False
    shows_media = True  # a report shows the image or video
    yes_no = True  # its questions are yes/no, which --soft can score
    compared_on = QUESTION_SHARE  # paired question by question on the questions both asked
    human_labels = HumanLabels()  # --human: a number or yes/no per row; questions[].human too

    def __init__(self) -> None:
        # Every Gecko dataset is a prompt and its media, with an optional id and own questions.
        self.required_columns = ("prompt", self.media_field)
        self.known_columns = frozenset({"id", "prompt", self.media_field, "questions"})
        self.candidate_field: str | None = self.media_field  # --candidates: a column each

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        return questions_view(result, named)

    def refusal(self, options: Options, judges: list[str], vertexai: bool) -> str | None:
        """--soft reads the validators' log probabilities, which some models refuse on every
        call (evalq.metrics.gecko.soft_models)."""
        return soft_refusal(judges, vertexai) if options.get("soft") else None

    def row_questions(self, value: Any, row_id: str) -> list[Question] | None:
        """The row's own questions (the dataset's `questions` field), validated."""
        return parse_questions(value, row_id)

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        known, required = self.known_columns, self.required_columns
        row_id, extra = read_columns(number, record, known, required)
        prompt = record["prompt"]
        if not isinstance(prompt, str):
            raise InputError(row_id, "prompt", f"must be text, got {type(prompt).__name__}")
        cell = record.get(self.media_field)
        media = place.parse(cell, row_id, self.media_field)
        return RowInput(
            id=row_id,
            line=number,
            prompt=prompt.strip(),
            media={self.media_field: media},
            questions=self.row_questions(record.get("questions"), row_id),
            extra=extra,
        )

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        """The prompt the rubric was written from, and the media the validator looked at."""
        out: Judged = {"prompt": row.prompt}
        if (media := row.media.get(self.media_field)) is not None:
            out[self.media_field] = media
        return out

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        validator_mode(options)
        if samples_budget(options) is not None and validator_mode(options) == "batched":
            raise DatasetError(
                "--samples asks each question on its own: not with --validator batched"
            )
        if soft_mode(options) and not self.yes_no:
            raise DatasetError(
                f"--soft scores yes/no questions; {self.name} asks multiple-choice questions"
            )
        mode = questions_mode(options)
        named = options.get("rubric_model")
        if named is not None and (not isinstance(named, str) or not named.strip()):
            raise DatasetError(f"option rubric_model must name a model, got {named!r}")
        if mode == "extend" and not any(row.questions for row in rows):
            return [
                "--questions extend: no row has questions of its own, so every rubric is generated"
            ]
        return []

    def shown(self, ctx: RowContext) -> MediaPart:
        """What the validator looks at: the row's media (the rubric metric: its texts)."""
        return ctx.media(self.media_field)

    def rubric_spec_for(self, options: Mapping[str, Any]) -> RubricSpec:
        """The rubric a job's options ask for: the metric's own (the rubric metric's depends on
        its guidelines). Its template version is part of the rubric's cache key."""
        return self.rubric_spec

    def plan(self, ctx: RowContext) -> GeckoPlan:
        self.shown(ctx)  # broken media fails the row before any judge call
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
            soft=soft_mode(ctx.options),
            samples=samples_of(ctx.options),
        )

    def _rubric(self, ctx: RowContext) -> Rubric:
        row = ctx.row
        extend = questions_mode(ctx.options) == "extend"
        if row.questions and not extend:
            return dataset_rubric(row)
        model = rubric_model(ctx.job)
        version = self.rubric_spec_for(ctx.options).template_version
        key = rubric_cache_id(row.prompt, model, version)
        if ctx.job.use_cache and (cached := ctx.kv.get(key)):
            ctx.count("rubric_cache_hits", 1)
            rubric = Rubric.model_validate_json(cached)
        elif ctx.job.use_cache and isinstance(ctx.kv, ClaimingKeyValue):
            rubric, wrote = written_once(
                ctx.kv, key, ctx.cache_ttl_s, lambda: self._write_rubric(ctx), read_rubric
            )
            if not wrote:
                ctx.count("rubric_cache_hits", 1)
        else:
            rubric = self._write_rubric(ctx)
            ctx.kv.set(key, rubric.model_dump_json(), ctx.cache_ttl_s)
        return extend_rubric(rubric, row.questions) if row.questions else rubric

    def _write_rubric(self, ctx: RowContext) -> Rubric:
        model = rubric_model(ctx.job)
        spec = self.rubric_spec_for(ctx.options)
        return generate_rubric(ctx.judge(model), ctx.row.prompt, spec)[0]

    # ---- question sets (evalq.core.metric.QuestionSetMetric) ----

    def plan_questions(self, plan: GeckoPlan) -> list[Question]:
        """The questions the row's validators were asked: its rubric's, own ones included."""
        return list(plan.rubric.questions)

    def rubric_key(self, prompt: str, model: str) -> str:
        """The prompt's rubric in the shared cache, as `plan` reads and writes it."""
        return rubric_cache_id(prompt, model, self.rubric_spec.template_version)

    def write_questions(self, judge: Judge, prompt: str) -> tuple[Rubric, list[JudgeReply]]:
        """The prompt's rubric written by `judge` (with the one re-ask), and its replies."""
        return generate_rubric(judge, prompt, self.rubric_spec)

    def placeholder_question(self, keyword: str) -> Question:
        """A question of the kind a rubric still to write would hold, for a dry run's sizes."""
        return Question(question=f"Does the image show {keyword}?", expected="yes", tag="object")

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The row's rubric call (unless given, cached, or written for an earlier row with the
        same prompt) and its validator calls, per judge: one per question or one per row."""
        media = self.dry_shown(row, env)
        spec = self.rubric_spec_for(env.options)
        questions = dry_questions(row, env, spec, self.placeholder_question)
        env.count("questions_expected", len(questions))
        if questions:
            dry_validations(env, questions, media, self.validator_spec)

    def dry_shown(self, row: RowInput, env: DryEnv) -> MediaPart:
        """What a dry run sizes the validator's calls with, as `shown` gives the workers."""
        return env.media(row, self.media_field)

    def run_unit(self, ctx: RowContext, plan: GeckoPlan, unit: QuestionUnit | BatchUnit) -> Verdict:
        rubric, model = plan.rubric, unit.judge_model
        try:
            media = self.shown(ctx)
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
            budget = samples_budget(ctx.options) if repeated(plan) else None
            if budget is not None:
                spec = self.validator_spec
                verdict = repeated_question(
                    judge, unit.index, question, media, spec, budget, soft=plan.soft
                )
            else:
                verdict, _ = validate_question(
                    judge, unit.index, question, media, self.validator_spec, soft=plan.soft
                )
        return verdict.model_copy(update={"judge_model": model})

    def aggregate(
        self, row: RowInput, plan: GeckoPlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        by_judge = verdicts_by_judge(plan, results, len(plan.rubric.questions))
        # Repeated questions score by their samples' share of the expected answer.
        soft = plan.soft or repeated(plan)
        result = score_row(row, plan.rubric, {}, by_judge, soft=soft)
        result.repeats = question_repeats(plan, results)
        result.details = {"validator": plan.validator, **result.details}
        if plan.soft:
            result.details["soft"] = True
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
            "questions_scored": sum(q.status == "ok" for q in questions),
        }
        soft = [r for r in rows if r.details.get("soft")]
        if soft:  # the share answered as expected, beside the soft mean the summary shows
            hard = [
                r.details["hard_score"] for r in soft if r.details.get("hard_score") is not None
            ]
            summary["soft"] = {"rows": len(soft), "hard_mean_score": fmean(hard) if hard else None}
        judged = [r.details["judges"] for r in rows if isinstance(r.details.get("judges"), dict)]
        if judged:
            summary.update(summarize_judges(judged))
        return summary


class GeckoImage(GeckoMetric):
    """Gecko for text-to-image: yes/no questions per prompt, validated against the image."""

    name = "gecko-image"
    media_field = "image"
    rubric_spec = IMAGE_RUBRIC
    validator_spec = IMAGE_VALIDATOR


GECKO_IMAGE: Metric[GeckoPlan, GeckoUnit] = GeckoImage()


def samples_of(options: Mapping[str, Any]) -> int:
    """How many samples a question may take: K for `--samples K`, the maximum for `auto`."""
    return budget_of(options.get("samples")).max_samples
