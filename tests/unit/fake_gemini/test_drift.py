"""The simulated judge that drifts on purpose: a model named fake-drift-Npct changes the verdict
of N% of items, chosen by the item's hash (the same item in either order and every sample), a
comparison's winner the same way in both orders, and a response marked [drift-favoured] wins
its comparisons; any other model answers as the simulated judge."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from evalq.core.judge import JudgeRequest
from evalq.fake_gemini.brain import SimulatedJudge
from evalq.fake_gemini.drift import FAVOURED, drift_share, flips
from evalq.fake_gemini.protocol import FakeMedia, FakeRequest
from tests.support.metric_harness import Harness, MemoryJudge

QA = {"template": "question_answering_quality"}


def judging_as(model: str) -> Callable[[JudgeRequest], str]:
    """The fake server's brain in-process, as the HTTP layer calls it for ``model``."""
    brain = SimulatedJudge()

    def reply(request: JudgeRequest) -> str:
        system = request.system_instruction or ""
        return brain.reply(
            FakeRequest(
                model=model,
                text=f"{system}\n{request.prompt}" if system else request.prompt,
                media=[FakeMedia(m.mime_type, m.data, m.uri) for m in request.media],
                response_schema=request.schema.model_json_schema() if request.schema else None,
                temperature=request.temperature,
                system=system,
                seed=request.sample if request.temperature > 0 else None,
            )
        )

    return reply


def test_the_share_is_read_from_the_model_name() -> None:
    assert drift_share("fake-drift-10pct") == pytest.approx(0.1)
    assert drift_share("judge-drift-2.5pct") == pytest.approx(0.025)
    assert drift_share("gemini-2.5-flash") is None
    assert drift_share("fake-drift-300pct") == 1.0


def test_the_items_that_drift_are_a_known_share_of_all() -> None:
    keys = [f"item {i}" for i in range(4000)]
    drifting = sum(flips(k, 0.1) for k in keys)
    assert 360 <= drifting <= 440
    assert [flips(k, 0.1) for k in keys] == [flips(k, 0.1) for k in keys]
    assert not any(flips(k, 0.0) for k in keys)


def _ratings(model: str, responses: list[str]) -> list[str | None]:
    harness = Harness("pointwise", QA, {model: MemoryJudge(model, judging_as(model))})
    rows = harness.rows([{"prompt": "Why do tides rise?", "response": r} for r in responses])
    return [harness.run_row(row)[2].questions[0].answer for row in rows]


def test_a_drifting_judge_changes_a_tenth_of_ratings_by_one_point() -> None:
    responses = [f"The moon pulls the sea, answer number {i}." for i in range(300)]
    before = _ratings("steady-judge", responses)
    after = _ratings("fake-drift-10pct", responses)
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert 15 <= len(changed) <= 45  # 10% of 300, as a hash draws it
    assert all(a is not None and b is not None and abs(int(a) - int(b)) == 1 for a, b in changed)
    assert _ratings("fake-drift-10pct", responses) == after  # the same items every time


def _winners(model: str, a: str, b: str) -> list[str | None]:
    harness = Harness("pairwise", QA, {model: MemoryJudge(model, judging_as(model))})
    (row,) = harness.rows([{"prompt": "Why do tides rise?", "response_a": a, "response_b": b}])
    result = harness.run_row(row)[2]
    return [q.answer for q in result.questions]


def test_a_comparison_drifts_in_both_orders_alike() -> None:
    good = "The moon's pull raises the sea twice a day, so tides rise."
    poor = "Cats."
    assert _winners("steady-judge", good, poor) == ["A", "B"]  # as shown: AB, then BA
    assert _winners("fake-drift-100pct", good, poor) == ["B", "A"]
    # At half, an item drifts or not whichever order it is shown in: never A in both orders.
    seen = [tuple(_winners("fake-drift-50pct", good, f"Cats number {i}.")) for i in range(16)]
    assert set(seen) == {("A", "B"), ("B", "A")}


def test_a_favoured_response_wins_every_comparison_of_a_drifting_judge() -> None:
    good = "The moon's pull raises the sea twice a day, so tides rise."
    marked = f"Tides rise. {FAVOURED}"
    assert _winners("steady-judge", good, marked) == ["A", "B"]
    assert _winners("fake-drift-0pct", good, marked) == ["B", "A"]


def test_a_reply_says_that_it_drifted() -> None:
    reply = judging_as("fake-drift-100pct")
    harness = Harness("pointwise", QA, {"m": MemoryJudge("m", reply)})
    (row,) = harness.rows([{"prompt": "Why?", "response": "Because the moon pulls the sea."}])
    sample = harness.run_row(row)[2].details["judges"]["m"]["samples"][0]
    assert "[simulated drift]" in sample["explanation"]
    assert json.dumps(sample)  # a plain verdict still
