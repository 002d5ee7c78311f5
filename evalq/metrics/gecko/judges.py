"""Several validator judges on one Gecko rubric: per-judge scores, their mean, and agreement.

The seeds advise more than one judge model, and one judge's quirks (a lazy "yes", a colour it
misreads) only show next to another's. Every judge answers every question of the same rubric
(written once, so the judges are compared on the same questions). Each judge's row score is
its own share of scored questions answered as expected; an unscored verdict is left out of that
judge's score and never counts as a 0. The row score is the mean over the judges that scored
anything, and agreement is measured per question on the judges' answers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any

from evalq.core.models import JobConfig, Question, QuestionResult, RowStatus, Verdict
from evalq.core.scoring import question_results, score_questions
from evalq.stats.agreement import label_agreement

# How a judge's question results become (status, score, tag scores): the share answered as
# expected, or with --soft the mean probability of the expected answer (gecko.soft).
Scorer = Callable[[Sequence[QuestionResult]], tuple[RowStatus, float | None, dict[str, float]]]


def rubric_model(job: JobConfig) -> str:
    """Who writes the rubric: options["rubric_model"] (--rubric-model), else the first judge."""
    named = job.options.get("rubric_model")
    return named if isinstance(named, str) and named else job.judges[0]


def judged_results(
    questions: Sequence[Question], verdicts: Mapping[int, Verdict], model: str
) -> list[QuestionResult]:
    return [
        r.model_copy(update={"judge_model": model}) for r in question_results(questions, verdicts)
    ]


def judge_entry(
    results: Sequence[QuestionResult], scorer: Scorer = score_questions
) -> dict[str, Any]:
    """One judge's figures on one row; ``answers`` (None where unscored) feed agreement."""
    status, score, tags = scorer(results)
    scored = sum(r.status == "ok" for r in results)
    return {
        "score": score,
        "tag_scores": tags,
        "status": status,
        "questions_scored": scored,
        "questions_unscored": len(results) - scored,
        "answers": [r.answer if r.result is not None else None for r in results],
    }


def combine(
    by_judge: Mapping[str, list[QuestionResult]], scorer: Scorer = score_questions
) -> tuple[RowStatus, float | None, dict[str, float], list[QuestionResult], dict[str, Any]]:
    """(status, score, tag scores, question results, per-judge details) of a row judged by
    several judges: scores are means over the judges that scored, questions are listed
    question by question with each judge's answer."""
    entries = {model: judge_entry(results, scorer) for model, results in by_judge.items()}
    scores = [e["score"] for e in entries.values() if e["score"] is not None]
    tags: dict[str, list[float]] = defaultdict(list)
    for entry in entries.values():
        for tag, value in entry["tag_scores"].items():
            tags[tag].append(value)
    count = max((len(r) for r in by_judge.values()), default=0)
    questions = [
        results[i] for i in range(count) for results in by_judge.values() if i < len(results)
    ]
    scored = sum(q.status == "ok" for q in questions)
    status: RowStatus = (
        "failed" if not scored else "scored" if scored == len(questions) else "partial"
    )
    return (
        status,
        fmean(scores) if scores else None,
        {tag: fmean(values) for tag, values in sorted(tags.items())},
        questions,
        entries,
    )


def summarize_judges(judged: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-judge means (row score and per tag) and agreement over the rows' questions;
    ``judged`` holds each row's details["judges"]."""
    models = list(dict.fromkeys(model for row in judged for model in row))
    per_judge: dict[str, Any] = {}
    for model in models:
        entries = [row[model] for row in judged if model in row]
        scores = [e["score"] for e in entries if e.get("score") is not None]
        tags: dict[str, list[float]] = defaultdict(list)
        for entry in entries:
            for tag, value in (entry.get("tag_scores") or {}).items():
                tags[tag].append(value)
        per_judge[model] = {
            "mean_score": fmean(scores) if scores else None,
            "rows_scored": len(scores),
            "rows_unscored": len(entries) - len(scores),
            "tag_scores": {tag: fmean(values) for tag, values in sorted(tags.items())},
        }
    answers: dict[str, dict[tuple[int, int], str | None]] = {m: {} for m in models}
    for r, row in enumerate(judged):
        for model in models:
            for q, answer in enumerate(row[model].get("answers") or [] if model in row else []):
                answers[model][(r, q)] = answer
    return {"per_judge": per_judge, "agreement": label_agreement(answers, items="questions")}
