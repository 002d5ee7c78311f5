"""`--samples auto` on the rating metrics, in-process: each judge's unit asks again only while
its verdict is undecided, every sample its own call (its sample index, a temperature above
zero), and every repeated unit (fixed or adaptive) shows its samples and certainty."""

from __future__ import annotations

from tests.support.metric_harness import Harness, MemoryJudge, qa_inputs
from tests.support.rating_replies import rating

QA = {"template": "question_answering_quality"}


def _by_sample(ratings: list[int]) -> MemoryJudge:
    return MemoryJudge("j", lambda request: rating(ratings[request.sample]))


def test_an_easy_rating_stops_at_the_minimum() -> None:
    judge = _by_sample([4] * 8)
    plan, _, result = Harness("pointwise", {**QA, "samples": "auto"}, {"j": judge}).run_row(
        qa_inputs()[0]
    )
    assert len(plan.units) == 1 and plan.adaptive
    assert [r.sample for r in judge.requests] == [0, 1]
    assert all(r.temperature > 0 for r in judge.requests)
    (repeats,) = result.repeats
    assert (repeats.verdict, repeats.decided, repeats.rule) == ("4", True, "t-interval")
    assert [s.answer for s in repeats.samples] == ["4", "4"]
    assert result.details["ratings"] == [4, 4]


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
