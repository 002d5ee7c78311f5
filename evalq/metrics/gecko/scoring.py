"""A Gecko row's score from its questions' verdicts, with one judge or several on one rubric;
with --soft from the probabilities of the expected answers (gecko.soft), the hard score kept
in details["hard_score"]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalq.core.models import (
    QuestionResult,
    RowInput,
    RowResult,
    Rubric,
    Verdict,
)
from evalq.core.question_sets import question_set_fingerprint
from evalq.core.scoring import (
    question_results,
    repeated_keywords,
    score_questions,
)
from evalq.metrics.gecko.judges import (
    Scorer,
    combine,
    judged_results,
)
from evalq.metrics.gecko.plan import BatchUnit, GeckoPlan
from evalq.metrics.gecko.soft import soft_score_questions, soften
from evalq.metrics.gecko.validation import expand_batch


def score_row(
    row: RowInput,
    rubric: Rubric,
    verdicts: Mapping[int, Verdict],
    by_judge: Mapping[str, Mapping[int, Verdict]] | None = None,
    *,
    soft: bool = False,
) -> RowResult:
    """The row's score from its questions' verdicts; with ``by_judge`` (several validator
    judges, each with its verdicts) the mean over the judges, and each judge's own figures in
    details["judges"]. With ``soft`` the scores are mean probabilities of the expected answers
    and the share answered as expected is details["hard_score"]. The result records the
    fingerprint of the rubric's questions (evalq.core.question_sets), whatever it scored."""
    details: dict[str, Any] = {}
    scorer: Scorer = soft_score_questions if soft else score_questions
    if by_judge is not None and len(by_judge) > 1:
        judged = {m: judged_results(rubric.questions, v, m) for m, v in by_judge.items()}
        if soft:
            details["hard_score"] = combine(judged)[1]
            judged = {m: _softened(r, by_judge[m]) for m, r in judged.items()}
        status, score, tag_scores, results, entries = combine(judged, scorer)
        details["judges"] = entries
        every = [v for judged in by_judge.values() for v in judged.values()]
    else:
        if by_judge:
            ((model, verdicts),) = by_judge.items()
            results = judged_results(rubric.questions, verdicts, model)
        else:
            results = question_results(rubric.questions, verdicts)
        if soft:
            details["hard_score"] = score_questions(results)[1]
            results = _softened(results, verdicts)
        status, score, tag_scores = scorer(results)
        every = list(verdicts.values())
    if repeated := repeated_keywords(rubric.questions):
        details["keywords_with_several_questions"] = repeated
    reasons = {r.reason for r in results if r.reason}
    return RowResult.of(
        row,
        status=status,
        score=score,
        tag_scores=tag_scores,
        coverage=rubric.coverage.fraction,
        coverage_missing=rubric.coverage.missing,
        questions=results,
        reason=(sorted(reasons)[0] if status == "failed" and reasons else None),
        error=("no question could be scored" if status == "failed" else None),
        simulated=rubric.simulated or any(v.simulated for v in every),
        details=details,
        question_set=question_set_fingerprint(rubric.questions),
    )


def _softened(
    results: list[QuestionResult], verdicts: Mapping[int, Verdict]
) -> list[QuestionResult]:
    """Each question's result with its verdict's soft probability (or unscored with why)."""
    out = []
    for i, result in enumerate(results):
        verdict = verdicts.get(i)
        probability = verdict.probability if verdict is not None else None
        detail = verdict.detail if verdict is not None else None
        out.append(soften(result, probability, detail))
    return out


def verdicts_by_judge(
    plan: GeckoPlan, results: Mapping[int, Verdict], count: int
) -> dict[str, dict[int, Verdict]]:
    """Each judge's verdicts by question index, from per-question or batched units."""
    out: dict[str, dict[int, Verdict]] = {model: {} for model in plan.judges}
    for unit in plan.units:
        bucket = out.setdefault(unit.judge_model, {})
        if isinstance(unit, BatchUnit):
            bucket.update(expand_batch(results.get(unit.index), count))
        elif (verdict := results.get(unit.index)) is not None:
            bucket[unit.question] = verdict.model_copy(update={"index": unit.question})
    return out
