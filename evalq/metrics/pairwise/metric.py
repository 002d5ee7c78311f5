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

The comparison machinery (units in both orders, combining them) is in comparisons, shared with
ranking; which columns are A and B is in sides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from evalq.core.dry_run import DryEnv
from evalq.core.label_reading import HumanLabels
from evalq.core.metric import Judged, Metric, Options, Record, RowContext
from evalq.core.models import RowInput, RowResult, Verdict
from evalq.core.row_value import RowValue
from evalq.core.row_view import JudgedInput, ViewParts
from evalq.metrics.pairwise.comparisons import (
    OUTCOME_SCORE,
    ComparisonUnit,
    comparison_questions,
    comparison_units,
    comparisons,
    dry_comparisons,
    first_position_share,
    judge_comparison,
    one_per_comparison,
    spread_comparisons,
    winner_of,
)
from evalq.metrics.pairwise.sides import (
    SIDE_LABELS,
    VERTEX_PAIR,
    pair_columns,
    row_pair,
    sides_of,
)
from evalq.metrics.pairwise.view import pairwise_view
from evalq.metrics.ratings.judging import (
    RatingPlan,
    adaptive_of,
    dry_template,
    judged_status,
    rated_row,
    row_template,
    samples_of,
    verdicts_for,
)
from evalq.metrics.ratings.metric import RatingMetric
from evalq.metrics.ratings.templates import resolve_template
from evalq.stats.agreement import label_agreement
from evalq.stats.intervals import wilson


class PairwisePlan(RatingPlan[ComparisonUnit]):
    """A pairwise row: every judge compares the pair once per sample, in both orders."""


class Pairwise(RatingMetric):
    """Compare response_a with response_b on every row, both orders, per judge and sample."""

    name = "pairwise"
    # The responses are response_a/response_b or Vertex's pair (pair_columns), so no single
    # header is required; a dataset where no row has them is refused by load_dataset.
    required_columns: tuple[str, ...] = ()
    plan_model = PairwisePlan
    template_kind = "pairwise"
    judged_units = "comparisons"  # each unit: the pair compared once, in one order
    judge_roles = ("judge",)
    compared_on = RowValue("win_share_a", "win share of response A")  # a tie counts a half
    human_labels = HumanLabels(row="preference")  # --human: A, B, tie or the preferred column

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        return pairwise_view(result, named, row)

    def judged_responses(self, row: RowInput, result: RowResult) -> Judged:
        """Both responses, A then B: ours (response_a, response_b) or Vertex's (response,
        baseline_model_response)."""
        return {c: row.data[c] for c in row_pair(row) if isinstance(row.data.get(c), str)}

    def row_columns(
        self, number: int, record: Record, options: Options
    ) -> tuple[frozenset[str], tuple[str, ...]]:
        """The template's columns, the prompt and the row's pair of responses (required)."""
        pair = pair_columns(number, record)
        return resolve_template(options, "pairwise").columns | {"prompt", *pair}, pair

    def plan(self, ctx: RowContext) -> PairwisePlan:
        template = row_template(ctx, "pairwise")
        judges, samples = ctx.job.judges, samples_of(ctx.options)
        adaptive = adaptive_of(ctx.options) is not None
        units = comparison_units(judges, samples)
        return PairwisePlan(
            units=one_per_comparison(units) if adaptive else units,
            template=template.name,
            template_version=template.version,
            judges=judges,
            samples=samples,
            adaptive=adaptive,
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
        return judge_comparison(ctx, template, unit, a, b, plan.samples, plan.adaptive)

    def aggregate(
        self, row: RowInput, plan: PairwisePlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        pairs, repeats = spread_comparisons(
            plan.adaptive, plan.samples, verdicts_for(plan, results), lambda u: "A vs B"
        )
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
        status = judged_status(decided > 0, pairs)
        questions = comparison_questions(
            pairs, plan.samples, lambda u: f"{u.order} order, judge {u.judge}"
        )
        details = {
            "sides": SIDE_LABELS[row_pair(row)],
            "winner": None if score is None else winner_of(score),
            "inconsistent": sum(e["consistent"] is False for e in entries),
            "comparisons": entries,
            "judges": judges,
        }
        failure = "no comparison was judged in both orders"
        return rated_row(row, plan, pairs, status, score, questions, failure, details, repeats)

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


def win_rates(winners: Sequence[str]) -> dict[str, Any]:
    """Shares of rows won by A, by B and tied, with Wilson 95% intervals."""
    n = len(winners)
    rates = {k: sum(w == k for w in winners) / n if n else None for k in ("A", "B", "tie")}
    intervals = {k: wilson(sum(w == k for w in winners), n) for k in ("A", "B", "tie")}
    return {
        "win_rates": rates,
        "win_rates_ci95": {k: list(v) if v else None for k, v in intervals.items()},
    }


PAIRWISE: Metric[PairwisePlan, ComparisonUnit] = Pairwise()
