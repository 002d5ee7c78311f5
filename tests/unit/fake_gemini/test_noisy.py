"""The noisy simulated judge: an item's odds in its own text give the spread of its answers,
the same sample draws the same answer again, and adaptive repeats settle easy items early and
leave split ones undecided."""

from __future__ import annotations

from collections import Counter

from evalq.fake_gemini.skills.noisy import draw, odds_in
from tests.support.metric_harness import Harness, MemoryJudge, simulated

QA = {"template": "question_answering_quality"}


def test_the_odds_and_seed_are_read_from_the_text() -> None:
    assert odds_in("An answer. [judge-odds 4=0.6 5=0.4 seed=3]") == ({"4": 0.6, "5": 0.4}, 3)
    assert odds_in("An answer.") is None


def test_draws_follow_the_odds_and_repeat_per_sample() -> None:
    odds = {"yes": 0.8, "no": 0.2}
    drawn = Counter(draw(odds, 1, "response", k) for k in range(2000))
    assert 0.75 < drawn["yes"] / 2000 < 0.85
    assert [draw(odds, 1, "response", k) for k in range(20)] == [
        draw(odds, 1, "response", k) for k in range(20)
    ]
    assert draw(odds, 1, "response", None) == "yes"  # temperature 0: the likeliest


def _odds_rows(harness: Harness, responses: list[str]) -> list:  # type: ignore[type-arg]
    records = [{"prompt": f"Q{i}?", "response": r} for i, r in enumerate(responses)]
    return harness.rows(records)


def test_easy_items_stop_early_and_split_ones_go_further() -> None:
    judge = MemoryJudge("sim", simulated)
    harness = Harness("pointwise", {**QA, "samples": "auto"}, {"sim": judge})
    easy, split = _odds_rows(
        harness, ["Sure. [judge-odds 4=1 seed=1]", "Maybe. [judge-odds 4=0.5 5=0.5 seed=2]"]
    )
    _, _, sure = harness.run_row(easy)
    assert [s.answer for s in sure.repeats[0].samples] == ["4", "4", "4"]
    assert sure.repeats[0].decided
    asked = len(judge.requests)
    _, _, torn = harness.run_row(split)
    assert len(judge.requests) - asked > 3
    assert torn.repeats[0].verdict in (None, "4", "5")
    if not torn.repeats[0].decided:
        assert torn.repeats[0].verdict is None


def test_a_comparison_odds_hold_in_both_orders() -> None:
    judge = MemoryJudge("sim", simulated)
    harness = Harness("pairwise", {"samples": "auto"}, {"sim": judge})
    (row,) = harness.rows(
        [{"prompt": "Q?", "response_a": "One. [judge-odds win=1 seed=4]", "response_b": "Two."}]
    )
    _, _, result = harness.run_row(row)
    (repeats,) = result.repeats
    assert [s.answer for s in repeats.samples] == ["A"] * 4
    assert result.details["winner"] == "A"
