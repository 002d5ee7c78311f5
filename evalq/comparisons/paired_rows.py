"""Two sides' scores for one prompt, on the questions both sides asked and scored.

A row's score is the share of its scored questions answered as expected (with --soft, the mean
probability of the expected answers), per judge, then the mean over judges. If A's validator
could not read question 3 but B's could, the two row scores cover different questions and
their difference is not a like-for-like one; nor is it when the two rows were asked different
questions (a rubric written again after the cache expired, a hand-edited question). So each
side is scored again, the same way, on the questions both sides asked (matched by question
text, expected answer and tag) and both scored; the others are left out and counted:
`questions_left_out` (asked by both, scored on one side only or neither) and
`questions_not_shared` (asked by one side only). A row pair with no question in common, or none
scored on both sides, is left out of the paired figures and counted (`no_common_questions`).
A row unscored on either side is left out and counted; it never becomes a 0.

Whether the two rows were asked the same questions is told by their question-set fingerprints
(RowResult.question_set), or, for a row without one, by the questions themselves: a pair is
`identical`, or compared on the questions both asked only (`common`).

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
# Whether the two rows were asked the same question set: "identical", or "common" (they
# differ, and are compared on the questions both asked); None: the rows carry no questions.
SetMatch = Literal["identical", "common"]
QKey = tuple[str, str, str, int]  # question, tag, expected, occurrence (within each judge)


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
    questions_left_out: int = 0  # asked by both sides, scored on one side only or on neither
    questions_not_shared: int = 0  # asked by one side only
    question_sets: SetMatch | None = None
    # What score_a and score_b are (its name and scale, e.g. "mean rating (1-5)").
    value: RowValue = QUESTION_SHARE
    # The row's value of each --group-by column ("(no value)" where the row has none).
    groups: dict[str, str] = field(default_factory=dict)

    @property
    def same_questions(self) -> bool:
        """False when the two rows were asked different questions (compared on the common
        ones only)."""
        return self.question_sets != "common"

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


def question_keys(questions: Sequence[QuestionResult]) -> dict[QKey, dict[str, QuestionResult]]:
    """A row's questions by (text, tag, expected answer, occurrence), each with its result per
    judge (a row judged by several judges lists every question once per judge)."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    out: dict[QKey, dict[str, QuestionResult]] = {}
    for q in questions:
        judge = q.judge_model or ""
        base = (q.question, q.tag, q.expected)
        out.setdefault((*base, seen[(*base, judge)]), {})[judge] = q
        seen[(*base, judge)] += 1
    return out


def _value(q: QuestionResult, soft: bool) -> float | None:
    """A question's part of its row's score: its result, or with --soft its probability."""
    if soft:
        return q.probability if q.status == "ok" else None
    return None if q.result is None else float(q.result)


def judged_score(
    questions: Sequence[QuestionResult], soft: bool = False
) -> tuple[float | None, dict[str, float]]:
    """The row's score and tag scores from scored questions: per judge the share answered as
    expected, each question counted by its weight (with ``soft`` the mean probability of the
    expected answer), then the mean over judges (as a Gecko or rubric row is scored)."""
    by_judge: dict[str, list[tuple[float, float]]] = defaultdict(list)
    by_tag: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        value = _value(q, soft)
        if value is None:
            continue
        judge = q.judge_model or ""
        weight = 1.0 if soft or q.weight <= 0 else q.weight
        by_judge[judge].append((value, weight))
        by_tag[q.tag][judge].append((value, weight))
    if not by_judge:
        return None, {}
    score = fmean(_weighted(v) for v in by_judge.values())
    tags = {tag: fmean(_weighted(v) for v in judges.values()) for tag, judges in by_tag.items()}
    return score, tags


def _weighted(values: Sequence[tuple[float, float]]) -> float:
    return sum(v * w for v, w in values) / sum(w for _, w in values)


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


def _soft(row: RowResult) -> bool:
    return row.details.get("soft") is True


def set_match(a: RowResult, b: RowResult) -> SetMatch:
    """Whether two rows were asked the same question set: by their fingerprints when both have
    one, else by their questions (text, tag, expected answer, as many times each)."""
    if a.question_set is not None and b.question_set is not None:
        return "identical" if a.question_set == b.question_set else "common"
    same = question_keys(a.questions).keys() == question_keys(b.questions).keys()
    return "identical" if same else "common"


def pair_questions(key: Key, a: RowResult | None, b: RowResult | None) -> PairedRow:
    if a is None or b is None:
        return PairedRow(key, a, b, "only_b" if a is None else "only_a")
    if not _scored(a) or not _scored(b):
        status: PairStatus = "unscored_both" if not (_scored(a) or _scored(b)) else "unscored_a"
        if _scored(a):
            status = "unscored_b"
        return PairedRow(key, a, b, status)
    qa, qb = question_keys(a.questions), question_keys(b.questions)
    if not qa and not qb:  # rows without questions: their scores as they are
        return PairedRow(
            key, a, b, "paired", a.score, b.score, dict(a.tag_scores), dict(b.tag_scores)
        )
    match = set_match(a, b)
    soft_a, soft_b = _soft(a), _soft(b)
    shared = [k for k in qa if k in qb]
    not_shared = len(qa) + len(qb) - 2 * len(shared)
    same_judges = {j for q in qa.values() for j in q} == {j for q in qb.values() for j in q}
    use_a: list[QuestionResult] = []
    use_b: list[QuestionResult] = []
    left_out = 0
    for k in shared:
        if same_judges:  # judge by judge: a question both sides' judge X scored
            for judge, qa_j in qa[k].items():
                qb_j = qb[k].get(judge)
                if qb_j is None or _value(qa_j, soft_a) is None or _value(qb_j, soft_b) is None:
                    left_out += 1
                    continue
                use_a.append(qa_j)
                use_b.append(qb_j)
            continue
        # Other judges on each side: a question scored by some judge on both sides.
        got_a = [q for q in qa[k].values() if _value(q, soft_a) is not None]
        got_b = [q for q in qb[k].values() if _value(q, soft_b) is not None]
        if got_a and got_b:
            use_a += got_a
            use_b += got_b
        else:
            left_out += 1
    score_a, tags_a = judged_score(use_a, soft_a)
    score_b, tags_b = judged_score(use_b, soft_b)
    if score_a is None or score_b is None:
        return PairedRow(
            key,
            a,
            b,
            "no_common_questions",
            questions_left_out=left_out,
            questions_not_shared=not_shared,
            question_sets=match,
        )
    return PairedRow(
        key,
        a,
        b,
        "paired",
        score_a,
        score_b,
        tags_a,
        tags_b,
        questions_left_out=left_out,
        questions_not_shared=not_shared,
        question_sets=match,
    )
