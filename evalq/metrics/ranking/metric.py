"""Ranking candidates (prompt variants, models, systems) by pairwise comparison on every row.

Each row holds one response per candidate: a column named after it, or (when the candidate is
not a column) a response generated in plan() by the model under test, from a guidance text in
options["candidate_prompts"] or, with --prompt-template, from that template with the candidate
name taken as the model. Every pair of candidates is judged on every row, in both orders, as
units of the row's fan-out. The job's ranking is a Bradley-Terry fit over all rows with seeded
bootstrap intervals over rows (evalq.stats.bradley_terry), computed in summarize, so the order never
depends on which comparisons a sort happened to make.

A row's score is the share of its comparisons whose verdict survived the order swap (1.0: the
judge was consistent on every pair); the ranking itself is in the metric summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from statistics import fmean
from typing import Any

from evalq.core.dry_run import DryEnv, placeholder_response
from evalq.core.errors import DatasetError, InputError
from evalq.core.judge import JudgeRequest
from evalq.core.metric import Judged, Metric, Options, Record, RowContext
from evalq.core.models import RowInput, RowResult, Verdict
from evalq.core.row_value import RowValue
from evalq.core.row_view import JudgedInput, ViewParts
from evalq.metrics.pairwise import comparisons as pairwise
from evalq.metrics.ranking.candidates import (
    _candidate_prompts,
    _generated,
    _int_option,
    _prompt_template,
    candidates_of,
)
from evalq.metrics.ranking.plan import RankPlan, RankUnit, rank_units
from evalq.metrics.ranking.prompts import generation_request
from evalq.metrics.ratings import judging
from evalq.metrics.ratings.columns import check_columns, dataset_columns, missing_inputs
from evalq.metrics.ratings.documents import DocumentView
from evalq.metrics.ratings.metric import RatingMetric
from evalq.metrics.ratings.templates import placeholders_of, resolve_template
from evalq.metrics.ratings.views import rank_view
from evalq.stats import bradley_terry
from evalq.stats.agreement import label_agreement

# A generated response's length a dry run assumes (evalq's own figure): a few paragraphs.
GENERATION_ANSWER_TOKENS = 300


class Rank(RatingMetric):
    """Every pair of candidates on every row, both orders; Bradley-Terry over the rows."""

    name = "rank"
    required_columns: tuple[str, ...] = ()  # the candidates: see check()
    plan_model = RankPlan
    template_kind = "pairwise"
    judged_units = "comparisons"  # each unit: one pair of candidates compared in one order
    judge_roles = ("judge",)
    own_candidates = True  # --candidates: the columns compared inside each row
    # The row score is the judge's consistency, not a candidate's quality: a rank job ranks
    # its candidates inside the job (the summary's Bradley-Terry strengths over all rows),
    # which has no per-row value to pair. The note says so.
    compared_on = RowValue(
        "judge_consistency",
        "judge consistency",
        note=(
            "rank rows are compared on the share of candidate pairs whose verdict survived the "
            "order swap (the judge's consistency), not on a candidate's quality; the ranking of "
            "candidates is in each job's metric summary"
        ),
    )

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        return rank_view(result, named)

    def judged_responses(self, row: RowInput, result: RowResult) -> Judged:
        """Each candidate's response, in the order the candidates were named: the dataset's
        column, or the one the model under test wrote for it (the result's details)."""
        generated = result.details.get("generated") or {}
        out: Judged = {}
        for name in result.details.get("candidates") or []:  # none: the row failed early
            text = row.data.get(name, generated.get(name))
            if isinstance(text, str):
                out[name] = text
        return out

    def _known(self, options: Mapping[str, Any]) -> frozenset[str]:
        template = resolve_template(options, "pairwise")
        known = set(template.columns) | {"prompt", "context"} | set(candidates_of(options))
        if (text := _prompt_template(options)) is not None:
            known |= set(placeholders_of(text, "--prompt-template"))
        return frozenset(known)

    def row_columns(
        self, number: int, record: Record, options: Options
    ) -> tuple[frozenset[str], tuple[str, ...]]:
        return self._known(options), ()

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        candidates = candidates_of(options)
        template = resolve_template(options, "pairwise")
        judging.temperature_of(options, judging.samples_of(options))
        _int_option(options, "bootstrap", bradley_terry.DEFAULT_BOOTSTRAP, 0)
        _int_option(options, "seed", 0, 0)
        if not rows:
            return []  # every row failed to load; their own errors say why
        columns = dataset_columns(rows)
        available = ", ".join(columns) or "(none)"
        for candidate in candidates:
            if candidate not in columns and not _generated(options, candidate):
                raise DatasetError(
                    f"candidate {candidate!r} is not a column of the dataset; columns "
                    f"available: {available} (a candidate that is not a column needs "
                    "options candidate_prompts or --prompt-template to generate it)"
                )
        if (text := _prompt_template(options)) is not None:
            for name in placeholders_of(text, "--prompt-template"):
                if name not in columns:
                    raise DatasetError(
                        f"--prompt-template placeholder {{{name}}} is not a column of the "
                        f"dataset; columns available: {available}"
                    )
        warnings = check_columns(template, rows)
        for row in rows:
            lacking = [c for c in candidates if c not in row.data and not _generated(options, c)]
            if lacking:
                warnings.append(
                    f"row {row.id} (line {row.line}): no response for {', '.join(lacking)}; "
                    "it will fail with input_error"
                )
        return warnings

    def plan(self, ctx: RowContext) -> RankPlan:
        options, row = ctx.options, ctx.row
        template = resolve_template(options, "pairwise")
        candidates = candidates_of(options)
        lacking = missing_inputs(row, template.requires)
        if lacking:
            raise InputError(row.id, lacking[0], f"missing (template {template.name} needs it)")
        document = judging.load_document(ctx)  # a broken document fails the row before any call
        generated: dict[str, str] = {}
        for candidate in candidates:
            if candidate in row.data:
                continue
            if not _generated(options, candidate):
                raise InputError(row.id, candidate, "missing (a candidate's response)")
            generated[candidate] = self._generate(ctx, candidate, document)
        judges, samples = ctx.job.judges, judging.samples_of(options)
        adaptive = judging.adaptive_of(options) is not None
        units = rank_units(judges, samples, candidates)
        return RankPlan(
            units=pairwise.one_per_comparison(units) if adaptive else units,
            adaptive=adaptive,
            template=template.name,
            template_version=template.version,
            candidates=candidates,
            judges=judges,
            samples=samples,
            generated=generated,
            bootstrap=_int_option(options, "bootstrap", bradley_terry.DEFAULT_BOOTSTRAP, 0),
            seed=_int_option(options, "seed", 0, 0),
        )

    def _generate(self, ctx: RowContext, candidate: str, document: DocumentView | None) -> str:
        """The candidate's response to this row, from the model under test (cached and
        counted apart from the judges)."""
        model, request = self._generation(
            ctx.row, candidate, document, ctx.options, ctx.job.judge_model
        )
        return ctx.candidate(model).generate(request).text.strip()

    def _generation(
        self,
        row: RowInput,
        candidate: str,
        document: DocumentView | None,
        options: Mapping[str, Any],
        job_model: str,
    ) -> tuple[str, JudgeRequest]:
        """(model, request) of the call that writes a candidate's response: with a guidance
        text, the candidate model (or the main judge) gets it; with --prompt-template, the
        candidate named as the model gets the template filled from the row."""
        guidance = _candidate_prompts(options).get(candidate)
        if guidance is not None:
            model = str(options.get("candidate_model") or job_model)
            return model, generation_request(guidance, row.data, document)
        template = _prompt_template(options)
        assert template is not None
        prompt = template.format_map({k: row.data.get(k, "") for k in placeholders_of(template)})
        media = document.media if document is not None else ()
        return candidate, JudgeRequest(prompt=prompt, media=media, temperature=0.0)

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """Responses to generate for candidates that are not columns, then every pair of
        candidates in both orders, per judge and sample."""
        options = env.options
        template = judging.dry_template(row, env, "pairwise")
        candidates = candidates_of(options)
        document = judging.dry_document(row, env)
        texts: dict[str, str] = {}
        for candidate in candidates:
            if candidate in row.data:
                texts[candidate] = str(row.data[candidate])
                continue
            if not _generated(options, candidate):
                raise InputError(row.id, candidate, "missing (a candidate's response)")
            model, request = self._generation(
                row, candidate, document, options, env.job.judge_model
            )
            env.call(request, model, GENERATION_ANSWER_TOKENS, candidate=True)
            env.count("responses to generate")
            texts[candidate] = placeholder_response(GENERATION_ANSWER_TOKENS)
        pairs = list(combinations(candidates, 2))
        env.count("candidate pairs", len(pairs))
        pairwise.dry_comparisons(row, env, template, texts, pairs)

    def run_unit(self, ctx: RowContext, plan: RankPlan, unit: RankUnit) -> Verdict:
        template = resolve_template(ctx.options, "pairwise")
        texts = {**plan.generated, **ctx.row.data}
        first, second = texts[unit.a], texts[unit.b]
        return pairwise.judge_comparison(
            ctx, template, unit, first, second, plan.samples, plan.adaptive
        )

    def aggregate(self, row: RowInput, plan: RankPlan, results: Mapping[int, Verdict]) -> RowResult:
        pairs, repeats = pairwise.spread_comparisons(
            plan.adaptive,
            plan.samples,
            judging.verdicts_for(plan, results),
            lambda u: f"{u.a} vs {u.b}",
        )
        entries = pairwise.comparisons(pairs)
        candidates = list(plan.candidates)
        points = dict.fromkeys(candidates, 0.0)
        for entry in entries:
            outcome = entry["outcome"]
            if outcome is None:
                entry["winner"], entry["value"] = None, None
                continue
            value = pairwise.OUTCOME_SCORE[outcome]
            entry["value"] = value
            entry["winner"] = {"A": entry["a"], "B": entry["b"]}.get(outcome, "tie")
            points[entry["a"]] += value
            points[entry["b"]] += 1.0 - value
        judged = [e for e in entries if e["outcome"] is not None]
        consistent = sum(bool(e["consistent"]) for e in judged)
        status = judging.judged_status(bool(judged), pairs)
        questions = pairwise.comparison_questions(
            pairs, plan.samples, lambda u: f"{u.a} vs {u.b}, {u.order} order, judge {u.judge}"
        )
        details = {
            "candidates": candidates,
            "points": points,
            "inconsistent": len(judged) - consistent,
            "comparisons": entries,
            "generated": plan.generated,
            "bootstrap": plan.bootstrap,
            "seed": plan.seed,
        }
        score = consistent / len(judged) if judged else None
        failure = "no pair was judged in both orders"
        return judging.rated_row(
            row, plan, pairs, status, score, questions, failure, details, repeats
        )

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        ranked = [r for r in rows if r.status != "failed" and r.details.get("candidates")]
        if not ranked:
            return {}
        first = ranked[0].details
        candidates: list[str] = list(first["candidates"])
        per_row = [
            [
                (e["a"], e["b"], float(e["value"]))
                for e in r.details.get("comparisons", [])
                if e.get("value") is not None
            ]
            for r in ranked
        ]
        result = bradley_terry.rank(
            candidates, per_row, bootstrap=int(first["bootstrap"]), seed=int(first["seed"])
        )
        matrix = bradley_terry.win_matrix(candidates, [c for row in per_row for c in row])
        entries = [e for r in ranked for e in r.details.get("comparisons", [])]
        judged = [e for e in entries if e.get("outcome") is not None]
        out: dict[str, Any] = {
            "ranking": " > ".join(result.order),
            "strength": {c: result.strength[c] for c in result.order},
            "strength_ci95": {c: list(result.ci95[c]) for c in result.order},
            "rank_ci95": {c: list(result.rank_ci95[c]) for c in result.order},
            "win_matrix": {
                f"{a} vs {b}": matrix[a][b]
                for i, a in enumerate(result.order)
                for b in result.order[i + 1 :]
            },
            "rows_ranked": len(ranked),
            "comparisons": len(judged),
            "inconsistency_rate": (
                sum(e.get("consistent") is False for e in judged) / len(judged) if judged else None
            ),
            "first_position_share": pairwise.first_position_share(entries),
            "bootstrap": result.bootstrap,
            "seed": result.seed,
        }
        judges = list(dict.fromkeys(str(e["judge"]) for e in judged))
        if len(judges) > 1:
            out |= _by_judge(candidates, ranked, judges)
        return out


def _by_judge(candidates: list[str], rows: list[RowResult], judges: list[str]) -> dict[str, Any]:
    """Each judge's own order (no intervals) and how far the judges agree pair by pair."""
    orders: dict[str, str] = {}
    labels: dict[str, dict[str, str]] = {}
    for judge in judges:
        values: dict[str, list[float]] = {}
        own = []
        for r in rows:
            for e in r.details.get("comparisons", []):
                if e.get("judge") == judge and e.get("value") is not None:
                    own.append((e["a"], e["b"], float(e["value"])))
                    values.setdefault(f"{r.id}: {e['a']} vs {e['b']}", []).append(e["value"])
        strength = bradley_terry.fit(candidates, own)
        orders[judge] = " > ".join(bradley_terry.order_of(strength, candidates))
        labels[judge] = {key: pairwise.winner_of(fmean(v)) for key, v in values.items()}
    return {"ranking_by_judge": orders, "agreement": label_agreement(labels)}


RANK: Metric[RankPlan, RankUnit] = Rank()
