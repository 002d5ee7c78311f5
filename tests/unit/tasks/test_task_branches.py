"""The branches of the three row tasks (tasks/rows.py), each run in this process against a real
Redis and the fake Gemini server over HTTP (tests/support/task_runner.py): rate-limit
countdowns, a daily quota pausing the job, an early chord callback, redeliveries, Redis out of
reach. A retry is recorded, not waited for: the test runs it when it chooses."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from evalq.core.errors import StoredPlanError
from evalq.metrics.groundedness.metric import GroundednessPlan, JudgeUnit
from evalq.metrics.pointwise.metric import PointwisePlan
from evalq.worker.store import RowRef
from tests.conftest import FakeGemini
from tests.support.rating_replies import rated_after_a_429, rating
from tests.support.task_runner import (
    AGGREGATE_ROW,
    RUN_UNIT,
    Call,
    Chord,
    Outcome,
    TaskRunner,
)
from tests.unit.tasks.conftest import RunnerOn

RUNNER_DB = 11  # a database of its own on the session's Redis, flushed by each runner

MakeRunner = Callable[..., TaskRunner]


@pytest.fixture
def make_runner(runner_on: RunnerOn) -> MakeRunner:
    """A runner with these EVALQ_ settings on top of the defaults; one per test."""
    return functools.partial(runner_on, RUNNER_DB)


def unit_args(chord: Chord) -> list[tuple[object, ...]]:
    return [call.args for call in chord.header]


def states(outcomes: list[Outcome]) -> list[tuple[str, str]]:
    return [(o.call.task.rsplit(".", 1)[-1], o.state) for o in outcomes]


def job_at_its_unit(runner: TaskRunner, fake: FakeGemini, text: str, **answer: Any) -> str:
    """A one-row job, one sample, whose judge always answers as `answer` says (the rest of a
    fake server script entry); its prepare_row is run, so its one unit is next."""
    fake.script([{"match": text, **answer}])
    job = runner.submit_pointwise(text)
    runner.next()  # prepare_row
    return job


def assert_judge_error(runner: TaskRunner, job: str, detail: str) -> None:
    """The row's one unit has an unscored judge_error verdict whose detail says `detail`."""
    verdict = runner.store.verdict(RowRef(job, "1"), 0)
    assert verdict is not None and verdict.reason == "judge_error"
    assert detail in (verdict.detail or "")


def test_a_burst_runs_the_row_to_its_score(runner: TaskRunner, fake: FakeGemini) -> None:
    fake.script([{"match": "Tb-burst", "reply": rating(4)}])
    job = runner.submit_pointwise("Tb-burst", samples=2)
    ran = runner.drain()
    assert states(ran) == [
        ("prepare_row", "done"),
        ("run_unit", "done"),
        ("run_unit", "done"),
        ("aggregate_row", "done"),
    ]
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_scored, summary.rows_total) == ("finished", 1, 1)
    assert fake.stats()["requests"] == 2


def test_a_429_with_retry_info_retries_after_the_servers_delay(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script(rated_after_a_429("Tb-429", 5, retry_delay_s=7))
    job = runner.submit_pointwise("Tb-429")
    before = time.time()
    prepared, unit = runner.drain()
    assert (prepared.state, unit.state) == ("done", "retry")
    assert unit.countdown is not None and 7 <= unit.countdown < 8  # the server's delay, jittered
    assert unit.retry is not None and unit.retry.retries == 1
    first_429 = unit.retry.kwargs["first_429_at"]
    assert before <= first_429 <= time.time()  # the total budget starts at this 429
    assert runner.store.verdicts(RowRef(job, "1")) == {}  # a rate limit is not a verdict
    assert not runner.queue  # the chord waits for its part

    again = runner.run(unit.retry)
    assert again.value == {"index": 0, "status": "ok"}
    assert runner.store.verdict(RowRef(job, "1"), 0).value["rating"] == 5  # type: ignore[union-attr]
    (aggregated,) = runner.drain()  # the part ended: the callback comes
    assert aggregated.value == {"row": "1", "status": "scored"}
    assert runner.client.summary(job).status == "finished"


def test_repeated_429s_past_the_total_budget_are_an_unscored_judge_error(
    make_runner: MakeRunner, fake: FakeGemini
) -> None:
    runner = make_runner(EVALQ_RATE_LIMIT_MAX_TOTAL_S="30")
    job = job_at_its_unit(runner, fake, "Tb-cap", status=429, retry_delay_s=1)
    late = runner.run(runner.unit(job, "1", 0, first_429_at=time.time() - 60))
    assert late.value == {"index": 0, "status": "unscored"}
    assert_judge_error(runner, job, "EVALQ_RATE_LIMIT_MAX_TOTAL_S=30")
    runner.drain()
    summary = runner.client.summary(job)
    assert summary.status == "finished" and summary.rows_scored == 0
    assert summary.unscored_by_reason == {"judge_error": 1}


def test_a_429_after_the_last_retry_is_an_unscored_judge_error(
    make_runner: MakeRunner, fake: FakeGemini
) -> None:
    runner = make_runner(EVALQ_RATE_LIMIT_MAX_RETRIES="2")
    job = job_at_its_unit(runner, fake, "Tb-retries", status=429, retry_delay_s=1)
    first = runner.next()
    assert first.state == "retry" and first.retry is not None
    second = runner.run(first.retry)
    assert second.state == "retry" and second.retry is not None and second.retry.retries == 2
    assert second.retry.kwargs["first_429_at"] == first.retry.kwargs["first_429_at"]
    last = runner.run(second.retry)
    assert last.value == {"index": 0, "status": "unscored"}
    assert_judge_error(runner, job, "after 2 retries")


def test_our_limiter_defers_a_unit_without_starting_the_429_budget(
    make_runner: MakeRunner, fake: FakeGemini
) -> None:
    runner = make_runner(
        EVALQ_RATE_LIMITS=json.dumps({"*": {"rpm": 1}}), EVALQ_LIMITER_MAX_WAIT_S="0"
    )
    fake.script([{"match": "Tb-limiter", "reply": rating(3)}])
    job = runner.submit_pointwise("Tb-limiter", samples=2)
    runner.next()  # prepare_row
    first, second = runner.next(), runner.next()
    assert first.value == {"index": 0, "status": "ok"}
    assert second.state == "retry" and second.retry is not None
    assert second.countdown is not None and 30 < second.countdown <= 61  # the next slot, a minute
    assert second.retry.kwargs.get("first_429_at") is None  # no server 429 yet
    assert fake.stats()["requests"] == 1  # the deferred unit asked nothing
    assert runner.store.verdict(RowRef(job, "1"), 1) is None


def test_a_daily_quota_pauses_the_job_and_resume_finishes_the_row(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script(
        [
            {"match": "Tb-day", "status": 429, "quota": "day", "times": 1},
            {"match": "Tb-day", "reply": rating(4)},
        ]
    )
    job = runner.submit_pointwise("Tb-day", samples=2)
    ran = runner.drain()
    assert [o.value for o in ran[1:]] == [
        {"index": 0, "paused": True},
        {"index": 1, "skipped": True},  # the job is paused: left for resume, no call
        {"row": "1", "left": "for resume"},  # the callback does not count the row
    ]
    assert fake.stats()["requests"] == 1
    assert runner.store.verdicts(RowRef(job, "1")) == {}  # no verdict: not unscored, not 0
    paused = runner.client.summary(job)
    assert (paused.status, paused.rows_done) == ("paused", 0)
    assert "daily quota" in (paused.pause_reason or "")

    assert runner.client.resume(job) == 1
    assert list(runner.queue) == [runner.prepare(job, "1")]
    assert states(runner.drain()) == [
        ("prepare_row", "done"),
        ("run_unit", "done"),
        ("run_unit", "done"),
        ("aggregate_row", "done"),
    ]
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_scored) == ("finished", 1)
    assert unit_args(runner.chords[1]) == unit_args(runner.chords[0])  # the stored plan, reused


def test_an_early_chord_callback_waits_and_does_not_count_the_row(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    """A callback that fires before every part has a verdict (a redelivered part counted twice
    by a result backend, a chord claim lost) retries shortly instead of counting the row."""
    fake.script([{"match": "Tb-early", "reply": rating(2)}])
    job = runner.submit_pointwise("Tb-early", samples=2)
    runner.next()  # prepare_row
    runner.next()  # unit 0; unit 1 is still queued
    early = runner.run(runner.aggregate(job, "1"))
    assert early.state == "retry" and early.countdown == 2
    assert early.retry is not None and early.retry.retries == 1
    assert not runner.store.is_done(RowRef(job, "1"))
    assert runner.client.summary(job).rows_done == 0

    straggler, callback = runner.drain()
    assert straggler.value == {"index": 1, "status": "ok"}
    assert callback.value == {"row": "1", "status": "scored"}
    assert runner.run(early.retry).value == {"row": "1", "duplicate": True}
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_done, summary.rows_scored) == ("finished", 1, 1)


def test_an_early_callback_out_of_retries_counts_the_missing_unit_unscored(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script([{"match": "Tb-late", "reply": rating(2)}])
    job = runner.submit_pointwise("Tb-late", samples=2)
    runner.next()  # prepare_row
    runner.run(runner.queue.popleft())
    last = Call(AGGREGATE_ROW, ([], job, "1"), retries=10)  # the early-callback retries spent
    assert runner.run(last).value == {"row": "1", "status": "partial"}
    summary = runner.client.summary(job)
    assert (summary.status, summary.unscored_by_reason) == ("finished", {"judge_error": 1})


def test_a_redelivered_unit_stores_one_verdict_and_the_row_counts_once(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    job = job_at_its_unit(runner, fake, "Tb-twice", reply=rating(4))
    unit = runner.queue.popleft()
    assert runner.run(unit).value == {"index": 0, "status": "ok"}
    assert runner.run(unit).value == {"index": 0, "status": "ok", "duplicate": True}
    assert fake.stats()["requests"] == 1  # the judge was asked once
    assert list(runner.store.verdicts(RowRef(job, "1"))) == [0]
    (callback,) = runner.drain()  # the part counts once in the chord: one callback
    assert callback.value == {"row": "1", "status": "scored"}
    assert runner.run(callback.call).value == {"row": "1", "duplicate": True}  # redelivered
    summary = runner.client.summary(job)
    assert (summary.rows_done, summary.rows_scored) == (1, 1)


def test_a_redelivered_prepare_row_reuses_its_plan_and_asks_nothing_twice(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script([{"match": "Tb-again", "reply": rating(3)}])
    job = runner.submit_pointwise("Tb-again", samples=2)
    prepare = runner.queue.popleft()
    assert runner.run(prepare).value == {"row": "1", "units": 2}
    plan = runner.store.row_plan(RowRef(job, "1"), PointwisePlan)
    assert runner.run(prepare).value == {"row": "1", "units": 2}  # redelivered before any unit
    assert runner.store.row_plan(RowRef(job, "1"), PointwisePlan) == plan
    first, second = runner.chords
    assert first.header == [Call(RUN_UNIT, (job, "1", i), chord=0, part=i) for i in range(2)]
    assert unit_args(second) == unit_args(first)
    values = [o.value for o in runner.drain()]
    assert values.count({"row": "1", "status": "scored"}) == 1
    assert values.count({"row": "1", "duplicate": True}) == 1
    assert sum(1 for v in values if v.get("duplicate") and "index" in v) == 2
    assert fake.stats()["requests"] == 2  # one call per unit, not per delivery
    assert runner.client.summary(job).rows_done == 1
    # Redelivered once more after the row was counted: nothing is sent.
    assert runner.run(prepare).value == {"row": "1", "skipped": True}
    assert len(runner.chords) == 2


@pytest.mark.parametrize("task", ["prepare_row", "run_unit", "aggregate_row"])
def test_redis_out_of_reach_is_retried_with_backoff_and_writes_nothing(
    runner: TaskRunner, fake: FakeGemini, task: str
) -> None:
    fake.script([{"match": "Tb-down", "reply": rating(4)}])
    job = runner.submit_pointwise("Tb-down")
    calls = {"prepare_row": runner.queue.popleft()}
    if task != "prepare_row":
        runner.run(calls["prepare_row"])
        calls["run_unit"] = runner.queue.popleft()
    if task == "aggregate_row":
        runner.run(calls["run_unit"])
        calls["aggregate_row"] = runner.queue.popleft()
    call = calls[task]
    verdicts = runner.store.verdicts(RowRef(job, "1"))
    before = time.time()
    with runner.redis_unreachable():
        down = runner.run(call)
    assert down.state == "retry" and down.retry is not None
    assert down.countdown is not None and 0.5 <= down.countdown <= 1.0  # the first backoff step
    assert before <= down.retry.kwargs["down_since"] <= time.time()
    assert runner.store.verdicts(RowRef(job, "1")) == verdicts  # nothing written meanwhile
    assert runner.client.summary(job).rows_done == 0

    back = runner.run(down.retry)  # Redis is back
    assert back.state == "done"
    assert runner.client.summary(job).rows_done == (1 if task == "aggregate_row" else 0)


def test_redis_out_of_reach_past_the_budget_fails_the_task_without_a_verdict(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    job = job_at_its_unit(runner, fake, "Tb-gone", reply=rating(4))
    unit = runner.queue.popleft()
    late = Call(unit.task, unit.args, {"down_since": time.time() - 3600}, chord=unit.chord)
    with runner.redis_unreachable():
        failed = runner.run(late)
    assert failed.state == "failed"
    assert "Connection" in type(failed.error).__name__
    assert runner.store.verdicts(RowRef(job, "1")) == {}
    assert runner.chords[0].failed and not runner.queue  # no callback: the watchdog's turn
    assert fake.stats()["requests"] == 0


def test_a_stored_plan_that_does_not_fit_fails_its_row_clearly(make_runner: MakeRunner) -> None:
    """A stored plan that is not the metric's (here another metric's; an older evalq's untyped
    plans fail the same way) is not read as anything: a task error, retried, then the row
    fails saying why."""
    runner = make_runner(EVALQ_TASK_ERROR_RETRIES="1")
    job = runner.submit_pointwise("Tb-foreign-plan")
    foreign = GroundednessPlan(
        units=[JudgeUnit(index=0, judge_model="x")],
        judges=["x"],
        judge_template="t",
        response="r",
        response_source="dataset",
    )
    runner.store.keep_row_plan(RowRef(job, "1"), foreign)
    first = runner.run(runner.queue.popleft())
    assert first.state == "retry" and first.retry is not None
    assert runner.run(first.retry).state == "done"
    (result,) = runner.client.results(job)
    assert (result.status, result.reason) == ("failed", "judge_error")
    assert (
        f"internal error in prepare_row: StoredPlanError: job {job}, row on line 1: the stored "
        "plan does not fit PointwisePlan"
    ) in (result.error or "")
    with pytest.raises(StoredPlanError, match="older evalq"):
        runner.store.row_plan(RowRef(job, "1"), PointwisePlan)
