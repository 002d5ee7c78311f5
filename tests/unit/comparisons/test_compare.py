"""Alignment and paired comparison of result sets (pure: RowResults built by hand)."""

from __future__ import annotations

import pytest

from evalq.comparisons.align import Side, align
from evalq.comparisons.comparison import compare_sides, comparison_dict
from evalq.comparisons.leaderboard import leaderboard, leaderboard_dict
from evalq.comparisons.paired_rows import pair_rows
from evalq.core.models import RowResult
from evalq.stats.paired import compare_paired
from tests.support.results import answered


def compared_row(
    row_id: str,
    prompt: str,
    results: list[tuple[str, str, int | None]],
    line: int = 1,
) -> RowResult:
    questions = [answered(t, r, tag=g) for t, g, r in results]
    scored = [x.result for x in questions if x.result is not None]
    tags: dict[str, list[int]] = {}
    for x in questions:
        if x.result is not None:
            tags.setdefault(x.tag, []).append(x.result)
    return RowResult(
        id=row_id,
        line=line,
        prompt=prompt,
        status="failed" if not scored else "scored",
        score=sum(scored) / len(scored) if scored else None,
        tag_scores={t: sum(v) / len(v) for t, v in tags.items()},
        questions=questions,
    )


def simple(row_id: str, prompt: str, score: float | None, line: int = 1) -> RowResult:
    return RowResult(
        id=row_id,
        line=line,
        prompt=prompt,
        status="failed" if score is None else "scored",
        score=score,
    )


def test_rows_pair_by_id_when_ids_name_the_same_prompts() -> None:
    a = Side("a", [simple("x", "p1", 1.0, 1), simple("y", "p2", 0.5, 2)])
    b = Side("b", [simple("y", "p2", 0.0, 1), simple("x", "p1", 1.0, 2), simple("z", "p3", 1, 3)])
    alignment = align([a, b])
    assert alignment.by == "id" and alignment.note is None
    assert alignment.rows[("y", 0)][0] is not None
    assert alignment.rows[("y", 0)][1] is not None
    assert alignment.counts == {"a": 0, "b": 1}


def test_rows_pair_by_prompt_when_ids_are_line_numbers_of_other_files() -> None:
    a = Side("a", [simple("1", "red circle", 1.0, 1), simple("2", "blue square", 0.5, 2)])
    b = Side("b", [simple("1", "blue square", 0.0, 1), simple("2", "red circle", 1.0, 2)])
    alignment = align([a, b])
    assert alignment.by == "prompt" and alignment.note is not None
    first, second = alignment.rows[("red circle", 0)]
    assert first is not None and second is not None
    assert (first.line, second.line) == (1, 2)
    # Forced by id, the same rows pair wrongly, as asked.
    assert align([a, b], "id").by == "id"


def test_repeated_prompts_pair_by_occurrence() -> None:
    a = Side("a", [simple("1", "p", 1.0, 1), simple("2", "p", 0.0, 2)])
    b = Side("b", [simple("9", "p", 0.5, 1), simple("8", "p", 0.25, 2)])
    alignment = align([a, b])
    assert alignment.by == "prompt"
    assert [r.score for r in alignment.rows[("p", 1)] if r] == [0.0, 0.25]


def test_unscored_rows_are_left_out_and_counted_never_zero() -> None:
    a = Side(
        "a",
        [simple("1", "p1", 1.0, 1), simple("2", "p2", None, 2), simple("3", "p3", 0.5, 3)],
    )
    b = Side(
        "b",
        [simple("1", "p1", 0.5, 1), simple("2", "p2", 0.0, 2), simple("3", "p3", None, 3)],
    )
    result = compare_sides([a, b])
    (pair,) = result.pairs
    assert pair.counts["paired"] == 1
    assert pair.counts["unscored_a"] == 1 and pair.counts["unscored_b"] == 1
    assert pair.overall.n == 1 and pair.overall.mean_diff == pytest.approx(0.5)


def test_questions_unscored_on_either_side_are_left_out_of_both_scores() -> None:
    a = compared_row("r", "p", [("q1", "color", 1), ("q2", "object", None), ("q3", "object", 1)])
    b = compared_row("r", "p", [("q1", "color", 0), ("q2", "object", 1), ("q3", "object", 1)])
    paired = pair_rows(("r", 0), a, b)
    assert paired.status == "paired"
    assert paired.questions_left_out == 1
    # B's own score is 2/3, but on the questions both sides scored it is 1/2.
    assert b.score == pytest.approx(2 / 3)
    assert (paired.score_a, paired.score_b) == (1.0, 0.5)
    assert paired.tags_a == {"color": 1.0, "object": 1.0}
    assert paired.tags_b == {"color": 0.0, "object": 1.0}


def test_different_rubrics_are_compared_on_the_questions_both_asked() -> None:
    a = compared_row("r", "p", [("q1", "color", 1), ("q2", "object", 0)])
    b = compared_row("r", "p", [("q1", "color", 0), ("other question", "color", 1)])
    paired = pair_rows(("r", 0), a, b)
    assert paired.status == "paired" and not paired.same_questions
    assert paired.question_sets == "common"
    assert (paired.score_a, paired.score_b) == (1.0, 0.0)  # on q1 alone
    assert paired.questions_not_shared == 2


def test_rubrics_with_no_question_in_common_are_left_out() -> None:
    a = compared_row("r", "p", [("q1", "color", 1), ("q2", "object", 0)])
    b = compared_row("r", "p", [("other question", "color", 1)])
    paired = pair_rows(("r", 0), a, b)
    assert paired.status == "no_common_questions" and paired.diff is None
    assert paired.questions_not_shared == 3


def test_no_question_scored_on_both_sides_is_not_a_pair() -> None:
    a = compared_row("r", "p", [("q1", "color", 1), ("q2", "object", None)])
    b = compared_row("r", "p", [("q1", "color", None), ("q2", "object", 1)])
    paired = pair_rows(("r", 0), a, b)
    assert paired.status == "no_common_questions" and paired.diff is None
    assert paired.questions_left_out == 2


def two_models(n: int = 10) -> tuple[Side, Side]:
    """A answers every question; B misses the colour on every other prompt."""
    rows_a, rows_b = [], []
    for i in range(n):
        prompt = f"prompt {i}"
        rows_a.append(
            compared_row(str(i), prompt, [("shape?", "object", 1), ("colour?", "color", 1)], i)
        )
        miss = 0 if i % 2 == 0 else 1
        rows_b.append(
            compared_row(str(i), prompt, [("shape?", "object", 1), ("colour?", "color", miss)], i)
        )
    return Side("good", rows_a, job_id="ja"), Side("bad", rows_b, job_id="jb")


def test_comparison_overall_and_per_tag_with_counts() -> None:
    good, bad = two_models()
    result = compare_sides([good, bad])
    (pair,) = result.pairs
    assert pair.overall.n == 10
    assert pair.overall.mean_diff == pytest.approx(0.25)
    assert (pair.overall.wins, pair.overall.ties, pair.overall.losses) == (5, 5, 0)
    assert pair.overall.p_permutation == pytest.approx(2 / 32)  # 5 equal wins: 2 of 2**5
    assert pair.p_holm == pair.overall.p_permutation  # one pair: nothing to correct
    assert pair.tags["color"].stats.mean_diff == pytest.approx(0.5)
    assert pair.tags["color"].stats.n == 10
    assert pair.tags["object"].stats.mean_diff == 0
    reference = compare_paired([1.0] * 10, [0.5, 1.0] * 5)
    assert pair.overall.ci95 == reference.ci95
    top = pair.top_rows(3)
    assert [r.row.id for r in top] == ["0", "2", "4"]
    data = comparison_dict(result)
    assert data["pairs"][0]["overall"]["significant"] is False  # p = 0.0625 at 10 rows
    assert data["pairs"][0]["top_rows"][0]["questions"][1] == {
        "question": "colour?",
        "tag": "color",
        "expected": "yes",
        "judge_model": None,
        "answer_a": "yes",
        "result_a": 1,
        "reason_a": None,
        "answer_b": "no",
        "result_b": 0,
        "reason_b": None,
    }
    assert data["seed"] == result.seed and data["correction"] is None


def test_three_sides_every_pair_with_holm_and_a_leaderboard() -> None:
    good, bad = two_models(20)
    worse = Side(
        "worse",
        [
            compared_row(
                str(i), f"prompt {i}", [("shape?", "object", 0), ("colour?", "color", 0)], i
            )
            for i in range(20)
        ],
    )
    result = compare_sides([bad, good, worse])
    assert [(p.a, p.b) for p in result.pairs] == [
        ("bad", "good"),
        ("bad", "worse"),
        ("good", "worse"),
    ]
    raw = [p.overall.p_permutation for p in result.pairs]
    assert all(p is not None for p in raw)
    # bad-good: 10 rows differ by 0.25 (2 of 2**10 patterns); the other two pairs differ on
    # all 20 rows (2 of 2**20). Holm: the two smallest x3 and x2, kept non-decreasing (both
    # 3p); the largest x1.
    assert raw == pytest.approx([2 / 2**10, 2 / 2**20, 2 / 2**20])
    assert [p.p_holm for p in result.pairs] == pytest.approx([2 / 2**10, 6 / 2**20, 6 / 2**20])
    assert "Holm" in result.holm_note and "3 comparisons" in result.holm_note
    standings = leaderboard(result)
    assert [s.label for s in standings] == ["good", "bad", "worse"]
    assert [s.rank for s in standings] == [1, 2, 3]
    assert standings[0].beats == ["bad", "worse"]
    assert standings[2].beaten_by == ["bad", "good"]
    assert standings[0].tags["color"] == (1.0, 20)
    data = leaderboard_dict(result, standings)
    assert data["candidates"][1]["significantly_better_than"] == ["worse"]
    assert data["rows_common"] == 20


def test_leaderboard_means_are_over_rows_every_candidate_scored() -> None:
    a = Side("a", [simple("1", "p1", 1.0, 1), simple("2", "p2", 0.0, 2)])
    b = Side("b", [simple("1", "p1", 0.5, 1), simple("2", "p2", None, 2)])
    standings = leaderboard(compare_sides([a, b]))
    assert {s.label: (s.mean, s.rows, s.rows_scored) for s in standings} == {
        "a": (1.0, 1, 2),
        "b": (0.5, 1, 1),
    }


def test_sides_need_their_own_labels() -> None:
    good, _ = two_models()
    with pytest.raises(ValueError, match="own label"):
        compare_sides([good, good])


def test_a_row_rejected_at_load_has_no_prompt_and_does_not_break_id_pairing() -> None:
    a = Side("a", [simple("x", "p1", 1.0, 1), simple("y", "p2", 0.5, 2)])
    b = Side("b", [simple("x", "p1", 0.5, 1), simple("y", "", None, 2)])
    result = compare_sides([a, b])
    assert result.by == "id"
    assert result.pairs[0].counts["unscored_b"] == 1
    by_prompt = align([a, b], "prompt")
    assert by_prompt.counts == {"a": 1, "b": 1}  # p2 and the prompt-less row pair with nothing
