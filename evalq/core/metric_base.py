"""A base for metrics with a working default for every optional member of the Metric protocol,
so a metric writes only what it does: its row model, plan, run_unit and aggregate. Its dry run
is its own plan and run_unit with every call counted instead of made."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from evalq.core.errors import InputError, UnparseableReply
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.core.label_reading import HumanLabels
from evalq.core.metric import Judged, Options, PlanT, Record, RowContext, UnitT
from evalq.core.models import QuestionResult, RowInput, RowResult, Verdict
from evalq.core.row_value import RowValue
from evalq.core.row_view import VerdictLine, ViewParts, texts_of
from evalq.core.verdicts import ask_judge

if TYPE_CHECKING:
    from evalq.core.dry_run import DryEnv
    from evalq.core.media import MediaPlace
    from evalq.core.row_view import JudgedInput

# A text cell that must hold more than white space.
Text = Annotated[str, Field(pattern=r"\S")]
ReplyT = TypeVar("ReplyT", bound=BaseModel)


class MetricBase(ABC, Generic[PlanT, UnitT]):
    """A metric's defaults: a text row read through ``row_model`` (its ``prompt`` field the
    row's prompt, the others its data), judged by "judge" calls, scored on [0, 1], no media,
    no refusal, no job figures. Override any member the metric says otherwise of."""

    name: ClassVar[str]
    row_model: ClassVar[type[BaseModel]]
    plan_model: type[PlanT]
    judged_units = "units"
    judge_roles: tuple[str, ...] = ("judge",)
    candidate_field: str | None = None
    own_candidates = False
    shows_media = False
    compared_on = RowValue("score", "score")
    human_labels = HumanLabels()
    dry_answer_tokens = 60  # what a dry run expects one judge reply to cost, in tokens

    @property
    def required_columns(self) -> tuple[str, ...]:
        """The row model's required fields."""
        fields = self.row_model.model_fields
        return tuple(name for name, field in fields.items() if field.is_required())

    @abstractmethod
    def plan(self, ctx: RowContext) -> PlanT: ...

    @abstractmethod
    def run_unit(self, ctx: RowContext, plan: PlanT, unit: UnitT) -> Verdict: ...

    @abstractmethod
    def aggregate(self, row: RowInput, plan: PlanT, results: Mapping[int, Verdict]) -> RowResult:
        """Score the row from its units' verdicts (a missing one counts as unscored)."""

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        """The record read through ``row_model``; the first field that does not fit fails it."""
        row_id = str(record.get("id") or number)
        fields = self.row_model.model_fields
        try:
            read = self.row_model.model_validate({k: v for k, v in record.items() if k in fields})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(row)"
            raise InputError(row_id, where, first["msg"]) from None
        data = read.model_dump()
        prompt = str(data.pop("prompt", ""))
        extra = {k: v for k, v in record.items() if k not in fields and k != "id"}
        return RowInput(id=row_id, line=number, prompt=prompt, data=data, extra=extra)

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        return []

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        return {}

    def refusal(self, options: Options, judges: list[str], vertexai: bool) -> str | None:
        return None

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        """The prompt, the row's text data, then its media."""
        shown: Judged = {"prompt": row.prompt} if row.prompt else {}
        shown.update({k: v for k, v in row.data.items() if isinstance(v, str)})
        shown.update(row.media)
        return shown

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        """The value the metric is compared on as the headline, the texts, and a line per
        question of the result with its detail (the judge's explanation) under it."""
        value = self.compared_on
        got = result.details.get(value.detail) if value.detail else result.score
        headline = f"{value.name} {got:g} of {value.high:g}" if got is not None else "not scored"
        lines = tuple(
            VerdictLine(
                q.judge_model or "judge",
                f"{q.tag} {q.answer}" if q.answer is not None else q.reason or q.status,
                "plain" if q.status == "ok" else "unscored",
                (("explanation", q.detail),) if q.detail else (),
            )
            for q in result.questions
        )
        return ViewParts(headline=headline, tone="plain", texts=texts_of(named), verdicts=lines)

    def unit_questions(
        self, plan: PlanT, results: Mapping[int, Verdict], tag: str, explanation: str = ""
    ) -> list[QuestionResult]:
        """A question per unit, "TAG by JUDGE", its answer the verdict's (None when the unit is
        unscored or missing), its detail the verdict value's ``explanation`` field."""
        out = []
        for unit in plan.units:
            verdict = results.get(unit.index)
            ok = verdict is not None and verdict.status == "ok"
            said = verdict.value if ok and verdict is not None else None
            out.append(
                QuestionResult(
                    question=f"{tag} by {getattr(unit, 'judge', 'the judge')}",
                    tag=tag,
                    expected="",
                    answer=verdict.answer if ok and verdict is not None else None,
                    result=None,
                    status="ok" if ok else "unscored",
                    reason=verdict.reason if verdict is not None and not ok else None,
                    detail=said.get(explanation) if isinstance(said, dict) else None,
                    judge_model=getattr(unit, "judge", None),
                )
            )
        return out

    def ask(
        self,
        ctx: RowContext,
        index: int,
        model: str,
        request: JudgeRequest,
        reply: type[ReplyT],
        answer: str | None = None,
    ) -> Verdict:
        """One judge call read as ``reply``: ok with the reply's fields as its value (its
        ``answer`` field, if named, as the verdict's answer), or unscored (a judge error, a reply
        that does not parse); rate limits and spent quotas propagate."""

        def read(text: str) -> tuple[str | None, Any]:
            try:
                got = reply.model_validate_json(text)
            except ValidationError as exc:
                raise UnparseableReply(str(exc)[:200], text) from None
            return (None if answer is None else str(getattr(got, answer))), got.model_dump()

        return ask_judge(ctx.judge(model), index, request, read)

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The metric's own plan and run_unit, each judge call counted by ``env`` instead of
        made (answered empty), and each unit counted under ``judged_units``. A plan that reads
        its judges' replies (a rubric, a candidate's response) overrides this."""
        ctx = RowContext(
            job=env.job,
            row=row,
            judge=lambda model: _CountingJudge(env, model, self.dry_answer_tokens),
            candidate=lambda model: _CountingJudge(env, model, self.dry_answer_tokens, True),
            media=lambda field: env.media(row, field),
            kv=_DryCache(env),
            count=lambda name, amount: None,
        )
        plan = self.plan(ctx)
        for unit in plan.units:
            self.run_unit(ctx, plan, unit)
            env.count(self.judged_units)


class _CountingJudge:
    """A judge for a dry run: counts each request with the env and answers nothing."""

    def __init__(self, env: DryEnv, model: str, tokens: int, candidate: bool = False) -> None:
        self.env, self.model, self.tokens, self.candidate = env, model, tokens, candidate

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.env.call(request, self.model, self.tokens, candidate=self.candidate)
        return JudgeReply("", self.model, None, 0, 0, "STOP")


class _DryCache:
    """The rubric cache as a dry run reads it; nothing is written."""

    def __init__(self, env: DryEnv) -> None:
        self.env = env

    def get(self, key: str) -> str | None:
        return self.env.cached(key)

    def set(self, key: str, value: str, ttl_s: int) -> None:
        return None
