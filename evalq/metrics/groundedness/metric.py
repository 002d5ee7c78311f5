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
  grounded; of two differing labels on one sentence the worse counts (labels).

The metric here wires its pieces: plan (units and plan), judging (one judge's labelling and its
re-ask), scoring (one judge's verdict), summary (the job's figures).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from evalq.core.bounds import some_names
from evalq.core.dataset import has_value, require_text
from evalq.core.dry_run import DryEnv, placeholder_response
from evalq.core.errors import DatasetError, InputError, MissingField, UnparseableReply
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.core.label_reading import HumanLabels
from evalq.core.media import MediaPlace
from evalq.core.metric import Judged, Metric, Options, Record, RowContext
from evalq.core.models import (
    QuestionResult,
    RowInput,
    RowResult,
    Verdict,
)
from evalq.core.repeats import SAMPLED_TEMPERATURE, budget_of
from evalq.core.row_columns import read_columns
from evalq.core.row_value import RowValue
from evalq.core.row_view import JudgedInput, ViewParts
from evalq.metrics.groundedness.judging import judge_response
from evalq.metrics.groundedness.parsing import (
    GroundingReply,
)
from evalq.metrics.groundedness.plan import GroundednessPlan, JudgeUnit
from evalq.metrics.groundedness.prompts import (
    JUDGE_TEMPLATE_VERSION,
    answer_request,
    check_answer_template,
    judge_prompt,
    template_version,
)
from evalq.metrics.groundedness.repeats import (
    labelling_repeats,
    repeated_labelling,
    samples_budget,
)
from evalq.metrics.groundedness.scoring import (
    JudgeResult,
    check_sentences,
    mean_of,
    score_labelling,
    unit_result,
)
from evalq.metrics.groundedness.sentences import split_sentences
from evalq.metrics.groundedness.summary import summarize_rows
from evalq.metrics.groundedness.view import groundedness_view

__all__ = [
    "GROUNDEDNESS",
    "Groundedness",
    "GroundednessPlan",
    "JudgeResult",
    "JudgeUnit",
    "check_sentences",
    "judge_response",
    "score_labelling",
    "summarize_rows",
    "unit_result",
]


# Lengths a dry run assumes (evalq's own figures): a response of at most five sentences, and a
# labelling that repeats each sentence with its label and an excerpt.
ANSWER_TOKENS = 200
ASSUMED_SENTENCES = 5
LABELLING_TOKENS = 60
LABEL_TOKENS_PER_SENTENCE = 80


def _query_of(record: Record, row_id: str) -> str:
    """The user's request: `query`, or `prompt` as Vertex's evaluation datasets name it. A row
    with both reads `query` and keeps `prompt` as an extra column (Vertex's prompt may embed
    the context, so it is no substitute for a query given apart)."""
    if has_value(record.get("query")) or not has_value(record.get("prompt")):
        try:
            return require_text(record, row_id, "query")
        except MissingField as exc:
            why = f"{exc.message}; Vertex's 'prompt' column is read as the query too"
            raise MissingField(row_id, "query", why) from None
    return require_text(record, row_id, "prompt")


class Groundedness:
    """FACTS-style groundedness: optional candidate generation, then one unit per judge model."""

    name = "groundedness"
    # The query may come as Vertex names it (`prompt`), so only the context is a must-have of
    # a CSV header; a row with neither query nor prompt is refused by parse_row.
    required_columns: tuple[str, ...] = ("context",)
    known_columns = frozenset({"id", "query", "context", "response"})
    plan_model = GroundednessPlan
    judged_units = "sentence labellings"  # each unit: one judge labels the response's sentences
    judge_roles = ("judge",)
    candidate_field = None  # the model under test writes the response (--candidate-model)
    own_candidates = False
    shows_media = False
    compared_on = RowValue("grounded_share", "grounded share")  # of the row's judges
    human_labels = HumanLabels(sentences=True)  # and the human_labels column's sentence labels

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        return groundedness_view(result, named)

    def refusal(self, options: Options, judges: list[str], vertexai: bool) -> str | None:
        return None  # every judge model labels sentences

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        known, required = self.known_columns, self.required_columns
        read_from: dict[str, str] = {}
        if not has_value(record.get("query")) and has_value(record.get("prompt")):
            known |= {"prompt"}  # read as the query, not kept as an extra column
            read_from["query"] = "prompt"
        row_id, extra = read_columns(number, record, known, required)
        data: dict[str, Any] = {
            "query": _query_of(record, row_id),
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
            extra=extra,
            read_from=read_from,
        )

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        """The query, the context and the response judged: the dataset's, or the one the
        model under test wrote (kept in the result's details)."""
        out: Judged = {
            key: row.data[key] for key in ("query", "context") if isinstance(row.data.get(key), str)
        }
        response = row.data.get("response") or result.details.get("response")
        if isinstance(response, str) and response:
            out["response"] = response
        return out

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
        elif to_generate < len(rows):
            # A mixed dataset: an empty cell may be the user's model's own empty answer, which
            # would otherwise be replaced by another model's answer without a word.
            missing = [row.id for row in rows if "response" not in row.data]
            writer = options.get("candidate_model") or "the first judge model"
            warnings.append(
                f"{to_generate} of {len(rows)} rows have no response ({some_names(missing)}): "
                f"the model under test ({writer}; --candidate-model) writes theirs, and those "
                "rows are scored on its answers"
            )
        return warnings

    def plan(self, ctx: RowContext) -> GroundednessPlan:
        judges = ctx.job.judges
        units = [JudgeUnit(index=i, judge_model=model) for i, model in enumerate(judges)]
        samples = budget_of(ctx.options.get("samples")).max_samples
        given = ctx.row.data.get("response")
        source: dict[str, Any]
        if isinstance(given, str) and given:
            source = {"response": given, "response_source": "dataset"}
        else:
            model, reply = self._generate(ctx)
            source = {
                "response": reply.text.strip(),
                "response_source": "candidate",
                "candidate_model": model,
                "candidate_template": template_version(ctx.options.get("prompt_template")),
                "candidate_finish_reason": reply.finish_reason,
                "simulated": reply.simulated,
            }
        return GroundednessPlan(
            units=units,
            judges=judges,
            judge_template=JUDGE_TEMPLATE_VERSION,
            samples=samples,
            **source,
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
        """The response to generate (when the row has none), then one labelling per judge, or
        per judge and sample with --samples (beyond the minimum, only while undecided)."""
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
        prompt = judge_prompt(query, context, response)
        answer = LABELLING_TOKENS + LABEL_TOKENS_PER_SENTENCE * sentences
        budget = budget_of(env.options.get("samples"))
        for model in env.job.judges:
            for sample in range(budget.max_samples):
                request = JudgeRequest(prompt=prompt, schema=GroundingReply)
                if budget.max_samples > 1:
                    request = replace(request, temperature=SAMPLED_TEMPERATURE, sample=sample)
                optional = budget.adaptive and sample >= budget.min_samples
                env.call(request, model, answer, optional=optional)

    def run_unit(self, ctx: RowContext, plan: GroundednessPlan, unit: JudgeUnit) -> Verdict:
        budget = samples_budget(ctx.options) if plan.samples > 1 else None
        if budget is not None:
            data = ctx.row.data
            judge = ctx.judge(unit.judge_model)
            return repeated_labelling(
                judge, unit.index, data["query"], data["context"], plan.response, budget
            )
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
        score = mean_of(j.grounded for j in scored)
        status: Literal["scored", "partial", "failed"] = (
            "failed" if not scored else "scored" if len(scored) == len(judged) else "partial"
        )
        reasons = sorted({j.reason for j in judged if j.reason})
        questions = [
            QuestionResult(
                question=f"judge {j.judge_model}: is every claim supported by the context?",
                tag="grounded",
                expected="grounded",
                answer=_grounded_answer(j.grounded),
                result=j.grounded if j.grounded in (0, 1) else None,
                status=j.status,
                reason=j.reason,
                detail=j.why,
            )
            for j in judged
        ]
        details: dict[str, Any] = {
            "response": plan.response,
            "response_source": plan.response_source,
            "candidate_model": plan.candidate_model,
            "judges": {j.judge_model: j.model_dump() for j in judged},
            "mean": {
                "grounded": score,
                "supported_fraction": mean_of(j.supported_fraction for j in scored),
            },
        }
        if plan.samples > 1:
            details["samples"] = plan.samples
        return RowResult.of(
            row,
            repeats=labelling_repeats(
                [(u.judge_model, results.get(u.index)) for u in plan.units], plan.response
            ),
            status=status,
            score=score,
            questions=questions,
            reason=reasons[0] if status == "failed" and reasons else None,
            error="no judge's verdict could be scored" if status == "failed" else None,
            simulated=plan.simulated or any(v.simulated for v in results.values()),
            details=details,
        )

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        return summarize_rows(rows)


GROUNDEDNESS: Metric[GroundednessPlan, JudgeUnit] = Groundedness()


def _grounded_answer(grounded: float | None) -> str | None:
    """A split vote of repeated samples is neither grounded nor not grounded."""
    if grounded is None:
        return None
    if grounded not in (0, 1):
        return f"split vote ({grounded:.2f} grounded)"
    return "grounded" if grounded else "not grounded"
