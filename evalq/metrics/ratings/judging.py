"""How the rating metrics (pointwise, pairwise, rank) ask their judges and read the verdicts:
judges and samples per job, the row's template and document, one judge call to one verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import stdev
from typing import Any, Generic, Literal

from pydantic import BaseModel

from evalq.core.dry_run import DryEnv
from evalq.core.errors import DatasetError, InputError
from evalq.core.judge import JudgeRequest
from evalq.core.metric import Plan, RowContext, Unit, UnitT
from evalq.core.models import (
    QuestionResult,
    Repeats,
    RowInput,
    RowResult,
    RowStatus,
    UnscoredReason,
    Verdict,
)
from evalq.core.repeats import SAMPLED_TEMPERATURE, budget_of
from evalq.core.verdicts import unscored
from evalq.metrics.ratings.columns import check_columns, missing_inputs
from evalq.metrics.ratings.documents import DocumentView, document_view
from evalq.metrics.ratings.rubrics import DOCUMENT
from evalq.metrics.ratings.templates import Template, resolve_template
from evalq.stats.adaptive import Budget


def samples_of(options: Mapping[str, Any]) -> int:
    """How many samples a unit may take: K for `--samples K`, the maximum for `auto`."""
    return budget_of(options.get("samples")).max_samples


def adaptive_of(options: Mapping[str, Any]) -> Budget | None:
    """The budget of `--samples auto`; None when every sample is asked (`--samples K`)."""
    budget = budget_of(options.get("samples"))
    return budget if budget.adaptive else None


def temperature_of(options: Mapping[str, Any], samples: int) -> float:
    """options["temperature"] if given; otherwise 0 for one sample and 0.7 for several."""
    value = options.get("temperature")
    if value is None:
        return SAMPLED_TEMPERATURE if samples > 1 else 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise DatasetError(f"temperature must be a number from 0 to 2, got {value!r}")
    return float(value)


def load_document(ctx: RowContext) -> DocumentView | None:
    """The row's document, if it names one (bytes come from the worker's media cache)."""
    if DOCUMENT not in ctx.row.media:
        return None
    return document_view(ctx.media(DOCUMENT))


def dry_document(row: RowInput, env: DryEnv) -> DocumentView | None:
    """The row's document for a dry run: a local one is read and checked, a remote one is
    only named (its size is then assumed)."""
    if DOCUMENT not in row.media:
        return None
    return document_view(env.media(row, DOCUMENT))


def dry_template(row: RowInput, env: DryEnv, kind: TemplateKind) -> Template:
    """row_template for a dry run: missing inputs fail the row as they would when it runs."""
    template = resolve_template(env.options, kind)
    lacking = missing_inputs(row, template.requires)
    if lacking:
        raise InputError(row.id, lacking[0], f"missing (template {template.name} needs it)")
    return template


# A rating or comparison reply: an explanation of a few sentences, then the verdict.
VERDICT_ANSWER_TOKENS = 150


TemplateKind = Literal["pointwise", "pairwise"]


def check_template(
    options: Mapping[str, Any], rows: list[RowInput], kind: TemplateKind
) -> list[str]:
    """Before anything is enqueued: the template resolves, the options hold, the columns exist."""
    template = resolve_template(options, kind)
    temperature_of(options, samples_of(options))
    return check_columns(template, rows)


def row_template(ctx: RowContext, kind: TemplateKind) -> Template:
    """The row's template, once its inputs are known to be there and its document loads."""
    template = resolve_template(ctx.options, kind)
    lacking = missing_inputs(ctx.row, template.requires)
    if lacking:
        raise InputError(ctx.row.id, lacking[0], f"missing (template {template.name} needs it)")
    load_document(ctx)  # a broken document fails the row before any judge call
    return template


class RatingPlan(Plan[UnitT], Generic[UnitT]):
    """What every rating metric's plan holds: the template (by name and version, as the row
    was planned) and the judges and samples its units were laid out for."""

    template: str
    template_version: str
    judges: list[str]
    samples: int  # each unit's samples: K, or the most `--samples auto` may take
    adaptive: bool = False  # `--samples auto`: one unit per verdict asks until it is settled


def verdicts_for(plan: Plan[UnitT], results: Mapping[int, Verdict]) -> list[tuple[UnitT, Verdict]]:
    """Every unit with its verdict; a missing verdict is an unscored judge_error."""
    return [
        (unit, results.get(unit.index) or unscored(unit.index, "judge_error", "no verdict"))
        for unit in plan.units
    ]


def unit_result(label: str, tag: str, verdict: Verdict) -> QuestionResult:
    """A unit as a row's question entry (this is what counts unscored units by reason)."""
    return QuestionResult(
        question=label,
        tag=tag,
        expected="",
        answer=verdict.answer if verdict.status == "ok" else None,
        result=None,
        status=verdict.status,
        reason=verdict.reason if verdict.status != "ok" else None,
        detail=verdict.detail,
        model_version=verdict.model_version,
    )


def sampled(label: str, sample: int, samples: int) -> str:
    """A unit's label, naming its sample only when the judge was asked more than once."""
    return label + (f", sample {sample}" if samples > 1 else "")


def judged_status(judged: bool, pairs: Sequence[tuple[Unit, Verdict]]) -> RowStatus:
    """A rating row's status: failed when nothing could be judged, partial when a unit has
    no verdict."""
    all_ok = all(v.status == "ok" for _, v in pairs)
    return "failed" if not judged else ("scored" if all_ok else "partial")


def first_reason(verdicts: Sequence[Verdict]) -> UnscoredReason | None:
    reasons = Counter(v.reason for v in verdicts if v.reason)
    return reasons.most_common(1)[0][0] if reasons else None


def spread(values: Sequence[float]) -> float | None:
    """Sample standard deviation; None for fewer than two values."""
    return stdev(values) if len(values) >= 2 else None


# ---- the metric -------------------------------------------------------------------------


def rated_row(
    row: RowInput,
    plan: RatingPlan[Any],
    pairs: Sequence[tuple[Unit, Verdict]],
    status: RowStatus,
    score: float | None,
    questions: list[QuestionResult],
    failure: str,
    details: dict[str, Any],
    repeats: list[Repeats],
) -> RowResult:
    """A rating metric's row: its template first in the details; a failed row gives its units'
    most common reason and ``failure`` as its error."""
    failed = status == "failed"
    return RowResult.of(
        row,
        status=status,
        score=score,
        questions=questions,
        reason=first_reason([v for _, v in pairs]) if failed else None,
        error=failure if failed else None,
        simulated=any(v.simulated for _, v in pairs),
        details={"template": plan.template, "template_version": plan.template_version, **details},
        repeats=repeats,
    )


def rating_request(
    prompt: str,
    document: DocumentView | None,
    schema: type[BaseModel],
    options: Mapping[str, Any],
    samples: int,
    sample: int,
) -> JudgeRequest:
    """One rating call: the document attached when it is not inlined, sampled at the job's
    temperature."""
    return JudgeRequest(
        prompt=prompt,
        media=document.media if document else (),
        schema=schema,
        temperature=temperature_of(options, samples),
        sample=sample,
    )
