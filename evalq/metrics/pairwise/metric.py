"""Pairwise comparison: which of two responses is better (A / SAME / B), judged in both orders.

Judges prefer whichever response they read first (or second) more often than chance, so every
comparison is asked twice: as given (response_a shown as A) and swapped (response_b shown as
A). A verdict that survives the swap counts; one that flips with the order (A then A, i.e.
"whichever came first") counts as a tie and is reported as inconsistent. A comparison needs
both orders: if either call is unscored, so is the comparison.

Row score: 1.0 if A wins, 0.5 for a tie, 0.0 if B wins (averaged over samples, then over
judges), so the job's mean score is A's expected share. The summary gives the share of rows
won by A, by B and tied, each with a Wilson 95% interval, and the inconsistency rate.

Rows give the two responses as response_a and response_b, or in Vertex AI's columns: response
(the candidate) is A and baseline_model_response (the baseline) is B, and the summary's `sides`
says which is which.

The comparison machinery (units in both orders, combining them) is shared with ranking.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from statistics import fmean
from typing import Any, Literal

from evalq.core.dataset import has_value, row_id_of
from evalq.core.dry_run import DryEnv
from evalq.core.errors import InputError
from evalq.core.judge import JudgeRequest
from evalq.core.metric import RowContext, Unit
from evalq.core.models import RowInput, RowResult, Verdict
from evalq.core.verdicts import unscored
from evalq.metrics.ratings.columns import read_row
from evalq.metrics.ratings.judging import (
    VERDICT_ANSWER_TOKENS,
    RatingPlan,
    ask_judge,
    check_template,
    dry_document,
    dry_template,
    first_reason,
    load_document,
    row_template,
    samples_of,
    temperature_of,
    unit_result,
    verdicts_for,
)
from evalq.metrics.ratings.parsing import Choice, PairwiseReply, parse_choice
from evalq.metrics.ratings.prompts import pairwise_prompt
from evalq.metrics.ratings.templates import Template, resolve_template
from evalq.stats.agreement_stats import label_agreement
from evalq.stats.intervals import wilson

Order = Literal["original", "swapped"]
ORDERS: tuple[Order, ...] = ("original", "swapped")
Outcome = Literal["A", "B", "tie"]
OUTCOME_SCORE: dict[str, float] = {"A": 1.0, "tie": 0.5, "B": 0.0}
_UNSWAP: dict[str, Choice] = {"A": "B", "B": "A", "SAME": "SAME"}
_AS_OUTCOME: dict[str, Outcome] = {"A": "A", "B": "B", "SAME": "tie"}


@dataclass(frozen=True)
class Combined:
    """Both orders' verdicts read in the original order; ``outcome`` None = unscored."""

    outcome: Outcome | None
    consistent: bool | None


def combine(original: Choice | None, swapped: Choice | None) -> Combined:
    """``swapped`` is the verdict on the swapped order, as the judge wrote it (A = shown
    first = the original B). An order-dependent pair of verdicts is a tie, inconsistent."""
    if original is None or swapped is None:
        return Combined(None, None)
    if original == _UNSWAP[swapped]:
        return Combined(_AS_OUTCOME[original], True)
    return Combined("tie", False)


def winner_of(score: float) -> Outcome:
    if math.isclose(score, 0.5, abs_tol=1e-9):
        return "tie"
    return "A" if score > 0.5 else "B"


class ComparisonUnit(Unit):
    """One order of one comparison, by one judge, one sample of several."""

    kind: Literal["pairwise"] = "pairwise"
    judge: str
    sample: int
    order: Order

    def comparison(self) -> dict[str, Any]:
        """What names the comparison this order belongs to (both orders share it)."""
        return {"judge": self.judge, "sample": self.sample}


class PairwisePlan(RatingPlan[ComparisonUnit]):
    """A pairwise row: every judge compares the pair once per sample, in both orders."""


def comparison_units(judges: Sequence[str], samples: int) -> list[ComparisonUnit]:
    """One unit per judge x sample x order; the two orders of a comparison are separate judge
    calls, scheduled like any other."""
    return [
        ComparisonUnit(index=i, judge=judge, sample=sample, order=order)
        for i, (judge, sample, order) in enumerate(product(judges, range(samples), ORDERS))
    ]


def dry_comparisons(
    row: RowInput,
    env: DryEnv,
    template: Template,
    texts: Mapping[str, str],
    pairs: Sequence[tuple[str, str]],
) -> None:
    """Every judge x sample x pair, in both orders, as comparison_units lays them out."""
    document = dry_document(row, env)
    samples = samples_of(env.options)
    for judge, k, (a, b), order in product(env.job.judges, range(samples), pairs, ORDERS):
        shown = (texts[a], texts[b]) if order == "original" else (texts[b], texts[a])
        request = JudgeRequest(
            prompt=pairwise_prompt(template, row.data, *shown, document),
            media=document.media if document else (),
            schema=PairwiseReply,
            temperature=temperature_of(env.options, samples),
            sample=k,
        )
        env.call(request, judge, VERDICT_ANSWER_TOKENS)
        env.count("comparisons (judge x sample x pair x order)")


def _read_choice(text: str) -> tuple[str, dict[str, Any]]:
    parsed = parse_choice(text)
    return parsed.choice, {"choice": parsed.choice, "explanation": parsed.explanation}


def judge_comparison(
    ctx: RowContext,
    template: Template,
    unit: ComparisonUnit,
    first: str,
    second: str,
    samples: int,
) -> Verdict:
    """One order of one comparison: ``first`` is the original A, shown second if swapped."""
    try:
        document = load_document(ctx)
    except InputError as exc:
        return unscored(unit.index, "input_error", str(exc), judge_model=unit.judge)
    shown = (first, second) if unit.order == "original" else (second, first)
    request = JudgeRequest(
        prompt=pairwise_prompt(template, ctx.row.data, *shown, document),
        media=document.media if document else (),
        schema=PairwiseReply,
        temperature=temperature_of(ctx.options, samples),
        sample=unit.sample,
    )
    return ask_judge(ctx.judge(unit.judge), unit.index, request, _read_choice)


def _choice(verdict: Verdict | None) -> Choice | None:
    if verdict is None or verdict.status != "ok" or not isinstance(verdict.value, dict):
        return None
    choice = verdict.value.get("choice")
    return choice if choice in _UNSWAP else None


def _explanation(verdict: Verdict | None) -> str | None:
    if verdict is None or not isinstance(verdict.value, dict):
        return None
    return str(verdict.value.get("explanation", ""))


def comparisons(pairs: Iterable[tuple[ComparisonUnit, Verdict]]) -> list[dict[str, Any]]:
    """Group a row's units into comparisons (by unit.comparison()) and combine orders."""
    grouped: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Verdict]]] = {}
    for unit, verdict in pairs:
        names = unit.comparison()
        key = tuple(names.values())
        grouped.setdefault(key, (names, {}))[1][unit.order] = verdict
    out = []
    for names, by_order in grouped.values():
        original, swapped = by_order.get("original"), by_order.get("swapped")
        combined = combine(_choice(original), _choice(swapped))
        entry: dict[str, Any] = dict(names)
        entry |= {
            "original": _choice(original),
            "swapped": _choice(swapped),
            "outcome": combined.outcome,
            "consistent": combined.consistent,
            "explanations": {
                "original": _explanation(original),
                "swapped": _explanation(swapped),
            },
        }
        if combined.outcome is None:
            entry["reason"] = first_reason([v for v in by_order.values() if v.status != "ok"])
        out.append(entry)
    return out


def first_position_share(entries: Iterable[Mapping[str, Any]]) -> float | None:
    """Among single-order verdicts that picked a side, the share that picked the response
    shown first: 0.5 is no position preference."""
    picks = [
        choice
        for entry in entries
        for choice in (entry.get("original"), entry.get("swapped"))
        if choice in ("A", "B")
    ]
    return sum(choice == "A" for choice in picks) / len(picks) if picks else None


# The two responses' columns, (shown as A, shown as B). Vertex AI's pairwise datasets call the
# candidate `response` and the baseline `baseline_model_response`; the candidate is A, so the
# job's mean score is the candidate's expected share and a win for A is a win for the candidate.
NATIVE_PAIR = ("response_a", "response_b")
VERTEX_PAIR = ("response", "baseline_model_response")
SIDE_LABELS: dict[tuple[str, str], dict[str, str]] = {
    NATIVE_PAIR: {"A": "response_a", "B": "response_b"},
    VERTEX_PAIR: {"A": "candidate (response)", "B": "baseline (baseline_model_response)"},
}


def pair_columns(number: int, record: Mapping[str, Any]) -> tuple[str, str]:
    """Which pair of columns a row uses: ours, or Vertex's when it has none of ours. A row
    with both is ambiguous (which one is the candidate?) and refused."""
    row_id = row_id_of(number, record)
    native = [c for c in NATIVE_PAIR if has_value(record.get(c))]
    vertex = [c for c in VERTEX_PAIR if has_value(record.get(c))]
    if native and vertex:
        raise InputError(
            row_id,
            vertex[0],
            f"the row has {', '.join(native)} and Vertex-style {', '.join(vertex)}; give "
            "either response_a and response_b, or response (the candidate) and "
            "baseline_model_response (the baseline)",
        )
    return VERTEX_PAIR if vertex else NATIVE_PAIR


def row_pair(row: RowInput) -> tuple[str, str]:
    """The columns a loaded row's two responses are in (A first)."""
    return NATIVE_PAIR if NATIVE_PAIR[0] in row.data else VERTEX_PAIR


class Pairwise:
    """Compare response_a with response_b on every row, both orders, per judge and sample."""

    name = "pairwise"
    # The responses are response_a/response_b or Vertex's pair (pair_columns), so no single
    # header is required; a dataset where no row has them is refused by load_dataset.
    required_columns: tuple[str, ...] = ()
    plan_model = PairwisePlan

    def parse_row(
        self,
        number: int,
        record: dict[str, Any],
        base_dir: Path,
        options: Mapping[str, Any],
        warnings: list[str],
    ) -> RowInput:
        template = resolve_template(options, "pairwise")
        pair = pair_columns(number, record)
        return read_row(
            number,
            record,
            base_dir,
            template.columns | {"prompt", *pair},
            warnings,
            required=pair,
            prompt_aliases=template.rubric is not None,
        )

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        return check_template(options, rows, "pairwise")

    def plan(self, ctx: RowContext) -> PairwisePlan:
        template = row_template(ctx, "pairwise")
        judges, samples = ctx.job.judges, samples_of(ctx.options)
        return PairwisePlan(
            units=comparison_units(judges, samples),
            template=template.name,
            template_version=template.version,
            judges=judges,
            samples=samples,
        )

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """Each judge compares the pair once per sample in each order."""
        template = dry_template(row, env, "pairwise")
        a, b = row_pair(row)
        texts = {a: str(row.data.get(a, "")), b: str(row.data.get(b, ""))}
        dry_comparisons(row, env, template, texts, [(a, b)])

    def run_unit(self, ctx: RowContext, plan: PairwisePlan, unit: ComparisonUnit) -> Verdict:
        template = resolve_template(ctx.options, "pairwise")
        a, b = (ctx.row.data[column] for column in row_pair(ctx.row))
        return judge_comparison(ctx, template, unit, a, b, plan.samples)

    def aggregate(
        self, row: RowInput, plan: PairwisePlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        pairs = verdicts_for(plan, results)
        entries = comparisons(pairs)
        judges: dict[str, dict[str, Any]] = {}
        for judge in plan.judges:
            values = [
                OUTCOME_SCORE[e["outcome"]]
                for e in entries
                if e["judge"] == judge and e["outcome"] is not None
            ]
            score = fmean(values) if values else None
            judges[judge] = {
                "score": score,
                "winner": None if score is None else winner_of(score),
                "inconsistent": sum(
                    e["consistent"] is False for e in entries if e["judge"] == judge
                ),
            }
        scores = [j["score"] for j in judges.values() if j["score"] is not None]
        score = fmean(scores) if scores else None
        decided = sum(e["outcome"] is not None for e in entries)
        all_ok = all(v.status == "ok" for _, v in pairs)
        status = "failed" if not decided else ("scored" if all_ok else "partial")
        questions = [
            unit_result(
                f"{unit.order} order, judge {unit.judge}"
                + (f", sample {unit.sample}" if plan.samples > 1 else ""),
                "pairwise",
                verdict,
            )
            for unit, verdict in pairs
        ]
        return RowResult(
            id=row.id,
            line=row.line,
            prompt=row.prompt,
            status=status,
            score=score,
            questions=questions,
            reason=first_reason([v for _, v in pairs]) if status == "failed" else None,
            error="no comparison was judged in both orders" if status == "failed" else None,
            simulated=any(v.simulated for _, v in pairs),
            details={
                "template": plan.template,
                "template_version": plan.template_version,
                "sides": SIDE_LABELS[row_pair(row)],
                "winner": None if score is None else winner_of(score),
                "inconsistent": sum(e["consistent"] is False for e in entries),
                "comparisons": entries,
                "judges": judges,
            },
            extra=row.extra,
        )

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        decided = [r for r in rows if r.details.get("winner") is not None]
        if not decided:
            return {}
        entries = [e for r in decided for e in r.details.get("comparisons", [])]
        judged = [e for e in entries if e.get("outcome") is not None]
        out: dict[str, Any] = {
            "rows_compared": len(decided),
            "sides": sides_of(decided),
            **win_rates([r.details["winner"] for r in decided]),
            "inconsistency_rate": (
                sum(e.get("consistent") is False for e in judged) / len(judged) if judged else None
            ),
            "comparisons": len(judged),
            "first_position_share": first_position_share(entries),
        }
        if out["sides"] == SIDE_LABELS[VERTEX_PAIR]:  # Vertex's names for the same figures
            out["candidate_model_win_rate"] = out["win_rates"]["A"]
            out["baseline_model_win_rate"] = out["win_rates"]["B"]
        winners: dict[str, dict[str, str]] = {}
        for r in decided:
            for judge, result in r.details.get("judges", {}).items():
                if result.get("winner") is not None:
                    winners.setdefault(judge, {})[r.id] = result["winner"]
        if len(winners) > 1:
            out["by_judge"] = {}
            for judge, by_row in winners.items():
                mine = [e for e in judged if e.get("judge") == judge]
                rates = win_rates(list(by_row.values()))["win_rates"]
                inconsistent = sum(e.get("consistent") is False for e in mine)
                out["by_judge"][judge] = {
                    **rates,
                    "inconsistency_rate": inconsistent / len(mine) if mine else None,
                }
            out["agreement"] = label_agreement(winners)
        return out


def sides_of(rows: Sequence[RowResult]) -> dict[str, str]:
    """What A and B stand for in the job's win rates; a dataset mixing our columns and
    Vertex's says so (A is response_a or the candidate either way)."""
    labels = {tuple(r.details.get("sides", SIDE_LABELS[NATIVE_PAIR]).items()) for r in rows}
    if len(labels) == 1:
        return dict(labels.pop())
    return {
        "A": "response_a, or the candidate (response)",
        "B": "response_b, or the baseline (baseline_model_response)",
    }


def win_rates(winners: Sequence[str]) -> dict[str, Any]:
    """Shares of rows won by A, by B and tied, with Wilson 95% intervals."""
    n = len(winners)
    rates = {k: sum(w == k for w in winners) / n if n else None for k in ("A", "B", "tie")}
    intervals = {k: wilson(sum(w == k for w in winners), n) for k in ("A", "B", "tie")}
    return {
        "win_rates": rates,
        "win_rates_ci95": {k: list(v) if v else None for k, v in intervals.items()},
    }


PAIRWISE = Pairwise()
