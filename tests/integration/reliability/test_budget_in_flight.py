"""The gate before each judge call (evalq.worker.judges.budget) with hundreds of calls racing
through it, on a real gevent worker: a spend cap holds within one call, and a cancel stops every
call that has not passed the gate.

Calls are held at the fake server (a latency far longer than the test) so that they are all in
flight together; the test releases them (latency 0) once it has seen what it waits for. Nothing
here depends on how long anything takes, only on counts: reservations in Redis, calls open at
the fake server, and calls begun there (its /stats `started`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.core.judge import MediaPart
from evalq.core.models import Question
from evalq.core.pricing import DEFAULT_PRICES, nanos, usd
from evalq.core.thinking import Setting, apply, effective
from evalq.metrics.gecko.validation import IMAGE_VALIDATOR
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from evalq.worker.judges.budget import estimated_cost_nanos
from tests.support.shapes import shapes_dataset
from tests.support.stack import Stack, stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration

CONCURRENCY = 250  # one gevent worker: every slot can hold a call
HOLD_MS = "600000"  # calls wait at the fake until the test releases them
MAX_OUTPUT_TOKENS = 64  # so a call's estimate is near its bill and the cap is reached for real
ESTIMATES_AT_ONCE = 200  # the cap has room for this many calls' estimates


def settled(s: Stack, client: Any) -> bool:
    """No message of any job left to run, and no call open at the fake."""
    r = s.redis_client()
    idle = r.hlen("unacked") == 0 and store_of(client).queued(QUEUE_ROWS, QUEUE_QUESTIONS) == 0
    return idle and s.stats()["in_flight"] == 0


def call_estimates(data: Path, model: str, thinking: dict[str, Setting]) -> list[int]:
    """Every call's estimate (evalq.worker.judges.budget), from the very request the worker builds
    for each of the dataset's questions (gecko-image asks its validator one question a call)."""
    price = DEFAULT_PRICES[model]
    found = []
    for row in map(json.loads, data.read_text().splitlines()):
        media = MediaPart("image/png", data=(data.parent / row["image"]).read_bytes())
        for asked in row["questions"]:
            question = Question(question=asked["question"], expected=asked["answer"])
            request = IMAGE_VALIDATOR.request(question, media)
            request = apply(request, thinking, model, MAX_OUTPUT_TOKENS)
            found.append(estimated_cost_nanos(request, price, MAX_OUTPUT_TOKENS))
    return found


def held_stack(tmp_path: Path) -> Any:
    return stack(
        tmp_path,
        "--latency-ms",
        HOLD_MS,
        concurrency=CONCURRENCY,
        EVALQ_WORKER_POOL="gevent",
        EVALQ_MAX_OUTPUT_TOKENS=str(MAX_OUTPUT_TOKENS),
        EVALQ_JUDGE_TIMEOUT_S="900",  # a held call is not timed out and sent again
    )


def test_a_cap_holds_with_hundreds_of_calls_racing_for_it(tmp_path: Path) -> None:
    rows = 300  # 900 calls, far more than the cap pays for
    data = shapes_dataset(tmp_path / "data", rows, own_questions=True)
    model, thinking = "gemini-2.5-flash", effective()
    each = call_estimates(data, model, thinking)
    cap_nanos = ESTIMATES_AT_ONCE * min(each)  # room for about that many calls at once
    with held_stack(tmp_path) as s:
        client = s.client()
        job = client.submit(
            "gecko-image", data, judge_model=model, use_cache=False, max_cost_usd=usd(cap_nanos)
        ).job_id
        assert store_of(client).config(job).thinking == thinking  # the estimates' requests are its

        def reservations() -> int:
            return int(s.redis_client().zcard(f"evalq:job:{job}:reservations"))

        # The calls that won a reservation are held at the fake; the others find no room and
        # wait (countdown retries) without pausing the job: the held calls may cost less.
        def full() -> bool:
            taken = reservations()
            room = cap_nanos - store_of(client).reserved(job)
            return (
                taken >= ESTIMATES_AT_ONCE * 3 // 4
                and room < max(each)
                and (s.stats()["in_flight"] == taken)
            )

        wait_for(full, 240, "the cap's room taken by calls held open at the fake")
        assert client.summary(job).status == "running"
        held = s.stats()["in_flight"]
        s.set_latency(0)
        wait_for(lambda: client.summary(job).status == "paused", 240, "the job paused at its cap")
        wait_for(lambda: settled(s, client), 240, "every call answered and every message handled")
        paused = client.summary(job)
        stats = s.stats()
        left = store_of(client).reserved(job)
    spent = nanos(paused.spent_usd)
    print(
        f"\ncap ${usd(cap_nanos):.6f} ({ESTIMATES_AT_ONCE} x the smallest estimate "
        f"${usd(min(each)):.6f}, largest ${usd(max(each)):.6f}); {held} calls reserved and open "
        f"at once (peak {stats['in_flight_peak']}), {stats['started']} calls made of "
        f"{3 * rows}; spent ${paused.spent_usd:.6f} = {spent / cap_nanos:.1%} of the cap"
    )
    assert paused.status == "paused" and "cost cap reached" in (paused.pause_reason or "")
    assert held >= ESTIMATES_AT_ONCE * 3 // 4  # hundreds in flight together, all reserved
    assert stats["started"] == paused.judge_calls < 3 * rows  # it stopped calling
    assert cap_nanos <= spent <= cap_nanos + max(each)  # the cap, plus one call at most
    assert left == 0  # every reservation settled


def test_calls_after_a_cancel_are_only_those_past_the_gate(tmp_path: Path) -> None:
    rows = 150  # 450 calls: the pool fills with calls, and many rows are still to come
    data = shapes_dataset(tmp_path / "data", rows, own_questions=True)
    with held_stack(tmp_path) as s:
        client = s.client()
        job = client.submit("gecko-image", data, use_cache=False).job_id
        # Calls held at the fake can not end, so no slot frees until the test releases them.
        wait_for(lambda: s.stats()["in_flight"] >= 150, 240, "150 calls open at once")
        before = s.stats()
        assert client.cancel(job).status == "cancelled"
        s.set_latency(0)
        wait_for(lambda: settled(s, client), 240, "every call answered and every message handled")
        after = s.stats()
        final = client.summary(job)
    started_after = after["started"] - before["started"]
    # A call starting after the cancel passed the gate before it: its task held a pool slot that
    # was not one of the calls open at the fake then. Every later call met the gate.
    past_gate = CONCURRENCY - before["in_flight"]
    print(
        f"\ncancel with {before['in_flight']} calls open at the fake ({before['started']} "
        f"begun): {started_after} calls began after it (at most {past_gate} could); "
        f"{after['started']} of {3 * rows} calls made"
    )
    assert final.status == "cancelled"
    assert started_after <= past_gate
    assert after["started"] < 3 * rows
