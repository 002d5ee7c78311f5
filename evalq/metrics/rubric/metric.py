"""The rubric metric: for each text prompt a rubric model writes pass/fail tests (tagged, with an
importance) under guidelines; a judge checks the response against each test with a rationale;
the row's score is the importance-weighted share of tests passed, also per tag.

Gecko's flow, reused whole (evalq.metrics.gecko.metric): the rubric cached per prompt, a row's
own tests (replace or extend), frozen sets and --questions-from, per-test or batched validation,
soft scores, repeats, batch mode. What differs: the validator reads texts, not media.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from evalq.core.dry_run import DryEnv
from evalq.core.errors import InputError, UnparseableReply
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.media import MediaPlace
from evalq.core.metric import Judged, Metric, Options, Record, RowContext
from evalq.core.models import JobConfig, Question, RowInput, RowResult, Verdict
from evalq.core.repeats import sample_verdicts
from evalq.core.replies import extract_json
from evalq.core.reply_schemas import VerdictReply
from evalq.core.row_columns import read_columns, text_cell
from evalq.core.row_value import RowValue
from evalq.core.row_view import JudgedInput, ViewParts, questions_view, texts_of
from evalq.metrics.gecko.metric import GeckoMetric
from evalq.metrics.gecko.parsing import BatchVerdictReply, parse_yes_no
from evalq.metrics.gecko.plan import BatchUnit, GeckoPlan, GeckoUnit
from evalq.metrics.gecko.rubric import RubricSpec
from evalq.metrics.gecko.scoring import verdicts_by_judge
from evalq.metrics.gecko.setup import gecko_setup
from evalq.metrics.gecko.validation import ValidatorSpec
from evalq.metrics.rubric.guidelines import Guidelines, guidelines_of
from evalq.metrics.rubric.parsing import TextRubricReply, parse_text_rubric, row_tests
from evalq.metrics.rubric.prompts import (
    BATCH_VALIDATOR_TEMPLATE_VERSION,
    RUBRIC_TEMPLATE_VERSION,
    VALIDATOR_TEMPLATE_VERSION,
    batch_validator_prompt,
    rubric_prompt,
    validator_prompt,
)

# The row's texts travel to the validator's request builder as one part of this type; the
# builder puts each into the prompt in a delimited block and sends no media.
TEXTS_MIME = "application/x-evalq-texts+json"
TEXT_FIELDS = ("response", "context", "reference")
# A row's own tests, by the column that holds them: evalq's (what `evalq rubrics` writes),
# and the two Vertex's SDK writes.
TEST_COLUMNS = ("questions", "rubrics", "rubric_groups")


def texts_part(texts: Mapping[str, str]) -> MediaPart:
    data = json.dumps(dict(texts), ensure_ascii=False, sort_keys=True).encode("utf-8")
    return MediaPart(mime_type=TEXTS_MIME, data=data)


def texts_of_part(part: MediaPart) -> dict[str, str]:
    if part.mime_type != TEXTS_MIME or part.data is None:
        raise ValueError(f"the rubric validator reads texts, not {part.mime_type}")
    read: dict[str, str] = json.loads(part.data.decode("utf-8"))
    return read


def _request(question: Question, part: MediaPart) -> JudgeRequest:
    prompt = validator_prompt(texts_of_part(part), question.question)
    return JudgeRequest(prompt=prompt, schema=VerdictReply, role="validator")


def _batch_request(questions: Sequence[Question], part: MediaPart) -> JudgeRequest:
    prompt = batch_validator_prompt(texts_of_part(part), [q.question for q in questions])
    return JudgeRequest(prompt=prompt, schema=BatchVerdictReply, role="validator")


TEXT_VALIDATOR = ValidatorSpec(
    request=_request,
    batch_request=_batch_request,
    parse=lambda text, _question: parse_yes_no(text),
    template_versions=(VALIDATOR_TEMPLATE_VERSION, BATCH_VALIDATOR_TEMPLATE_VERSION),
)


@cache
def text_rubric(guidelines: Guidelines) -> RubricSpec:
    """The rubric spec for some guidelines: their name and digest are in its version."""
    return RubricSpec(
        template_version=f"{RUBRIC_TEMPLATE_VERSION}+{guidelines.version}",
        schema=TextRubricReply,
        prompt=lambda prompt, gap: rubric_prompt(guidelines.text, prompt, gap),
        parse=parse_text_rubric,
    )


def rationale_of(raw: str | None) -> str | None:
    """The judge's explanation in a per-test reply, when it wrote JSON with one."""
    if not raw:
        return None
    try:
        data = extract_json(raw)
    except UnparseableReply:
        return None
    if isinstance(data, dict):
        for key in ("explanation", "rationale", "reason"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key]).strip()
    return None


def _batch_rationales(raw: str | None) -> dict[int, str]:
    """Each test's explanation in a batched reply, by its 0-based index."""
    try:
        data = extract_json(raw or "")
    except UnparseableReply:
        return {}
    items = data.get("answers") if isinstance(data, dict) else data
    out: dict[int, str] = {}
    for position, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict) or not isinstance(item.get("explanation"), str):
            continue
        number = item.get("question_id", position + 1)
        if isinstance(number, int) and not isinstance(number, bool):
            out[number - 1] = item["explanation"].strip()
    return out


def _verdict_rationale(verdict: Verdict) -> str | None:
    """A test's rationale: its reply's, or a repeated test's first sample giving its answer."""
    samples = sample_verdicts(verdict) or []
    agreeing = [v.raw for v in samples if v.status == "ok" and v.answer == verdict.answer]
    return next(filter(None, map(rationale_of, agreeing)), None) or rationale_of(verdict.raw)


class RubricMetric(GeckoMetric):
    """Per-prompt pass/fail tests for text, checked against the response."""

    name = "rubric"
    media_field = "response"  # what --candidates stands in for: each candidate's response
    rubric_spec = text_rubric(guidelines_of({}))
    validator_spec = TEXT_VALIDATOR
    judged_units = "tests"
    shows_media = False
    # Paired test by test, as Gecko's questions are; the share counts each by its importance.
    compared_on = RowValue("score", "share of tests passed (by importance)", by_question=True)

    def __init__(self) -> None:
        super().__init__()
        self.known_columns = frozenset({"id", "prompt", *TEXT_FIELDS, *TEST_COLUMNS})

    def rubric_spec_for(self, options: Mapping[str, Any]) -> RubricSpec:
        return text_rubric(guidelines_of(options))

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        guidelines_of(options)  # a bad name is refused before anything is stored
        return super().check(rows, options)

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        row_id, extra = read_columns(number, record, self.known_columns, self.required_columns)
        prompt = text_cell(record.get("prompt"), row_id, "prompt")
        if prompt is None:
            raise InputError(row_id, "prompt", "is empty: the tests are written from it")
        data: dict[str, str] = {}
        for column in TEXT_FIELDS:
            if (text := text_cell(record.get(column), row_id, column)) is not None:
                data[column] = text
        if "response" not in data:
            raise InputError(row_id, "response", "is empty: there is nothing to check")
        given = [c for c in TEST_COLUMNS if record.get(c) not in (None, "", [], {})]
        if len(given) > 1:
            raise InputError(
                row_id, given[1], f"the row's tests are in {given[0]} already; give one column"
            )
        tests = row_tests(record[given[0]], row_id, given[0]) if given else None
        return RowInput(
            id=row_id, line=number, prompt=prompt, data=data, questions=tests, extra=extra
        )

    def row_questions(self, value: Any, row_id: str) -> list[Question] | None:
        return row_tests(value, row_id)

    def placeholder_question(self, keyword: str) -> Question:
        return Question(question=f"The response covers {keyword}.", expected="yes", tag="content")

    def _texts(self, row: RowInput) -> MediaPart:
        return texts_part({"prompt": row.prompt, **{k: row.data[k] for k in row.data}})

    def shown(self, ctx: RowContext) -> MediaPart:
        return self._texts(ctx.row)

    def dry_shown(self, row: RowInput, env: DryEnv) -> MediaPart:
        return self._texts(row)

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        out: Judged = {"prompt": row.prompt}
        out.update({k: row.data[k] for k in ("context", "reference", "response") if k in row.data})
        return out

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        parts = questions_view(result, named)
        scored = [q for q in result.questions if q.result is not None]
        passed = sum(q.result or 0 for q in scored)
        headline = (
            f"{passed} of {len(scored)} tests passed" if scored else "no test could be checked"
        )
        return replace(parts, headline=headline, texts=texts_of(named) or parts.texts)

    def aggregate(
        self, row: RowInput, plan: GeckoPlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        """Gecko's score (weighted by each test's importance), with each test's rationale."""
        result = super().aggregate(row, plan, results)
        count = len(plan.rubric.questions)
        by_judge = verdicts_by_judge(plan, results, count)
        batched: dict[str, dict[int, str]] = {
            unit.judge_model: _batch_rationales(v.raw)
            for unit in plan.units
            if isinstance(unit, BatchUnit) and (v := results.get(unit.index)) is not None
        }
        said: list[str | None] = []
        for i in range(count):
            for model, verdicts in by_judge.items():
                verdict = verdicts.get(i)
                why = batched.get(model, {}).get(i) if model in batched else None
                if why is None and verdict is not None and verdict.status == "ok":
                    why = _verdict_rationale(verdict)
                said.append(why)
        if len(said) == len(result.questions):
            result.questions = [
                q.model_copy(update={"rationale": why}) if why else q
                for q, why in zip(result.questions, said, strict=True)
            ]
        return result


RUBRIC: Metric[GeckoPlan, GeckoUnit] = RubricMetric()


def rubric_setup(job: JobConfig) -> dict[str, Any]:
    """Gecko's setup for the job's guidelines, and the guidelines by name and digest."""
    setup = gecko_setup(job, text_rubric(guidelines_of(job.options)), TEXT_VALIDATOR)
    setup["guidelines"] = guidelines_of(job.options).version
    return setup
