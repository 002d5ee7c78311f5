"""Groundedness in the FACTS Grounding style: is every claim of a response backed by a context?

A row holds a query and a context, and either the response to judge or nothing, in which case
the model under test writes it first (prepare_row, through ``ctx.candidate`` so it is cached and
counted apart from the judges). Each judge model is one unit of the row's fan-out: it decides
whether the response addresses the query at all (eligibility) and labels every sentence
supported / unsupported / contradictory / no_rad, quoting the context for the first and third.

What keeps the score honest:
- ``no_rad`` sentences (greetings, polite closings) need no source and count neither for nor
  against, so a grounded answer that ends with "I hope this helps" still scores 1;
- a ``supported`` label whose excerpt is not in the context is turned into ``unsupported``: a
  judge that invents evidence must not pass a response;
- an ineligible response is not grounded, whatever its sentences say;
- a judge whose reply can't be read is unscored for that row, never 0;
- the labels must cover the response: we split it ourselves, and a sentence the judge leaves
  out, even when asked once more, leaves that judge unscored (incomplete_labels), never
  grounded; of two differing labels on one sentence the worse counts (evalq.metrics.groundedness.labels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from statistics import fmean
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalq.core.dataset import require_text, row_id_of, unknown_columns
from evalq.core.dry_run import DryEnv, placeholder_response
from evalq.core.errors import DatasetError, InputError, JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.metric import Plan, RowContext, Unit
from evalq.core.models import (
    QuestionResult,
    RowInput,
    RowResult,
    UnscoredReason,
    Verdict,
)
from evalq.core.verdicts import unscored
from evalq.metrics.groundedness.excerpts import ContextIndex
from evalq.metrics.groundedness.labels import (
    LabelConflict,
    LabelledSentence,
    Labelling,
    ResponseSentence,
)
from evalq.metrics.groundedness.parsing import (
    LABELS,
    NEEDS_ATTRIBUTION,
    GroundingReply,
    ParsedGrounding,
    parse_grounding,
)
from evalq.metrics.groundedness.prompts import (
    JUDGE_TEMPLATE_VERSION,
    answer_request,
    check_answer_template,
    judge_gap_prompt,
    judge_prompt,
    template_version,
)
from evalq.metrics.groundedness.sentences import split_sentences
from evalq.stats.agreement_stats import label_agreement

# Lengths a dry run assumes (evalq's own figures): a response of at most five sentences, and a
# labelling that repeats each sentence with its label and an excerpt.
ANSWER_TOKENS = 200
ASSUMED_SENTENCES = 5
LABELLING_TOKENS = 60
LABEL_TOKENS_PER_SENTENCE = 80


# ---- one judge's verdict --------------------------------------------------------------------


class JudgeResult(BaseModel):
    """One judge's view of a row; what the row shows per judge."""

    judge_model: str
    status: Literal["ok", "unscored"]
    grounded: int | None = None
    supported_fraction: float | None = None  # over the sentences that need attribution
    # label -> sentences of the response, by the label that counts for each
    counts: dict[str, int] = Field(default_factory=dict)
    excerpts_rejected: int = 0
    eligible: bool | None = None  # None: the judge's reply gave no eligibility verdict
    eligibility_reason: str = ""
    why: str = ""  # one line on the outcome
    # Our split of the response, each sentence with the label that counts for it.
    response_sentences: list[ResponseSentence] = Field(default_factory=list)
    sentences: list[LabelledSentence] = Field(default_factory=list)  # as the judge labelled
    missing: list[int] = Field(default_factory=list)  # still unlabelled after the re-ask
    asked_again: list[int] = Field(default_factory=list)  # named in the re-ask
    conflicting_labels: list[LabelConflict] = Field(default_factory=list)
    reason: UnscoredReason | None = None
    detail: str | None = None
    simulated: bool = False


def check_sentences(parsed: ParsedGrounding, context: ContextIndex) -> list[LabelledSentence]:
    """Verify every excerpt; a `supported` whose evidence is not in the context is unsupported."""
    out = []
    for s in parsed.sentences:
        item = LabelledSentence(
            sentence=s.sentence,
            label=s.label,
            judge_label=s.label,
            rationale=s.rationale,
            excerpt=s.excerpt,
        )
        if s.label in ("supported", "contradictory"):
            check = context.check(s.excerpt)
            item.excerpt_check, item.excerpt_similarity = check.status, check.similarity
            if s.label == "supported" and not check.found:
                item.label = "unsupported"
                item.note = (
                    "labelled supported without an excerpt"
                    if check.status == "missing"
                    else "labelled supported, but its excerpt is not in the context"
                    + (f" (best match {check.similarity:.2f})" if check.similarity else "")
                )
        out.append(item)
    return out


def score_labelling(
    judge_model: str,
    labelling: Labelling,
    eligible: bool | None,
    eligibility_reason: str,
    simulated: bool = False,
) -> JudgeResult:
    """Grounded (1/0) and the supported fraction from the labels that count for the response's
    own sentences; no_rad counts for nothing. A sentence still without a label makes the
    judge unscored (incomplete_labels), never grounded; an ineligible response is 0 whatever
    its labels, so it needs none."""
    sentences = labelling.response_sentences()
    conflicts = labelling.conflicts(sentences)
    counts = {label: 0 for label in LABELS}
    for s in sentences:
        if s.label is not None:
            counts[s.label] += 1
    needing = [s for s in sentences if s.label in NEEDS_ATTRIBUTION]
    supported = counts["supported"]
    fraction = supported / len(needing) if needing else None
    failing = counts["unsupported"] + counts["contradictory"]
    missing = labelling.missing() if eligible is not False else []
    result = JudgeResult(
        judge_model=judge_model,
        status="ok",
        supported_fraction=fraction,
        counts=counts,
        excerpts_rejected=sum(1 for s in labelling.items if s.label != s.judge_label),
        eligible=eligible,
        eligibility_reason=eligibility_reason,
        response_sentences=sentences,
        sentences=labelling.items,
        missing=missing,
        asked_again=labelling.asked_again,
        conflicting_labels=conflicts,
        simulated=simulated,
    )
    if eligible is False:
        grounded, why = 0, f"ineligible: {eligibility_reason or 'the response does not answer'}"
    elif missing:
        shown = "; ".join(f"{i + 1}: {_clip(labelling.sentences[i])}" for i in missing)
        detail = (
            f"{len(missing)} of {len(sentences)} sentence(s) of the response have no label"
            f"{' even when asked again' if labelling.asked_again else ''} ({shown})"
        )
        return result.model_copy(
            update={
                "status": "unscored",
                "supported_fraction": None,
                "reason": "incomplete_labels",
                "detail": detail,
                "why": f"unscored (incomplete_labels): {detail}",
            }
        )
    elif failing:
        parts = [f"{counts[k]} {k}" for k in ("unsupported", "contradictory") if counts[k]]
        grounded, why = 0, f"{' and '.join(parts)} of {len(needing)} sentence(s) needing support"
    elif not needing:
        grounded, why = 0, "no sentence makes a claim from the context"
    else:
        grounded, why = 1, f"all {supported} sentence(s) needing support are supported"
    if conflicts:
        why += (
            f"; {len(conflicts)} sentence(s) got differing labels, the worse counts "
            f"(sentence {', '.join(str(c.index + 1) for c in conflicts)})"
        )
    return result.model_copy(update={"grounded": grounded, "why": why})


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def judge_response(
    judge: Judge, index: int, query: str, context: str, response: str
) -> tuple[Verdict, JudgeReply | None]:
    """One judge's labelling of the response, asked once more for any sentence it left out.
    Rate limits and spent daily quotas propagate; any other failure, a reply we can't read, and
    a labelling that still leaves sentences out, is an unscored verdict."""
    request = JudgeRequest(prompt=judge_prompt(query, context, response), schema=GroundingReply)
    try:
        reply = judge.generate(request)
    except JudgeError as exc:
        if must_propagate(exc):
            raise
        verdict = unscored(index, exc.reason, exc.message, exc.raw)
        return verdict.model_copy(update={"judge_model": judge.model}), None
    try:
        parsed = parse_grounding(reply.text)
    except UnparseableReply as exc:
        verdict = unscored(index, "parse_error", exc.message, exc.raw)
        update = {"judge_model": judge.model, "simulated": reply.simulated}
        return verdict.model_copy(update=update), reply
    context_index = ContextIndex(context)
    labelling = Labelling.of(response)
    labelling.add(check_sentences(parsed, context_index))
    simulated, failure = reply.simulated, None
    missing = labelling.missing() if parsed.eligible is not False else []
    if missing:
        labelling.asked_again = missing
        try:
            more, second = _ask_again(
                judge, query, context, response, [labelling.sentences[i] for i in missing]
            )
        except JudgeError as exc:
            if must_propagate(exc):
                raise  # retried as a unit; the first call then comes from the cache
            failure = exc
        else:
            simulated = simulated or second.simulated
            labelling.add_asked_again(check_sentences(more, context_index), missing)
    result = score_labelling(
        judge.model, labelling, parsed.eligible, parsed.eligibility_reason, simulated
    )
    if result.status == "unscored":
        if failure is not None:  # the re-ask's own failure is the reason (truncated, blocked...)
            detail = f"{result.detail}; the re-ask failed: {failure.message}"
            result = result.model_copy(
                update={
                    "reason": failure.reason,
                    "detail": detail,
                    "why": f"unscored ({failure.reason}): {detail}",
                }
            )
        reason = result.reason or "incomplete_labels"
        verdict = unscored(index, reason, result.detail or "", reply.text[:2000])
        update = {"judge_model": judge.model, "simulated": simulated, "value": result.model_dump()}
        return verdict.model_copy(update=update), reply
    verdict = Verdict(
        index=index,
        status="ok",
        answer="grounded" if result.grounded else "not grounded",
        value=result.model_dump(),
        judge_model=judge.model,
        result=result.grounded,
        raw=reply.text[:2000],
        simulated=simulated,
    )
    return verdict, reply


def _ask_again(
    judge: Judge, query: str, context: str, response: str, missing: list[str]
) -> tuple[ParsedGrounding, JudgeReply]:
    """One more call naming the sentences the judge left out; raises JudgeError (a reply we
    can't read is UnparseableReply) when it brings nothing."""
    prompt = judge_gap_prompt(query, context, response, missing)
    reply = judge.generate(JudgeRequest(prompt=prompt, schema=GroundingReply))
    return parse_grounding(reply.text), reply


def unit_result(unit: JudgeUnit, verdict: Verdict | None) -> JudgeResult:
    model = unit.judge_model
    if verdict is None:
        return JudgeResult(
            judge_model=model,
            status="unscored",
            reason="judge_error",
            detail="no verdict was recorded",
            why="unscored: no verdict was recorded",
        )
    if isinstance(verdict.value, dict):  # scored, or unscored with its labelling to show
        return JudgeResult.model_validate(verdict.value)
    return JudgeResult(
        judge_model=model,
        status="unscored",
        reason=verdict.reason or "judge_error",
        detail=verdict.detail,
        why=f"unscored ({verdict.reason or 'judge_error'}): {verdict.detail or ''}".rstrip(": "),
        simulated=verdict.simulated,
    )


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


# ---- the metric ------------------------------------------------------------------------------


class JudgeUnit(Unit):
    """One judge model labelling the row's response."""

    kind: Literal["judge"] = "judge"
    judge_model: str


class GroundednessPlan(Plan[JudgeUnit]):
    """The response every judge labels (the dataset's, or one the model under test wrote)."""

    judges: list[str]
    judge_template: str
    response: str
    response_source: Literal["dataset", "candidate"]
    candidate_model: str | None = None  # these three only for a generated response
    candidate_template: str | None = None
    candidate_finish_reason: str | None = None


class Groundedness:
    """FACTS-style groundedness: optional candidate generation, then one unit per judge model."""

    name = "groundedness"
    required_columns: tuple[str, ...] = ("query", "context")
    known_columns = frozenset({"id", "query", "context", "response"})
    plan_model = GroundednessPlan

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
        data: dict[str, Any] = {
            "query": require_text(record, row_id, "query"),
            "context": require_text(record, row_id, "context"),
        }
        response = record.get("response")
        if response is not None and not isinstance(response, str):
            raise InputError(row_id, "response", f"must be text, got {type(response).__name__}")
        if response is not None and response.strip():
            data["response"] = response.strip()
        return RowInput(
            id=row_id,
            line=number,
            prompt=data["query"],
            data=data,
            extra={k: record[k] for k in unknown},
        )

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        warnings: list[str] = []
        template = options.get("prompt_template")
        if template is not None:
            if not isinstance(template, str) or not template.strip():
                raise DatasetError("--prompt-template: the template is empty")
            check_answer_template(template)
        to_generate = sum(1 for row in rows if "response" not in row.data)
        if to_generate == 0:
            unused = [
                flag
                for flag, key in (
                    ("--prompt-template", "prompt_template"),
                    ("--candidate-model", "candidate_model"),
                )
                if options.get(key)
            ]
            if unused:
                warnings.append(f"every row has a response, so {' and '.join(unused)} is unused")
        return warnings

    def plan(self, ctx: RowContext) -> GroundednessPlan:
        judges = ctx.job.judges
        units = [JudgeUnit(index=i, judge_model=model) for i, model in enumerate(judges)]
        given = ctx.row.data.get("response")
        if isinstance(given, str) and given:
            return GroundednessPlan(
                units=units,
                judges=judges,
                judge_template=JUDGE_TEMPLATE_VERSION,
                response=given,
                response_source="dataset",
            )
        model, reply = self._generate(ctx)
        return GroundednessPlan(
            units=units,
            judges=judges,
            judge_template=JUDGE_TEMPLATE_VERSION,
            response=reply.text.strip(),
            response_source="candidate",
            candidate_model=model,
            candidate_template=template_version(ctx.options.get("prompt_template")),
            candidate_finish_reason=reply.finish_reason,
            simulated=reply.simulated,
        )

    def _generate(self, ctx: RowContext) -> tuple[str, JudgeReply]:
        """The model under test answers from the context; its calls are cached and counted apart
        from the judges'. A failure here fails the row (there is nothing to judge)."""
        model = str(ctx.options.get("candidate_model") or ctx.job.judge_model)
        template = ctx.options.get("prompt_template")
        request = answer_request(
            ctx.row.data["query"], ctx.row.data["context"], template if template else None
        )
        reply = ctx.candidate(model).generate(request)
        if not reply.text.strip():
            raise UnparseableReply(f"the model under test ({model}) returned an empty response")
        return model, reply

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The response to generate (when the row has none), then one labelling per judge."""
        query, context = row.data["query"], row.data["context"]
        response = row.data.get("response")
        if not isinstance(response, str) or not response:
            model = str(env.options.get("candidate_model") or env.job.judge_model)
            template = env.options.get("prompt_template")
            request = answer_request(query, context, template if template else None)
            env.call(request, model, ANSWER_TOKENS, candidate=True)
            env.count("responses to generate")
            response = placeholder_response(ANSWER_TOKENS)
            sentences = ASSUMED_SENTENCES
        else:
            sentences = max(1, len(split_sentences(response)))
        request = JudgeRequest(prompt=judge_prompt(query, context, response), schema=GroundingReply)
        answer = LABELLING_TOKENS + LABEL_TOKENS_PER_SENTENCE * sentences
        for model in env.job.judges:
            env.call(request, model, answer)

    def run_unit(self, ctx: RowContext, plan: GroundednessPlan, unit: JudgeUnit) -> Verdict:
        verdict, _ = judge_response(
            ctx.judge(unit.judge_model),
            unit.index,
            ctx.row.data["query"],
            ctx.row.data["context"],
            plan.response,
        )
        return verdict

    def aggregate(
        self, row: RowInput, plan: GroundednessPlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        judged = [unit_result(unit, results.get(unit.index)) for unit in plan.units]
        scored = [j for j in judged if j.status == "ok"]
        score = _mean(j.grounded for j in scored)
        status: Literal["scored", "partial", "failed"] = (
            "failed" if not scored else "scored" if len(scored) == len(judged) else "partial"
        )
        reasons = sorted({j.reason for j in judged if j.reason})
        questions = [
            QuestionResult(
                question=f"judge {j.judge_model}: is every claim supported by the context?",
                tag="grounded",
                expected="grounded",
                answer=None
                if j.grounded is None
                else ("grounded" if j.grounded else "not grounded"),
                result=j.grounded,
                status=j.status,
                reason=j.reason,
                detail=j.why,
            )
            for j in judged
        ]
        details = {
            "response": plan.response,
            "response_source": plan.response_source,
            "candidate_model": plan.candidate_model,
            "judges": {j.judge_model: j.model_dump() for j in judged},
            "mean": {
                "grounded": score,
                "supported_fraction": _mean(j.supported_fraction for j in scored),
            },
        }
        return RowResult(
            id=row.id,
            line=row.line,
            prompt=row.prompt,
            status=status,
            score=score,
            questions=questions,
            reason=reasons[0] if status == "failed" and reasons else None,
            error="no judge's verdict could be scored" if status == "failed" else None,
            simulated=plan.simulated or any(v.simulated for v in results.values()),
            details=details,
            extra=row.extra,
        )

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        return summarize_rows(rows)


def _row_judges(row: RowResult) -> dict[str, JudgeResult]:
    raw = row.details.get("judges")
    if not isinstance(raw, dict):
        return {}
    return {str(model): JudgeResult.model_validate(value) for model, value in raw.items()}


def summarize_rows(rows: list[RowResult]) -> dict[str, Any]:
    """Per-judge means, label totals, where responses came from, and agreement between judges."""
    judged = [(row, _row_judges(row)) for row in rows]
    judged = [(row, judges) for row, judges in judged if judges]
    models = list(dict.fromkeys(model for _, judges in judged for model in judges))
    per_judge: dict[str, Any] = {}
    labels: Counter[str] = Counter()
    rejected = asked_again = conflicting = 0
    for model in models:
        results = [judges[model] for _, judges in judged if model in judges]
        ok = [r for r in results if r.status == "ok"]
        for r in ok:
            labels.update({k: v for k, v in r.counts.items() if v})
            rejected += r.excerpts_rejected
            conflicting += len(r.conflicting_labels)
        asked_again += sum(1 for r in results if r.asked_again)
        per_judge[model] = {
            "grounded": _mean(r.grounded for r in ok),
            "supported_fraction": _mean(r.supported_fraction for r in ok),
            "rows_scored": len(ok),
            "rows_unscored": len(results) - len(ok),
            "ineligible": sum(1 for r in ok if r.eligible is False),
        }
    sources = Counter(str(row.details.get("response_source")) for row, _ in judged)
    summary: dict[str, Any] = {
        "per_judge": per_judge,
        "labels": {label: labels[label] for label in LABELS},
        "excerpts_rejected": rejected,
        "labels_asked_again": asked_again,  # judge verdicts that needed the re-ask
        "conflicting_labels": conflicting,  # sentences whose labels differed (scored verdicts)
        "responses": {"given": sources["dataset"], "generated": sources["candidate"]},
    }
    if len(models) >= 2:
        summary["agreement"] = label_agreement(
            {m: {i: j[m].grounded for i, (_, j) in enumerate(judged) if m in j} for m in models}
        )
    return summary


GROUNDEDNESS = Groundedness()
