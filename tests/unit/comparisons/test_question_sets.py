"""Rows asked different questions are compared on the questions both sides asked (pure:
RowResults built by hand, each side rescored per judge then over judges as its row score is)."""

from __future__ import annotations

from statistics import fmean

import pytest

from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides, comparison_dict
from evalq.comparisons.paired_rows import pair_rows
from evalq.core.models import RowResult
from tests.support.results import answered

Spec = tuple[str, str, int | None]  # question, judge, result (None: unscored)


def scored_by_judges(
    row_id: str,
    specs: list[Spec],
    fingerprint: str | None = None,
    *,
    soft: dict[str, float] | None = None,
) -> RowResult:
    """A row scored as Gecko scores it: per judge the share answered as expected (the mean
    probability with `soft`: question -> probability), then the mean over judges."""
    questions = [
        answered(
            t,
            r,
            tag="color" if "colour" in t else "object",
            judge=j,
            probability=(soft or {}).get(t) if r is not None else None,
        )
        for t, j, r in specs
    ]
    per_judge: dict[str, list[float]] = {}
    for x in questions:
        value = x.probability if soft else x.result
        if value is not None:
            per_judge.setdefault(x.judge_model or "", []).append(float(value))
    score = fmean(fmean(v) for v in per_judge.values()) if per_judge else None
    return RowResult(
        id=row_id,
        line=int(row_id),
        prompt=f"prompt {row_id}",
        status="scored" if score is not None else "failed",
        score=score,
        questions=questions,
        question_set=fingerprint,
        details={"soft": True} if soft else {},
    )


def test_identical_sets_by_fingerprint_pair_question_by_question() -> None:
    a = scored_by_judges("1", [("shape?", "j", 1), ("colour?", "j", 0)], "f")
    b = scored_by_judges("1", [("shape?", "j", 1), ("colour?", "j", 1)], "f")
    paired = pair_rows(("1", 0), a, b)
    assert paired.question_sets == "identical" and paired.same_questions
    assert (paired.score_a, paired.score_b) == (0.5, 1.0)
    assert paired.questions_not_shared == 0


def test_rows_without_fingerprints_are_identical_when_their_questions_are() -> None:
    a = scored_by_judges("1", [("shape?", "j", 1), ("colour?", "j", 0)])
    b = scored_by_judges("1", [("colour?", "j", 1), ("shape?", "j", 0)])
    assert pair_rows(("1", 0), a, b).question_sets == "identical"
    c = scored_by_judges("1", [("shape?", "j", 1), ("size?", "j", 0)])
    assert pair_rows(("1", 0), a, c).question_sets == "common"


def test_different_sets_are_rescored_on_the_common_questions_per_judge_then_over_judges() -> None:
    # A was asked shape, colour, size by two judges; B shape, colour, count by one other.
    a = scored_by_judges(
        "1",
        [
            ("shape?", "j1", 1),
            ("colour?", "j1", 0),
            ("size?", "j1", 0),
            ("shape?", "j2", 1),
            ("colour?", "j2", 1),
            ("size?", "j2", 0),
        ],
        "fa",
    )
    b = scored_by_judges("1", [("shape?", "k", 0), ("colour?", "k", 1), ("count?", "k", 1)], "fb")
    paired = pair_rows(("1", 0), a, b)
    assert paired.status == "paired" and paired.question_sets == "common"
    # A on shape and colour: j1 1/2, j2 2/2, mean 0.75 (its own row score is 0.5).
    assert a.score == pytest.approx(0.5)
    assert paired.score_a == pytest.approx(0.75)
    assert paired.score_b == pytest.approx(0.5)
    assert paired.tags_a == {"object": 1.0, "color": 0.5}
    assert paired.tags_b == {"object": 0.0, "color": 1.0}
    assert paired.questions_not_shared == 2  # size (A), count (B)
    assert paired.questions_left_out == 0


def test_a_common_question_unscored_on_one_side_is_left_out_of_both() -> None:
    a = scored_by_judges("1", [("shape?", "j", 1), ("colour?", "j", None), ("size?", "j", 1)], "fa")
    b = scored_by_judges("1", [("shape?", "j", 0), ("colour?", "j", 1), ("count?", "j", 1)], "fb")
    paired = pair_rows(("1", 0), a, b)
    assert (paired.score_a, paired.score_b) == (1.0, 0.0)  # shape alone
    assert paired.questions_left_out == 1 and paired.questions_not_shared == 2


def test_soft_rows_are_rescored_on_their_probabilities() -> None:
    a = scored_by_judges(
        "1",
        [("shape?", "j", 1), ("colour?", "j", 1), ("size?", "j", 1)],
        "fa",
        soft={"shape?": 0.9, "colour?": 0.6, "size?": 0.1},
    )
    b = scored_by_judges(
        "1", [("shape?", "j", 1), ("colour?", "j", 0)], "fb", soft={"shape?": 0.8, "colour?": 0.3}
    )
    paired = pair_rows(("1", 0), a, b)
    assert paired.score_a == pytest.approx(0.75)  # (0.9 + 0.6) / 2
    assert paired.score_b == pytest.approx(0.55)


def test_no_question_in_common_is_left_out_and_counted() -> None:
    a = scored_by_judges("1", [("shape?", "j", 1)], "fa")
    b = scored_by_judges("1", [("size?", "j", 1)], "fb")
    paired = pair_rows(("1", 0), a, b)
    assert paired.status == "no_common_questions" and paired.diff is None
    assert paired.questions_not_shared == 2


def test_the_comparison_says_how_many_rows_share_their_set() -> None:
    rows_a, rows_b = [], []
    for i in range(1, 11):
        fingerprint = f"f{i}"
        rows_a.append(
            scored_by_judges(str(i), [("shape?", "j", 1), ("colour?", "j", 1)], fingerprint)
        )
        if i <= 8:
            rows_b.append(
                scored_by_judges(str(i), [("shape?", "j", 1), ("colour?", "j", i % 2)], fingerprint)
            )
        else:  # asked another colour question: compared on the shape alone
            rows_b.append(scored_by_judges(str(i), [("shape?", "j", 0), ("hue?", "j", 1)], "other"))
    rows_a.append(scored_by_judges("11", [("size?", "j", 1)], "g"))
    rows_b.append(scored_by_judges("11", [("count?", "j", 1)], "h"))
    comparison = compare_sides([Side("a", rows_a), Side("b", rows_b)])
    (pair,) = comparison.pairs
    sets = pair.question_sets
    assert (sets.paired, sets.identical, sets.common_only, sets.no_common) == (10, 8, 2, 1)
    assert sets.sentence() == (
        "question sets: 8 of 10 paired rows share an identical set; 2 compared on the "
        "questions both asked; 1 row pairs left out with no question in common"
    )
    assert pair.counts["paired"] == 10 and pair.counts["no_common_questions"] == 1
    assert pair.counts["questions_not_shared"] == 2 * 2 + 2
    diffs = [0.0, 0.5] * 4 + [1.0, 1.0]  # rows 9, 10: shape 1 vs 0
    assert pair.overall.mean_diff == pytest.approx(fmean(diffs))
    data = comparison_dict(comparison)["pairs"][0]
    assert data["question_sets"] == {
        "paired": 10,
        "identical": 8,
        "common_only": 2,
        "no_common": 1,
        "sentence": sets.sentence(),
    }


def test_rows_of_metrics_without_questions_say_nothing_of_question_sets() -> None:
    a = Side("a", [RowResult(id="1", line=1, prompt="p", status="scored", score=1.0)], metric="x")
    b = Side("b", [RowResult(id="1", line=1, prompt="p", status="scored", score=0.5)], metric="x")
    (pair,) = compare_sides([a, b]).pairs
    assert pair.overall.n == 1
    assert pair.question_sets.sentence() is None
