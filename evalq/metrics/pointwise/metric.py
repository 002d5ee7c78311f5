"""Pointwise ratings: a judge rates each row's response 1-5 on a rubric, K times per judge.

Each (judge model, sample) is one unit of the row's fan-out, so repeated samples and several
judges are scheduled like any other judge call. A row shows every rating, their mean and spread;
the row score is the mean rating mapped onto [0, 1] ((mean - 1) / 4) so job means and intervals
work as for every metric, while the 1-5 figures stay in the details and the metric summary.

The judge call helpers (judges, samples, temperature, one call -> one Verdict) live in
evalq.metrics.ratings.judging, shared with the pairwise and ranking metrics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import product
from statistics import fmean
from typing import Any, Literal

from evalq.core.dry_run import DryEnv
from evalq.core.errors import InputError
from evalq.core.label_reading import HumanLabels
from evalq.core.metric import Judged, Metric, RowContext, Unit
from evalq.core.models import Repeats, RowInput, RowResult, Sample, Verdict
from evalq.core.repeats import ask_until_settled, repeats_of, sample_verdicts, stored_decision
from evalq.core.row_value import RowValue
from evalq.core.row_view import JudgedInput, ViewParts
from evalq.core.scoring import mean_ci95
from evalq.core.verdicts import ask_judge, unscored
from evalq.metrics.ratings.judging import (
    VERDICT_ANSWER_TOKENS,
    RatingPlan,
    adaptive_of,
    dry_document,
    dry_template,
    judged_status,
    load_document,
    rated_row,
    rating_request,
    row_template,
    sampled,
    samples_of,
    spread,
    unit_result,
    verdicts_for,
)
from evalq.metrics.ratings.metric import RatingMetric
from evalq.metrics.ratings.parsing import RATING_MAX, RATING_MIN, RatingReply, parse_rating
from evalq.metrics.ratings.prompts import pointwise_prompt
from evalq.metrics.ratings.templates import resolve_template
from evalq.metrics.ratings.views import pointwise_view
from evalq.stats.adaptive import Budget, rating_decision
from evalq.stats.agreement import rating_agreement


def _read_rating(text: str) -> tuple[str, dict[str, Any]]:
    parsed = parse_rating(text)
    return str(parsed.verdict), {"rating": parsed.verdict, "explanation": parsed.explanation}


def to_score(rating: float) -> float:
    """A 1-5 rating on [0, 1], the scale every metric's row score uses."""
    return (rating - RATING_MIN) / (RATING_MAX - RATING_MIN)


def to_rating(score: float) -> float:
    return RATING_MIN + score * (RATING_MAX - RATING_MIN)


class RatingUnit(Unit):
    """One judge's rating of the row's response, one sample of several."""

    kind: Literal["rating"] = "rating"
    judge: str
    sample: int


class PointwisePlan(RatingPlan[RatingUnit]):
    """A pointwise row: every judge rates the response once per sample."""


class Pointwise(RatingMetric):
    """Rate each row's response 1-5 on a built-in rubric or a user template."""

    name = "pointwise"
    required_columns: tuple[str, ...] = ()  # they depend on the template: see check()
    plan_model = PointwisePlan
    template_kind = "pointwise"
    judged_units = "ratings"  # each unit: one judge's 1-5 rating, one sample
    judge_roles = ("judge",)
    candidate_field = "response"  # --candidates: each model's response in a column
    # Compared on the mean rating, so differences read in rating points (a row score of 0.75
    # is a rating of 4, and 0.25 a whole point).
    compared_on = RowValue(
        "mean_rating", "mean rating", float(RATING_MIN), float(RATING_MAX), detail="mean_rating"
    )
    human_labels = HumanLabels(row="rating")  # --human: a 1-5 rating, ordinal

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        return pointwise_view(result, named)

    def judged_responses(self, row: RowInput, result: RowResult) -> Judged:
        response = row.data.get("response")
        return {"response": response} if isinstance(response, str) else {}

    def plan(self, ctx: RowContext) -> PointwisePlan:
        template = row_template(ctx, "pointwise")
        judges, samples = ctx.job.judges, samples_of(ctx.options)
        adaptive = adaptive_of(ctx.options) is not None
        units = [
            RatingUnit(index=i, judge=judge, sample=k)
            for i, (judge, k) in enumerate(product(judges, range(1 if adaptive else samples)))
        ]
        return PointwisePlan(
            units=units,
            template=template.name,
            template_version=template.version,
            judges=judges,
            samples=samples,
            adaptive=adaptive,
        )

    def run_unit(self, ctx: RowContext, plan: PointwisePlan, unit: RatingUnit) -> Verdict:
        template = resolve_template(ctx.options, "pointwise")
        try:
            document = load_document(ctx)
        except InputError as exc:
            return unscored(unit.index, "input_error", str(exc), judge_model=unit.judge)
        prompt = pointwise_prompt(template, ctx.row.data, document)

        def ask(sample: int) -> Verdict:
            request = rating_request(
                prompt, document, RatingReply, ctx.options, plan.samples, sample
            )
            return ask_judge(ctx.judge(unit.judge), unit.index, request, _read_rating)

        budget = adaptive_of(ctx.options)
        if budget is None or not plan.adaptive:
            return ask(unit.sample)
        return ask_until_settled(
            unit.index, budget, ask, lambda taken: rating_decision(_ratings(taken), budget)
        )

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """Every judge rates the row once per sample."""
        template = dry_template(row, env, "pointwise")
        document = dry_document(row, env)
        samples = samples_of(env.options)
        prompt = pointwise_prompt(template, row.data, document)
        budget = adaptive_of(env.options)
        for judge, k in product(env.job.judges, range(samples)):
            request = rating_request(prompt, document, RatingReply, env.options, samples, k)
            optional = budget is not None and k >= budget.min_samples  # only while undecided
            env.call(request, judge, VERDICT_ANSWER_TOKENS, optional=optional)
            env.count("ratings (judge x sample)")

    def aggregate(
        self, row: RowInput, plan: PointwisePlan, results: Mapping[int, Verdict]
    ) -> RowResult:
        pairs, repeats = _per_sample(plan, verdicts_for(plan, results))
        judges: dict[str, dict[str, Any]] = {j: {"ratings": [], "samples": []} for j in plan.judges}
        questions = []
        for unit, verdict in pairs:
            judge, sample = unit.judge, unit.sample
            value = verdict.value if isinstance(verdict.value, dict) else {}
            rating = value.get("rating") if verdict.status == "ok" else None
            entry = judges.setdefault(judge, {"ratings": [], "samples": []})
            if rating is not None:
                entry["ratings"].append(rating)
            entry["samples"].append(
                {
                    "sample": sample,
                    "rating": rating,
                    "explanation": value.get("explanation", ""),
                    "status": verdict.status,
                    "reason": verdict.reason,
                    "detail": verdict.detail,
                }
            )
            label = sampled(f"rating by {judge}", sample, plan.samples)
            questions.append(unit_result(label, "rating", verdict))
        for entry in judges.values():
            ratings = entry["ratings"]
            entry["mean_rating"] = fmean(ratings) if ratings else None
            entry["stdev"] = spread(ratings)
        means = [e["mean_rating"] for e in judges.values() if e["mean_rating"] is not None]
        all_ratings = [r for e in judges.values() for r in e["ratings"]]
        mean_rating = fmean(means) if means else None
        status = judged_status(any(v.status == "ok" for _, v in pairs), pairs)
        details = {
            "ratings": all_ratings,
            "mean_rating": mean_rating,
            "stdev": spread(all_ratings),
            "judges": judges,
        }
        score = None if mean_rating is None else to_score(mean_rating)
        failure = "no rating could be read"
        return rated_row(row, plan, pairs, status, score, questions, failure, details, repeats)

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        rated = [r for r in rows if r.details.get("mean_rating") is not None]
        if not rated:
            return {}
        scores = [to_score(r.details["mean_rating"]) for r in rated]
        mean, ci = mean_ci95(scores)
        counts = Counter(rating for r in rated for rating in r.details.get("ratings", []))
        out: dict[str, Any] = {
            "template": rated[0].details.get("template"),
            "mean_rating": None if mean is None else to_rating(mean),
            "mean_rating_ci95": None if ci is None else [to_rating(ci[0]), to_rating(ci[1])],
            "rating_counts": {str(n): counts.get(n, 0) for n in range(RATING_MIN, RATING_MAX + 1)},
        }
        by_judge: dict[str, dict[str, float]] = {}
        spreads: list[float] = []
        unanimous: list[bool] = []
        for r in rated:
            for judge, entry in r.details.get("judges", {}).items():
                if entry.get("mean_rating") is not None:
                    by_judge.setdefault(judge, {})[r.id] = entry["mean_rating"]
                if len(entry.get("ratings", [])) >= 2:
                    spreads.append(entry["stdev"])
                    unanimous.append(len(set(entry["ratings"])) == 1)
        if spreads:
            out["consistency"] = {
                "mean_stdev": fmean(spreads),
                "unanimous_share": sum(unanimous) / len(unanimous),
                "rows": len(spreads),
            }
        if len(by_judge) > 1:
            out["mean_rating_by_judge"] = {j: fmean(v.values()) for j, v in by_judge.items()}
            out["agreement"] = rating_agreement(by_judge)
        return out


def _ratings(verdicts: list[Verdict]) -> list[float | None]:
    return [
        v.value.get("rating") if v.status == "ok" and isinstance(v.value, dict) else None
        for v in verdicts
    ]


def _per_sample(
    plan: PointwisePlan, pairs: list[tuple[RatingUnit, Verdict]]
) -> tuple[list[tuple[RatingUnit, Verdict]], list[Repeats]]:
    """Every sample as a unit of its own (an adaptive unit's samples spread out, so a row
    reads the same whichever way it was asked), and each judge's samples as Repeats."""
    spread_out: list[tuple[RatingUnit, Verdict]] = []
    stored: dict[str, dict[str, Any]] = {}
    for unit, verdict in pairs:
        samples = sample_verdicts(verdict) if plan.adaptive else None
        if samples is None:
            spread_out.append((unit, verdict))
            continue
        spread_out += [(unit.model_copy(update={"sample": k}), v) for k, v in enumerate(samples)]
        stored[unit.judge] = stored_decision(verdict) or {}
    if plan.samples < 2:
        return spread_out, []
    repeats = []
    fixed = Budget(plan.samples, plan.samples, adaptive=False)
    for judge in plan.judges:
        mine = [v for u, v in spread_out if u.judge == judge]
        decision = stored.get(judge) or rating_decision(_ratings(mine), fixed)
        drawn = [Sample(answer=v.answer if v.status == "ok" else None) for v in mine]
        repeats.append(repeats_of("rating", judge, drawn, decision))
    return spread_out, repeats


POINTWISE: Metric[PointwisePlan, RatingUnit] = Pointwise()
