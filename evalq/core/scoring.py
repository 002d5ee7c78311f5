"""Row and job scores. Unscored questions are excluded and counted, never scored as 0."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from evalq.core.models import Question, QuestionResult, RowResult, RowStatus, Verdict
from evalq.stats.intervals import mean_interval

_NORM_RE = re.compile(r"[^a-z0-9]+")


def _norm(text: str) -> str:
    return _NORM_RE.sub(" ", text.lower()).strip()


def missing_keywords(keywords: Sequence[str], questions: Sequence[Question]) -> list[str]:
    """Keywords no question claims to check (by its keyword list or by naming it)."""
    return [k for k in keywords if _norm(k) and not any(covers(q, k) for q in questions)]


def covers(question: Question, keyword: str) -> bool:
    """The question checks the keyword: it lists it, or failing that names it in its text."""
    norm = _norm(keyword)
    if not norm:
        return False
    return norm in {_norm(k) for k in question.keywords} or f" {norm} " in (
        f" {_norm(question.question)} "
    )


def checked_keywords(keywords: Sequence[str], question: Question) -> list[str]:
    """The prompt keywords a question checks, in the rubric's spelling: those it lists, else
    those its text names; a question naming none keeps what the judge wrote."""
    listed = {_norm(k) for k in question.keywords}
    claimed = [k for k in keywords if _norm(k) and _norm(k) in listed]
    if claimed:
        return claimed
    text = f" {_norm(question.question)} "
    named = [k for k in keywords if _norm(k) and f" {_norm(k)} " in text]
    return named or list(question.keywords)


def repeated_keywords(questions: Sequence[Question]) -> dict[str, int]:
    """Keywords checked by more than one question: they weigh more than the others."""
    counts = Counter(k for q in questions for k in dict.fromkeys(q.keywords))
    return {k: n for k, n in counts.items() if n > 1}


def answers_match(expected: str, answer: str) -> bool:
    return _norm(expected) == _norm(answer)


def question_results(
    questions: Sequence[Question], verdicts: Mapping[int, Verdict]
) -> list[QuestionResult]:
    """Pair each question with its verdict; a missing verdict is an unscored judge_error."""
    return [_question_result(q, verdicts.get(i)) for i, q in enumerate(questions)]


def _question_result(q: Question, v: Verdict | None) -> QuestionResult:
    if v is None:
        return QuestionResult(
            question=q.question,
            tag=q.tag,
            expected=q.expected,
            answer=None,
            result=None,
            status="unscored",
            reason="judge_error",
            detail="no verdict was recorded",
            keywords=q.keywords,
            source=q.source,
            human=q.human,
            human_error=q.human_error,
            weight=q.weight,
        )
    result = None
    if v.status == "ok" and v.answer is not None:
        result = 1 if answers_match(q.expected, v.answer) else 0
    return QuestionResult(
        question=q.question,
        tag=q.tag,
        expected=q.expected,
        answer=v.answer,
        result=result,
        status="ok" if result is not None else "unscored",
        reason=v.reason if result is None else None,
        detail=v.detail,
        keywords=q.keywords,
        judge_model=v.judge_model,
        source=q.source,
        human=q.human,
        human_error=q.human_error,
        model_version=v.model_version,
        weight=q.weight,
    )


def score_questions(
    results: Sequence[QuestionResult],
) -> tuple[RowStatus, float | None, dict[str, float]]:
    """Share of scored questions answered as expected, overall and per tag, each question
    counted by its weight (1 unless the metric gives importances)."""
    scored = [r for r in results if r.result is not None]  # unscored: left out
    if not scored:
        return "failed", None, {}
    by_tag: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in scored:
        by_tag[r.tag].append(r)
    status: RowStatus = "scored" if len(scored) == len(results) else "partial"
    tags = {tag: _weighted_share(rs) for tag, rs in sorted(by_tag.items())}
    return status, _weighted_share(scored), tags


def _weighted_share(scored: Sequence[QuestionResult]) -> float:
    total = sum(r.weight for r in scored)
    if total <= 0:  # weights are positive; a hand-made zero counts every question alike
        return sum(r.result or 0 for r in scored) / len(scored)
    return sum(r.weight * (r.result or 0) for r in scored) / total


def mean_ci95(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """Mean and 95% interval of row scores, by the method that suits them (evalq.stats.intervals)."""
    interval = mean_interval(values)
    return interval.mean, interval.ci95


def tag_values(rows: Iterable[RowResult]) -> dict[str, list[float]]:
    """Per tag, the rows' tag scores (one value per row that has the tag)."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for tag, value in row.tag_scores.items():
            values[tag].append(value)
    return {tag: values[tag] for tag in sorted(values)}


def score_figures(rows: Sequence[RowResult]) -> dict[str, Any]:
    """The rows counted, the mean score with its interval, and the tag scores with their row
    counts, of some of a job's rows (one candidate's cells, one group's rows): the fields of
    evalq.core.models.ScoreFigures, which CandidateSummary and GroupSummary extend."""
    overall = mean_interval([r.score for r in rows if r.score is not None])
    by_tag = {tag: mean_interval(values) for tag, values in tag_values(rows).items()}
    return {
        "rows": len(rows),
        "rows_scored": sum(r.status == "scored" for r in rows),
        "mean_score": overall.mean,
        "ci95": overall.ci95,
        "ci_method": overall.method,
        "tag_scores": {tag: t.mean for tag, t in by_tag.items() if t.mean is not None},
        "tag_counts": {tag: t.n for tag, t in by_tag.items()},
    }


def tag_means(rows: Iterable[RowResult]) -> tuple[dict[str, float], dict[str, int]]:
    """Per tag, the mean of the rows' tag scores (each row weighs the same)."""
    values = tag_values(rows)
    return {t: fmean(v) for t, v in values.items()}, {t: len(v) for t, v in values.items()}
