"""A unit's outcome is written once, in one step (evalq.worker.store.unit_writes,
Store.record_unit): what a failed call spent is recorded on a countdown retry and on a pause, and a
duplicate run adds what it spent but none of what only the recorded verdict may count."""

from __future__ import annotations

import time
from collections import Counter

from evalq.core.models import Verdict
from evalq.core.pricing import Usage
from evalq.worker.store import RowRef, keys
from evalq.worker.store.unit_writes import UnitWrites
from tests.conftest import FakeGemini
from tests.support.rating_replies import rated_after_a_429, rating
from tests.support.task_runner import TaskRunner

RUNNER_DB = 14


def test_a_429_countdown_records_the_refused_call_and_a_sign_of_life_ahead(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script(rated_after_a_429("Uo-429", 4, retry_delay_s=30))
    job = runner.submit_pointwise("Uo-429")
    runner.next()
    unit = runner.next()
    assert unit.state == "retry" and unit.retry is not None
    summary = runner.client.summary(job)
    assert (summary.judge_calls, summary.rate_limited, summary.cache_hits) == (1, 1, 0)
    waiting_until = runner.store.r.zscore(keys.activity(job), "1")
    assert waiting_until is not None and waiting_until > time.time() + 20  # not stalled
    assert runner.run(unit.retry).value == {"index": 0, "status": "ok"}
    summary = runner.client.summary(job)
    assert (summary.judge_calls, summary.rate_limited) == (2, 1)


def test_a_pause_records_what_the_unit_spent(runner: TaskRunner, fake: FakeGemini) -> None:
    fake.script([{"match": "Uo-day", "status": 429, "quota": "day"}])
    job = runner.submit_pointwise("Uo-day")
    runner.next()
    assert runner.next().value == {"index": 0, "paused": True}
    summary = runner.client.summary(job)
    assert (summary.status, summary.judge_calls, summary.rate_limited) == ("paused", 1, 0)
    assert runner.store.verdicts(RowRef(job, "1")) == {}


def test_a_duplicate_outcome_adds_what_it_spent_and_nothing_only_a_verdict_counts(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script([{"match": "Uo-dup", "reply": rating(2)}])
    job = runner.submit_pointwise("Uo-dup")
    runner.drain()
    before = runner.store.job_hash(job)
    stored = runner.store.verdict(RowRef(job, "1"), 0)
    # A second run of the same unit that made its own call (a redelivery racing the first).
    late = UnitWrites()
    late.spend({"judge_calls": 1, "prompt_tokens": 7}, Usage("judge", "m", calls=1, prompt=7))
    late.count(cache_hits=1, units_inline=1)
    other = Verdict(index=0, status="ok", answer="5", value={"rating": 5})
    recorded = runner.store.record_unit(RowRef(job, "1"), other, late)
    assert not recorded.written
    assert runner.store.verdict(RowRef(job, "1"), 0) == stored  # first write wins
    after = runner.store.job_hash(job)
    numbers = [k for k, v in after.items() if v.lstrip("-").isdigit()]
    added = Counter({k: int(after[k]) - int(before.get(k, 0)) for k in numbers})
    assert {k: v for k, v in added.items() if v} == {
        "judge_calls": 1,
        "prompt_tokens": 7,
        "usage:judge:calls:m": 1,
        "usage:judge:prompt:m": 7,
    }
