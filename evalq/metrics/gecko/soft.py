"""Gecko's soft scores (--soft): a yes/no question scored by the probability the validator gave
the expected answer, not by whether it chose it.

The Gecko paper (Wiles et al., 2024, "Revisiting Text-to-Image Evaluation with Gecko", its VQA
scoring) scores a question by the VQA model's probability of the expected answer normalised
over the two answers: p(expected) / (p(yes) + p(no)). Here p comes from the answer token's top
candidates in Gemini's logprobsResult (asked with response_logprobs=True and logprobs=N; field
names as google-genai's types.LogprobsResult, github.com/googleapis/python-genai
google/genai/types.py): every candidate that reads as "yes" (any case, with or without a
leading space or quote) adds to p(yes), likewise for "no". An answer absent from the top N
counts 0: its probability is below the smallest listed, so the error is at most that. A reply
whose answer token cannot be found, or whose top candidates hold neither answer, has no soft
score: the question is unscored (``parse_error``) with why, never 0 or 1.

Which models and APIs give log probabilities, and the 400 the others send, are in
evalq.metrics.gecko.soft_models.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.judge import ReplyLogprobs, TokenStep
from evalq.core.models import QuestionResult, RowStatus

# Top candidates asked per token: the API takes 1..20 (the range the generative-ai notebook
# gemini/logprobs/intro_logprobs.ipynb states, see GoogleCloudPlatform/generative-ai#2947).
# Five holds both answers whenever either is at all likely, at a small cost in reply size.
SOFT_TOP_CANDIDATES = 5

# Where the validator's answer value starts in its JSON reply ({"explanation": ..., "answer":
# "yes"}): the key as JSON writes it, an unescaped quote before it (a quote inside the
# explanation is escaped), then the value's opening quote.
_ANSWER_KEY = re.compile(r'(?<!\\)"answer"\s*:\s*"')
_ANSWERS = ("yes", "no")


@dataclass(frozen=True)
class SoftAnswer:
    """A question's soft reading: p(expected) normalised over yes/no, or why there is none."""

    probability: float | None
    detail: str | None = None


def _reads_as(token: str) -> str | None:
    word = token.strip().strip('"').strip().lower()
    return word if word in _ANSWERS else None


def answer_step(logprobs: ReplyLogprobs) -> TokenStep | None:
    """The decoding step that wrote the answer's value: the step whose token covers the first
    character after the last ``"answer": "`` in the text the chosen tokens spell; in a bare
    reply ("yes", which the validator's parser also reads) its one word."""
    text, starts = "", []
    for step in logprobs.steps:
        starts.append(len(text))
        text += step.chosen.token
    found = list(_ANSWER_KEY.finditer(text))
    if not found:
        if _reads_as(text) is None:
            return None
        return next((s for s in logprobs.steps if _reads_as(s.chosen.token) is not None), None)
    at = found[-1].end()
    for step, start in zip(logprobs.steps, starts, strict=True):
        if start <= at < start + len(step.chosen.token):
            return step
    return None


def answer_probabilities(step: TokenStep) -> tuple[float, float]:
    """(p(yes), p(no)) at the answer's step: summed over the candidates that read as each
    answer; the chosen token counts when the top list leaves it out."""
    seen = {c.token for c in step.top}
    pool = list(step.top) + ([step.chosen] if step.chosen.token not in seen else [])
    sums = dict.fromkeys(_ANSWERS, 0.0)
    for candidate in pool:
        word = _reads_as(candidate.token)
        if word is not None and math.isfinite(candidate.log_probability):
            sums[word] += math.exp(candidate.log_probability)
    return sums["yes"], sums["no"]


def soft_answer(expected: str, logprobs: ReplyLogprobs | None) -> SoftAnswer:
    """p(expected) / (p(yes) + p(no)) from the reply's log probabilities."""
    want = _reads_as(expected)
    if want is None:
        return SoftAnswer(None, f"--soft scores yes/no questions; this one expects {expected!r}")
    if logprobs is None or not logprobs.steps:
        return SoftAnswer(None, "--soft: the reply carries no log probabilities (logprobsResult)")
    step = answer_step(logprobs)
    if step is None:
        return SoftAnswer(None, "--soft: no token of the reply writes the answer's value")
    if _reads_as(step.chosen.token) is None:
        return SoftAnswer(
            None, f"--soft: the answer's token {step.chosen.token!r} reads as neither yes nor no"
        )
    p_yes, p_no = answer_probabilities(step)
    if p_yes + p_no <= 0.0:
        return SoftAnswer(
            None, "--soft: neither yes nor no is among the answer token's top candidates"
        )
    return SoftAnswer((p_yes if want == "yes" else p_no) / (p_yes + p_no))


def soft_score_questions(
    results: Sequence[QuestionResult],
) -> tuple[RowStatus, float | None, dict[str, float]]:
    """The mean soft probability of the questions that have one, overall and per tag; the
    others are left out and make the row partial (failed when none has one)."""
    scored = [(r.tag, r.probability) for r in results if r.probability is not None]
    if not scored:
        return "failed", None, {}
    by_tag: dict[str, list[float]] = defaultdict(list)
    for tag, probability in scored:
        by_tag[tag].append(probability)
    status: RowStatus = "scored" if len(scored) == len(results) else "partial"
    score = math.fsum(p for _, p in scored) / len(scored)
    return status, score, {t: math.fsum(v) / len(v) for t, v in sorted(by_tag.items())}


def soften(result: QuestionResult, probability: float | None, detail: str | None) -> QuestionResult:
    """A question result with its soft probability beside the hard answer and result (both are
    kept); with no probability the question is unscored, with why."""
    if result.status != "ok":
        return result  # unscored already (judge error, parse error): its own reason stands
    if probability is None:
        return result.model_copy(
            update={
                "status": "unscored",
                "reason": "parse_error",
                "detail": detail or "--soft: no probability was recorded for the answer",
            }
        )
    return result.model_copy(update={"probability": probability})
