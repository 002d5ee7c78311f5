"""Every metric compared on its own row value, per group of the user's columns with Holm, a constant
difference that says why its interval is wide, and --fail-under's check. Pure: RowResults shaped
as each metric writes them."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides, comparison_dict
from evalq.comparisons.leaderboard import leaderboard, leaderboard_dict
from evalq.comparisons.thresholds import shortfalls
from evalq.core.groups import NO_VALUE
from evalq.core.models import QuestionResult, RowResult
from evalq.stats.multiple import holm
from evalq.stats.paired import compare_paired


def rating_unit(label: str, rating: int | None) -> QuestionResult:
    """A judge call as a rating metric stores it: its answer, never a 0/1 result."""
    return QuestionResult(
        question=label,
        tag="rating",
        expected="",
        answer=None if rating is None else str(rating),
        result=None,
        status="ok" if rating is not None else "unscored",
        reason=None if rating is not None else "parse_error",
    )


def sampled_row(row_id: str, ratings: list[int | None], **extra: Any) -> RowResult:
    """A pointwise row: two samples of one judge, the row score the mean on [0, 1]."""
    got = [r for r in ratings if r is not None]
    mean = sum(got) / len(got) if got else None
    return RowResult(
        id=row_id,
        line=int(row_id.strip("r")) if row_id.strip("r").isdigit() else 1,
        prompt=f"summarise {row_id}",
        status="failed" if mean is None else "scored",
        score=None if mean is None else (mean - 1) / 4,
        questions=[rating_unit(f"rating by j, sample {k}", r) for k, r in enumerate(ratings)],
        details={"mean_rating": mean, "ratings": got},
        extra=extra,
    )


def plain(row_id: str, score: float | None, metric_details: dict[str, Any]) -> RowResult:
    return RowResult(
        id=row_id,
        line=1,
        prompt=f"summarise {row_id}",
        status="failed" if score is None else "scored",
        score=score,
        questions=[rating_unit("verdict", None)],
        details=metric_details,
    )


def test_two_pointwise_jobs_pair_by_row_on_the_mean_rating() -> None:
    good = [sampled_row(f"r{i}", [5, 4] if i % 2 else [4, 4]) for i in range(8)]
    weak = [sampled_row(f"r{i}", [2, 3] if i % 3 else [3, 3]) for i in range(8)]
    weak[7] = sampled_row("r7", [None, None])  # unscored: left out and counted, never a 0
    comparison = compare_sides(
        [Side("good", good, metric="pointwise"), Side("weak", weak, metric="pointwise")]
    )
    (pair,) = comparison.pairs
    assert comparison.value.label == "mean rating (1-5)"
    assert pair.counts["paired"] == 7 and pair.counts["unscored_b"] == 1
    assert pair.counts["no_common_questions"] == 0
    diffs = [(good[i].details["mean_rating"] - weak[i].details["mean_rating"]) for i in range(7)]
    assert pair.overall.mean_diff == pytest.approx(sum(diffs) / 7)  # in rating points
    assert pair.overall.mean_a is not None and pair.overall.mean_a > 4
    assert pair.overall.p_permutation == pytest.approx(2 / 2**7)  # all 7 differences > 0
    assert pair.overall.ci95 is not None and pair.overall.ci_method == "bca"
    assert {r.value.label for r in pair.rows} == {"mean rating (1-5)"}
    data = comparison_dict(comparison)
    assert data["value"]["label"] == "mean rating (1-5)" and data["value"]["paired_by"] == "row"
    assert data["pairs"][0]["overall"]["p_permutation"] == pytest.approx(2 / 2**7)
    (first, second) = leaderboard(comparison)
    assert first.label == "good" and first.mean is not None and 4 <= first.mean <= 5
    assert first.ci95 is not None and 1 <= first.ci95[0] <= first.ci95[1] <= 5
    assert leaderboard_dict(comparison, [first, second])["value"]["key"] == "mean_rating"


@pytest.mark.parametrize(
    ("metric", "label", "details"),
    [
        ("pairwise", "win share of response A (0-1)", {"winner": "A"}),
        ("groundedness", "grounded share (0-1)", {"mean": {"grounded": 1.0}}),
        ("rank", "judge consistency (0-1)", {"candidates": ["x", "y"]}),
    ],
)
def test_pairwise_groundedness_and_rank_pair_by_row_score(
    metric: str, label: str, details: dict[str, Any]
) -> None:
    a = [plain(f"r{i}", 1.0 if i < 5 else 0.5, details) for i in range(6)]
    b = [plain(f"r{i}", 0.0 if i < 5 else None, details) for i in range(6)]
    comparison = compare_sides([Side("a", a, metric=metric), Side("b", b, metric=metric)])
    (pair,) = comparison.pairs
    assert comparison.value.label == label
    assert pair.counts["paired"] == 5 and pair.counts["unscored_b"] == 1
    assert pair.overall.mean_diff == pytest.approx(1.0)
    assert pair.overall.p_permutation == pytest.approx(2 / 2**5)
    if metric == "rank":  # honest about what a rank row's score is
        assert any("not on a candidate's quality" in n for n in comparison.notes)


def test_sides_of_different_metrics_compare_row_scores_and_say_so() -> None:
    a = [sampled_row(f"r{i}", [5, 5]) for i in range(3)]
    b = [plain(f"r{i}", 0.5, {}) for i in range(3)]
    comparison = compare_sides(
        [Side("a", a, metric="pointwise"), Side("b", b, metric="groundedness")]
    )
    assert comparison.value.key == "score" and not comparison.value.by_question
    assert any("different metrics" in n for n in comparison.notes)
    assert comparison.pairs[0].overall.mean_diff == pytest.approx(0.5)


def test_group_by_a_column_with_holm_over_the_groups() -> None:
    a, b = [], []
    for i in range(12):
        category = ["news", "science", None][i % 3]
        extra = {"category": category} if category else {}
        a.append(sampled_row(f"r{i}", [5, 5 - (i % 2)], **extra))
        b.append(sampled_row(f"r{i}", [2 + (i % 4 == 0), 3], **extra))
    comparison = compare_sides(
        [Side("a", a, metric="pointwise"), Side("b", b, metric="pointwise")],
        group_by=["category"],
    )
    (pair,) = comparison.pairs
    groups = {g.value: g for g in pair.groups}
    assert list(groups) == ["news", "science", NO_VALUE]
    assert all(g.column == "category" and g.stats.n == 4 for g in groups.values())
    news = [i for i in range(12) if i % 3 == 0]
    expected = sum(a[i].details["mean_rating"] - b[i].details["mean_rating"] for i in news) / len(
        news
    )
    assert groups["news"].stats.mean_diff == pytest.approx(expected)
    raw = [g.stats.p_permutation for g in pair.groups]
    assert [g.p_holm for g in pair.groups] == pytest.approx(holm(raw))
    assert all(g.p_holm is not None and g.p_holm >= g.stats.p_permutation for g in pair.groups)
    data = comparison_dict(comparison)
    assert data["group_by"] == ["category"]
    assert [g["value"] for g in data["pairs"][0]["groups"]] == ["news", "science", "(no value)"]
    assert data["pairs"][0]["groups"][0]["p_holm_groups"] == pytest.approx(pair.groups[0].p_holm)


def test_a_constant_difference_says_why_its_interval_is_wide() -> None:
    rows = [sampled_row(f"r{i}", [4, 4]) for i in range(10)]
    comparison = compare_sides(
        [Side("a", rows, metric="pointwise"), Side("b", rows, metric="pointwise")]
    )
    overall = comparison.pairs[0].overall
    assert overall.mean_diff == 0 and overall.ci_method == "wilson-bound"
    assert overall.ci_note is not None and "every paired difference is +0.000" in overall.ci_note
    assert overall.ci95 is not None and overall.ci95[1] > 1  # on the rating's scale (-4..4)
    json_overall = comparison_dict(comparison)["pairs"][0]["overall"]
    assert json_overall["ci_note"] == overall.ci_note
    assert compare_paired([0.5, 0.7], [0.1, 0.4]).ci_note is None  # bootstrapped: no note


def test_fail_under_checks_pairs_and_groups() -> None:
    a = [sampled_row(f"r{i}", [4, 4], category="x" if i < 3 else "y") for i in range(6)]
    b = [
        sampled_row(f"r{i}", [3, 3] if i < 3 else [5, 5], category="x" if i < 3 else "y")
        for i in range(6)
    ]
    comparison = compare_sides(
        [Side("a", a, metric="pointwise"), Side("b", b, metric="pointwise")],
        group_by=["category"],
    )
    assert comparison.pairs[0].overall.mean_diff == pytest.approx(0.0)
    assert shortfalls(comparison, -0.5) == [
        s for s in shortfalls(comparison, -0.5) if s.group == "y"
    ]
    (only,) = shortfalls(comparison, -0.5)
    assert (only.column, only.group, only.mean_diff) == ("category", "y", pytest.approx(-1.0))
    assert "category=y" in only.line(-0.5, "mean rating (1-5)")
    below = shortfalls(comparison, 0.5)
    assert [(s.column, s.group) for s in below] == [(None, None), ("category", "y")]
    assert shortfalls(comparison, -2) == []
    empty = compare_sides(
        [
            Side("a", [sampled_row("r1", [None])], metric="pointwise"),
            Side("b", [sampled_row("r1", [3])], metric="pointwise"),
        ]
    )
    (none,) = shortfalls(empty, -10)  # nothing paired: the check fails, never passes silently
    assert none.mean_diff is None and "no paired row" in none.line(-10, "x")
