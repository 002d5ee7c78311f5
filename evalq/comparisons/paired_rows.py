"""Two sides' scores for one prompt, on the questions both sides could score.

A row's score is the share of its scored questions answered as expected. If A's validator
could not read question 3 but B's could, the two row scores cover different questions and
their difference is not a like-for-like one. So when both rows carry the same questions (the
rubric is written once per prompt and shared), each side is scored again on the questions
scored on both sides; the others are left out and counted. A row unscored on either side is
left out of the paired figures and counted; it never becomes a 0.

That question-level pairing is Gecko's. Every other metric's rows pair whole, on the value
the metric's rows are compared on (evalq.comparisons.values: a pointwise row's mean rating, a
pairwise row's win share of A, a groundedness row's grounded share): their questions are
judge calls (a rating, a verdict), not a shared rubric's questions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Literal

from evalq.comparisons.align import Key
from evalq.comparisons.values import QUESTION_SHARE, RowValue
from evalq.core.models import QuestionResult, RowResult

PairStatus = Literal[
    "paired",
    "only_a",
    "only_b",
    "unscored_a",
    "unscored_b",
    "unscored_both",
    "no_common_questions",
]
QKey = tuple[str, str, str, str, int]  # question, tag, expected, judge model, occurrence


@dataclass(frozen=True)
class PairedRow:
    key: Key
    row_a: RowResult | None
    row_b: RowResult | None
    status: PairStatus
    score_a: float | None = None
    score_b: float | None = None
    tags_a: dict[str, float] = field(default_factory=dict)
    tags_b: dict[str, float] = field(default_factory=dict)
    questions_left_out: int = 0  # scored on one side only, or on neither
    same_questions: bool = True  # False: the rubrics differ, the row scores are compared as is
    # What score_a and score_b are (its name and scale, e.g. "mean rating (1-5)").
    value: RowValue = QUESTION_SHARE
    # The row's value of each --group-by column ("(no value)" where the row has none).
    groups: dict[str, str] = field(default_factory=dict)

    @property
    def diff(self) -> float | None:
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_a - self.score_b

    @property
    def row(self) -> RowResult:
        row = self.row_a or self.row_b
        assert row is not None
        return row


def question_keys(questions: Sequence[QuestionResult]) -> dict[QKey, QuestionResult]:
    seen: Counter[tuple[str, str, str, str]] = Counter()
    out: dict[QKey, QuestionResult] = {}
    for q in questions:
        base = (q.question, q.tag, q.expected, q.judge_model or "")
        out[(*base, seen[base])] = q
        seen[base] += 1
    return out


def judged_score(
    questions: Sequence[QuestionResult],
) -> tuple[float | None, dict[str, float]]:
    """The row's score and tag scores from scored questions: per judge the share answered as
    expected, then the mean over judges (as a Gecko row is scored)."""
    by_judge: dict[str, list[int]] = defaultdict(list)
    by_tag: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        if q.result is None:
            continue
        judge = q.judge_model or ""
        by_judge[judge].append(q.result)
        by_tag[q.tag][judge].append(q.result)
    if not by_judge:
        return None, {}
    score = fmean(fmean(v) for v in by_judge.values())
    tags = {tag: fmean(fmean(v) for v in judges.values()) for tag, judges in by_tag.items()}
    return score, tags


def pair_rows(
    key: Key, a: RowResult | None, b: RowResult | None, value: RowValue = QUESTION_SHARE
) -> PairedRow:
    """The two sides' values of one row: Gecko's on shared questions, others' whole."""
    if not value.by_question:
        return pair_values(key, a, b, value)
    return pair_questions(key, a, b)


def pair_values(key: Key, a: RowResult | None, b: RowResult | None, value: RowValue) -> PairedRow:
    if a is None or b is None:
        return PairedRow(key, a, b, "only_b" if a is None else "only_a", value=value)
    va, vb = value.of(a), value.of(b)
    if va is None or vb is None:
        status: PairStatus = (
            "unscored_both"
            if va is None and vb is None
            else "unscored_a"
            if va is None
            else "unscored_b"
        )
        return PairedRow(key, a, b, status, value=value)
    return PairedRow(key, a, b, "paired", va, vb, value=value)


def _scored(row: RowResult | None) -> bool:
    return row is not None and row.status != "failed" and row.score is not None


def pair_questions(key: Key, a: RowResult | None, b: RowResult | None) -> PairedRow:
    if a is None or b is None:
        return PairedRow(key, a, b, "only_b" if a is None else "only_a")
    if not _scored(a) or not _scored(b):
        status: PairStatus = "unscored_both" if not (_scored(a) or _scored(b)) else "unscored_a"
        if _scored(a):
            status = "unscored_b"
        return PairedRow(key, a, b, status)
    qa, qb = question_keys(a.questions), question_keys(b.questions)
    if not qa or qa.keys() != qb.keys():
        return PairedRow(
            key,
            a,
            b,
            "paired",
            a.score,
            b.score,
            dict(a.tag_scores),
            dict(b.tag_scores),
            same_questions=not qa and not qb,
        )
    common = [k for k in qa if qa[k].result is not None and qb[k].result is not None]
    left_out = len(qa) - len(common)
    score_a, tags_a = judged_score([qa[k] for k in common])
    score_b, tags_b = judged_score([qb[k] for k in common])
    if score_a is None or score_b is None:
        return PairedRow(key, a, b, "no_common_questions", questions_left_out=left_out)
    return PairedRow(key, a, b, "paired", score_a, score_b, tags_a, tags_b, left_out)
