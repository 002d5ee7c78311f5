"""Gecko's validator asked more than once per question: a vote over its samples (a --soft
sample weighs its vote by its probability), scored by the share that gave the expected answer,
so a split question scores 0.5, never a sure 0 or 1."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from statistics import fmean
from typing import Any

from evalq.core.judge import Judge, MediaPart
from evalq.core.models import Question, Repeats, Sample, Verdict
from evalq.core.repeats import (
    SAMPLED_TEMPERATURE,
    ask_until_settled,
    budget_of,
    repeats_of,
    sample_verdicts,
    stored_decision,
)
from evalq.core.scoring import answers_match
from evalq.metrics.gecko.plan import GeckoPlan, QuestionUnit
from evalq.metrics.gecko.validation import ValidatorSpec, validate_question
from evalq.stats.adaptive import Budget, vote_decision


def samples_budget(options: Mapping[str, Any]) -> Budget | None:
    """The job's samples per question; None when each question is asked once."""
    budget = budget_of(options.get("samples"))
    return budget if budget.max_samples > 1 else None


def _own_probability(verdict: Verdict, question: Question) -> float | None:
    """A soft sample's probability of the answer it gave (it holds p(expected))."""
    if verdict.probability is None or verdict.answer is None:
        return None
    matched = answers_match(question.expected, verdict.answer)
    return verdict.probability if matched else 1.0 - verdict.probability


def repeated_question(
    judge: Judge,
    index: int,
    question: Question,
    media: MediaPart,
    spec: ValidatorSpec,
    budget: Budget,
    *,
    soft: bool,
) -> Verdict:
    """One question asked until its answer is settled (or K times); its verdict's answer is
    the samples' most frequent one and its probability the share that expected it."""

    def ask(sample: int) -> Verdict:
        asked = replace(spec, request=_sampled(spec, sample))
        return validate_question(judge, index, question, media, asked, soft=soft)[0]

    def decide(taken: list[Verdict]) -> Any:
        answers = [v.answer if v.status == "ok" else None for v in taken]
        weights = [_own_probability(v, question) if soft else None for v in taken]
        return vote_decision(answers, budget, weights)

    verdict = ask_until_settled(index, budget, ask, decide)
    taken = sample_verdicts(verdict) or []
    scored = [v for v in taken if v.status == "ok" and v.answer is not None]
    if verdict.status != "ok" or not scored:
        return verdict
    answers = [v.answer for v in scored if v.answer is not None]
    leader = max(dict.fromkeys(answers), key=answers.count)
    if soft:
        soft_ones = [v.probability for v in scored if v.probability is not None]
        share = fmean(soft_ones) if soft_ones else None
    else:
        share = fmean(1.0 if answers_match(question.expected, a) else 0.0 for a in answers)
    return verdict.model_copy(update={"answer": leader, "probability": share})


def _sampled(spec: ValidatorSpec, sample: int) -> Any:
    def request(question: Question, media: MediaPart) -> Any:
        made = spec.request(question, media)
        return replace(made, temperature=SAMPLED_TEMPERATURE, sample=sample)

    return request


def question_repeats(plan: GeckoPlan, results: Mapping[int, Verdict]) -> list[Repeats]:
    """Each repeated question's samples and certainty, per judge, in the rubric's order."""
    out = []
    for unit in plan.units:
        verdict = results.get(unit.index)
        if not isinstance(unit, QuestionUnit) or verdict is None:
            continue
        taken = sample_verdicts(verdict)
        if taken is None:
            continue
        question = plan.rubric.questions[unit.question]
        drawn = [
            Sample(
                answer=v.answer if v.status == "ok" else None,
                probability=_own_probability(v, question),
            )
            for v in taken
        ]
        name = f"q{unit.question + 1}: {question.question}"
        out.append(repeats_of(name, unit.judge_model, drawn, stored_decision(verdict) or {}))
    return out


def repeated(plan: GeckoPlan) -> bool:
    return plan.samples > 1
