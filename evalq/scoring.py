"""Row and job scores. Unscored questions are excluded and counted, never scored as 0."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist, fmean, stdev

from evalq.models import Question, QuestionResult, RowResult, RowStatus, Verdict

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
    out = []
    for i, q in enumerate(questions):
        v = verdicts.get(i)
        if v is None:
            out.append(
                QuestionResult(
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
                )
            )
            continue
        result = None
        if v.status == "ok" and v.answer is not None:
            result = 1 if answers_match(q.expected, v.answer) else 0
        out.append(
            QuestionResult(
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
            )
        )
    return out


def score_questions(
    results: Sequence[QuestionResult],
) -> tuple[RowStatus, float | None, dict[str, float]]:
    """Share of scored questions answered as expected, overall and per tag."""
    scored = [(r.tag, r.result) for r in results if r.result is not None]  # unscored: left out
    if not scored:
        return "failed", None, {}
    by_tag: dict[str, list[int]] = defaultdict(list)
    for tag, result in scored:
        by_tag[tag].append(result)
    score = sum(result for _, result in scored) / len(scored)
    status: RowStatus = "scored" if len(scored) == len(results) else "partial"
    return status, score, {tag: sum(v) / len(v) for tag, v in sorted(by_tag.items())}


_T_TABLE = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def t_quantile_975(df: int) -> float:
    """Two-sided 95% Student-t quantile: table for df <= 10, Cornish-Fisher beyond (err < 1e-3)."""
    if df <= 0:
        return math.inf
    if df <= len(_T_TABLE):
        return _T_TABLE[df - 1]
    z = NormalDist().inv_cdf(0.975)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_ci95(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """Mean and a t-interval; no interval from fewer than two values."""
    if not values:
        return None, None
    mean = fmean(values)
    if len(values) < 2:
        return mean, None
    half = t_quantile_975(len(values) - 1) * stdev(values) / math.sqrt(len(values))
    return mean, (max(0.0, mean - half), min(1.0, mean + half))


def tag_means(rows: Iterable[RowResult]) -> tuple[dict[str, float], dict[str, int]]:
    """Per tag, the mean of the rows' tag scores (each row weighs the same)."""
    sums: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for row in rows:
        for tag, value in row.tag_scores.items():
            sums[tag] += value
            counts[tag] += 1
    return {t: sums[t] / counts[t] for t in sorted(sums)}, dict(sorted(counts.items()))
