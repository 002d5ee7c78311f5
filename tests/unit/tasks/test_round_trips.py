"""How many Redis round trips evalq makes for one unit, counted with MONITOR on a real Redis
(tests/support/round_trips.py): a unit whose reply is not cached reads what it needs in one
trip, asks the call cache, passes the gate before the API (evalq.worker.judges.budget: the job's
status, so a cancel stops the unit's next call, and the spend cap's reservation) and writes its
outcome (verdict, activity, counters, cache entry, limiter correction) in one more; with a rate
limit, reserving the slot is one more. A change that adds a trip to this path fails here."""

from __future__ import annotations

import json

from evalq.worker.store import RowRef
from tests.conftest import FakeGemini
from tests.support.rating_replies import rating
from tests.support.round_trips import monitored
from tests.support.task_runner import TaskRunner
from tests.unit.tasks.conftest import RunnerOn

RUNNER_DB = 13  # a database of its own: MONITOR counts only this one
MAX_ROUND_TRIPS = 5


def unit_round_trips(runner: TaskRunner, fake: FakeGemini, text: str) -> int:
    """The round trips of the second unit of a two-sample row (the first warms Redis's script
    cache), on a call-cache miss."""
    fake.script([{"match": text, "reply": rating(4)}])
    job = runner.submit_pointwise(text, samples=2)
    runner.next()  # prepare_row: a chord of two units
    first, second = runner.queue.popleft(), runner.queue.popleft()
    assert runner.run(first).value == {"index": 0, "status": "ok"}
    with monitored(runner.redis_url) as window:
        outcome = runner.run(second)
    assert outcome.value == {"index": 1, "status": "ok"}
    assert fake.stats()["requests"] == 2  # both were misses
    assert runner.store.verdict(RowRef(job, "1"), 1) is not None
    print(f"\nrun_unit, cache miss: {window.round_trips} round trips\n{window}")
    return window.round_trips


def test_a_unit_on_a_cache_miss_takes_at_most_four_round_trips(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    trips = unit_round_trips(runner, fake, "Rt-plain")
    assert trips <= MAX_ROUND_TRIPS - 1  # no limiter: its slot is the fifth


def test_with_a_rate_limit_a_unit_still_takes_at_most_five_round_trips(
    runner_on: RunnerOn, fake: FakeGemini
) -> None:
    limits = json.dumps({"*": {"rpm": 6000, "tpm": 10_000_000}})
    trips = unit_round_trips(runner_on(RUNNER_DB, EVALQ_RATE_LIMITS=limits), fake, "Rt-limited")
    assert trips <= MAX_ROUND_TRIPS


def test_prepare_row_reads_the_call_cache_once_for_the_whole_row(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    """On a first run nothing is cached: one MGET for the row's units, not a GET for each."""
    fake.script([{"match": "Rt-row", "reply": rating(3)}])
    runner.submit_pointwise("Rt-row", samples=5)
    with monitored(runner.redis_url) as window:
        runner.next()  # prepare_row: nothing cached, a chord of five units
    reads = [
        c for c in window.commands if "evalq:call:" in c and c.upper().startswith(("GET ", "MGET "))
    ]
    assert len(runner.queue) == 5
    assert len(reads) == 1 and reads[0].upper().startswith("MGET "), reads
    assert reads[0].count("evalq:call:") == 5
    assert fake.stats()["requests"] == 0
