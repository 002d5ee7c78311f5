"""`--samples auto` on the rating metrics, in-process: each judge's unit asks again only while
its verdict is undecided, every sample its own call (its sample index, a temperature above
zero), and every repeated unit (fixed or adaptive) shows its samples and certainty."""

from __future__ import annotations

from pathlib import Path

from evalq.core.judge import JudgeRequest
from evalq.stats.adaptive import VOTE_RULE
from tests.support.metric_harness import Harness, MemoryJudge, qa_inputs
from tests.support.prompts import extract_section
from tests.support.ranking_rows import CANDIDATES, by_level, level_rows
from tests.support.rating_replies import choice, rating

QA = {"template": "question_answering_quality"}


def _by_sample(ratings: list[int]) -> MemoryJudge:
    return MemoryJudge("j", lambda request: rating(ratings[request.sample]))


def test_an_easy_rating_stops_at_three_samples() -> None:
    judge = _by_sample([4] * 8)
    plan, _, result = Harness("pointwise", {**QA, "samples": "auto"}, {"j": judge}).run_row(
        qa_inputs()[0]
    )
    assert len(plan.units) == 1 and plan.adaptive
    assert [r.sample for r in judge.requests] == [0, 1, 2]
    assert all(r.temperature > 0 for r in judge.requests)
    (repeats,) = result.repeats
    assert (repeats.verdict, repeats.decided, repeats.rule) == ("4", True, VOTE_RULE)
    assert [s.answer for s in repeats.samples] == ["4", "4", "4"]
    assert result.details["ratings"] == [4, 4, 4]


def test_a_split_rating_runs_to_the_maximum_and_stays_undecided() -> None:
    judge = _by_sample([4, 5] * 8)
    _, _, result = Harness("pointwise", {**QA, "samples": "auto:6"}, {"j": judge}).run_row(
        qa_inputs()[0]
    )
    assert len(judge.requests) == 6
    (repeats,) = result.repeats
    assert (repeats.verdict, repeats.decided) == (None, False)
    assert result.details["mean_rating"] == 4.5  # a split vote, not a sure 4 or 5
    assert len(result.questions) == 6


def test_fixed_samples_carry_repeats_too() -> None:
    judge = _by_sample([3, 3, 3])
    _, _, result = Harness("pointwise", {**QA, "samples": 3}, {"j": judge}).run_row(qa_inputs()[0])
    (repeats,) = result.repeats
    assert (repeats.rule, repeats.verdict, len(repeats.samples)) == ("fixed", "3", 3)


def test_one_sample_has_no_repeats() -> None:
    judge = _by_sample([3])
    _, _, result = Harness("pointwise", QA, {"j": judge}).run_row(qa_inputs()[0])
    assert result.repeats == []


def _choosing(picks: list[str]) -> MemoryJudge:
    """Chooses by call: picks[2 * sample + (1 if swapped)], as the judge wrote it (swapped: A
    is the original B)."""

    def reply(request: JudgeRequest) -> str:
        swapped = "Second answer." in (extract_section(request.prompt, "response_a") or "")
        return choice(picks[2 * request.sample + swapped])

    return MemoryJudge("j", reply)


PAIR = {"prompt": "Q?", "response_a": "First answer.", "response_b": "Second answer."}


def test_a_consistent_comparison_stops_at_two_samples_in_both_orders() -> None:
    judge = _choosing(["A", "B"] * 8)  # A wins in both orders
    harness = Harness("pairwise", {"samples": "auto"}, {"j": judge})
    (row,) = harness.rows([PAIR])
    plan, _, result = harness.run_row(row)
    assert len(plan.units) == 1
    assert [r.sample for r in judge.requests] == [0, 0, 1, 1]
    (repeats,) = result.repeats
    assert [(s.answer, s.order) for s in repeats.samples] == [("A", "AB"), ("A", "BA")] * 2
    assert (repeats.verdict, repeats.decided, result.details["winner"]) == ("A", True, "A")
    assert result.status == "scored" and len(result.details["comparisons"]) == 2


def test_an_order_dependent_comparison_is_undecided_at_the_maximum() -> None:
    judge = _choosing(["A", "A"] * 8)  # whichever is shown first
    harness = Harness("pairwise", {"samples": "auto:4"}, {"j": judge})
    (row,) = harness.rows([PAIR])
    _, _, result = harness.run_row(row)
    assert len(judge.requests) == 8
    (repeats,) = result.repeats
    assert (repeats.verdict, repeats.decided) == (None, False)
    assert result.score == 0.5  # a split vote, never a sure win


def test_rank_asks_each_pair_until_it_is_settled(tmp_path: Path) -> None:
    judge = by_level()
    harness = Harness("rank", {**CANDIDATES, "samples": "auto"}, {judge.model: judge})
    (row,) = harness.load(level_rows(tmp_path, 1)).rows
    plan, _, result = harness.run_row(row)
    assert len(plan.units) == 3 and len(judge.requests) == 12
    assert [r.unit for r in result.repeats] == [
        "first vs second",
        "first vs third",
        "second vs third",
    ]
    assert all(r.decided for r in result.repeats)
    assert result.details["points"] == {"first": 2.0, "second": 4.0, "third": 0.0}
