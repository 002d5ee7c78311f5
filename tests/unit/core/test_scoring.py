"""Row scoring, coverage and the confidence interval, without Celery or Redis."""

from __future__ import annotations

import pytest

from evalq.core.models import Question, RowResult, Verdict
from evalq.core.scoring import (
    mean_ci95,
    missing_keywords,
    question_results,
    score_questions,
    tag_means,
)
from evalq.stats.intervals import mean_interval


def own_question(
    text: str, tag: str = "object", expected: str = "yes", keywords: list[str] | None = None
) -> Question:
    return Question(question=text, expected=expected, tag=tag, keywords=keywords or [])


def ok(i: int, answer: str) -> Verdict:
    return Verdict(index=i, status="ok", answer=answer)


def test_seed_example_teddy_bear() -> None:
    # The seed's worked example: 1 of 3 right; object tag 0.5, activity tag 0.0.
    questions = [
        own_question("Is there a teddy bear?"),
        own_question("Is there a skateboard?"),
        own_question("Is the bear riding it?", "activity"),
    ]
    results = question_results(questions, {0: ok(0, "yes"), 1: ok(1, "no"), 2: ok(2, "no")})
    status, score, tags = score_questions(results)
    assert status == "scored"
    assert score == pytest.approx(1 / 3)
    assert tags == {"activity": 0.0, "object": 0.5}


def test_unscored_questions_are_excluded_not_zero() -> None:
    questions = [own_question("a?"), own_question("b?"), own_question("c?", "color")]
    verdicts = {
        0: ok(0, "yes"),
        1: Verdict(index=1, status="unscored", reason="parse_error", detail="x"),
        2: Verdict(index=2, status="unscored", reason="blocked"),
    }
    results = question_results(questions, verdicts)
    status, score, tags = score_questions(results)
    assert (status, score, tags) == ("partial", 1.0, {"object": 1.0})
    assert [r.reason for r in results] == [None, "parse_error", "blocked"]
    assert [r.result for r in results] == [1, None, None]


def test_row_with_no_scored_question_is_failed_without_score() -> None:
    results = question_results(
        [own_question("a?")], {0: Verdict(index=0, status="unscored", reason="judge_error")}
    )
    assert score_questions(results) == ("failed", None, {})


def test_missing_verdict_is_unscored_judge_error() -> None:
    results = question_results([own_question("a?"), own_question("b?")], {0: ok(0, "no")})
    assert results[1].status == "unscored"
    assert results[1].reason == "judge_error"
    assert score_questions(results)[:2] == ("partial", 0.0)


def test_expected_no_answer_no_scores_one() -> None:
    results = question_results([own_question("Is there a dog?", expected="no")], {0: ok(0, "No")})
    assert results[0].result == 1


def test_missing_keywords_by_list_or_by_naming() -> None:
    questions = [
        own_question("Is there a circle?", keywords=["circle"]),
        own_question("Is the square blue?"),
    ]
    assert missing_keywords(["circle", "blue", "square", "left of"], questions) == ["left of"]
    assert missing_keywords([], questions) == []


def test_mean_ci95_is_the_interval_that_suits_the_scores() -> None:
    assert mean_ci95([]) == (None, None)
    values = [0.25, 0.75, 0.5, 0.5]
    interval = mean_interval(values)
    assert interval.method == "bca"
    assert mean_ci95(values) == (0.5, interval.ci95)
    mean, ci = mean_ci95([1.0] * 10)  # once a zero-wide t-interval
    assert mean == 1.0 and ci is not None and round(ci[0], 3) == 0.722


def test_tag_means_weigh_rows_equally() -> None:
    def row(tags: dict[str, float]) -> RowResult:
        return RowResult(id="x", line=1, prompt="p", status="scored", score=0.5, tag_scores=tags)

    means, counts = tag_means([row({"color": 1.0}), row({"color": 0.0, "object": 1.0})])
    assert means == {"color": 0.5, "object": 1.0}
    assert counts == {"color": 2, "object": 1}
