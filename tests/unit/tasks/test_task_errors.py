"""No job stuck in silence: an exception no handler names, injected into each of the six tasks
(a TypeError, as an SDK might raise), run in this process against a real Redis and the fake
Gemini server (tests/support/task_runner.py). Each time it is recorded on the job (status shows
how many, the last, its task), retried a bounded number of times with backoff, then the row
fails with it (online) or the job pauses with it (batch mode), and `evalq resume` finishes a
paused job once the fault is gone. A batch whose job is gone is cancelled on the server."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import evalq.tasks.rows
import evalq.worker.batch.flow
import evalq.worker.batch.service
from evalq.client.output.terminal.summary import summary_lines
from evalq.client.output.terminal.tables import batch_notes
from evalq.core.metric import get_metric
from evalq.core.models import JobSummary
from evalq.worker.batch.names import INGEST_BATCH, POLL_BATCH, SUBMIT_BATCH
from evalq.worker.celery_app.app import PREPARE_ROW
from evalq.worker.jobs.metrics_exporter import JobCollector
from evalq.worker.store import keys
from tests.conftest import FakeGemini
from tests.support.rating_replies import rating
from tests.support.task_runner import AGGREGATE_ROW, RUN_UNIT, Call, Outcome, TaskRunner
from tests.unit.tasks.conftest import RunnerOn

RUNNER_DB = 15
RETRIES = 2  # EVALQ_TASK_ERROR_RETRIES in these tests: three failures in all
RUNNER_ENV = {"EVALQ_TASK_ERROR_RETRIES": str(RETRIES)}


@dataclass
class Fault:
    """Raises a TypeError in place of the function it stands in for, until `on` is cleared."""

    target: Callable[..., Any]
    on: bool = True
    raised: int = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.on:
            self.raised += 1
            raise TypeError(f"injected fault #{self.raised}")
        return self.target(*args, **kwargs)


def inject(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> Fault:
    fault = Fault(getattr(owner, name))
    monkeypatch.setattr(owner, name, fault)
    return fault


def errors_counted(summary: JobSummary) -> int:
    """The task errors the job's summary counts (the "task errors" line of `evalq status`)."""
    return summary.task_errors.count if summary.task_errors is not None else 0


def task_of(outcome: Outcome) -> str:
    return outcome.call.task.rsplit(".", 1)[-1]


# ---- online: prepare_row, run_unit, aggregate_row ----

ONLINE = {PREPARE_ROW: "plan", RUN_UNIT: "run_unit", AGGREGATE_ROW: "aggregate"}


def run_up_to(runner: TaskRunner, task: str) -> Call:
    """Run the job's tasks until `task` is next; return its call."""
    while runner.queue[0].task != task:
        assert runner.next().state == "done"
    return runner.queue.popleft()


def faulted_online_job(
    runner: TaskRunner, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch, task: str, text: str
) -> tuple[str, Fault]:
    """A one-row online job (the call cache off) whose judge rates 4, with a fault injected
    into the metric step that `task` runs."""
    fake.script([{"match": text, "reply": rating(4)}])
    fault = inject(monkeypatch, get_metric("pointwise"), ONLINE[task])
    # With the call cache on, prepare_row would try the metric's run_unit itself first (on
    # cached replies), and a fault there would be prepare_row's.
    return runner.submit_pointwise(text, use_cache=False), fault


@pytest.mark.parametrize("task", list(ONLINE))
def test_an_online_task_error_is_recorded_retried_then_fails_the_row(
    runner: TaskRunner, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    job, fault = faulted_online_job(runner, fake, monkeypatch, task, "Te-online")
    name = task.rsplit(".", 1)[-1]
    call = run_up_to(runner, task)
    for attempt in range(RETRIES):
        outcome = runner.run(call)
        assert (outcome.state, outcome.retry is not None) == ("retry", True)
        assert outcome.countdown is not None and 0.5 * 2**attempt <= outcome.countdown <= 2**attempt
        assert outcome.retry is not None and outcome.retry.kwargs["task_errors"] == attempt + 1
        shown = runner.client.summary(job).task_errors  # what `evalq status` shows
        assert shown is not None and (shown.count, shown.task) == (attempt + 1, name)
        assert shown.last_error == f"TypeError: injected fault #{attempt + 1}"
        assert shown.at is not None
        assert runner.client.summary(job).rows_done == 0  # not failed while retries last
        call = outcome.retry
    last = runner.run(call)
    assert last.state == "done"  # given up: a header part ends, so the callback still fires
    runner.drain()
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_done) == ("finished", 1)
    assert errors_counted(summary) == fault.raised == RETRIES + 1
    (row,) = runner.client.results(job)
    error = f"internal error in {name}: TypeError: injected fault #{RETRIES + 1}"
    if task == RUN_UNIT:  # the unit's unscored verdict, as for any bug in run_unit
        (question,) = row.questions
        assert (question.status, question.reason, question.detail) == (
            "unscored",
            "judge_error",
            error,
        )
    else:
        assert (row.status, row.reason, row.error) == ("failed", "judge_error", error)


@pytest.mark.parametrize("task", list(ONLINE))
def test_an_online_fault_gone_before_the_retries_are_spent_scores_the_row(
    runner: TaskRunner, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    job, fault = faulted_online_job(runner, fake, monkeypatch, task, "Te-heals")
    failed = runner.run(run_up_to(runner, task))
    assert failed.state == "retry" and failed.retry is not None
    fault.on = False  # fixed (or it was passing)
    assert runner.run(failed.retry).state == "done"
    runner.drain()
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_scored, errors_counted(summary)) == ("finished", 1, 1)


def test_a_unit_whose_give_up_fails_too_still_ends_and_its_callback_scores_the_row(
    runner_on: RunnerOn, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chord header part never ends in failure: when even recording its unscored verdict
    fails (another bug), the part ends without one, the callback fires, and the unit is
    scored unscored after the callback's wait for stragglers."""
    runner = runner_on(RUNNER_DB, EVALQ_TASK_ERROR_RETRIES="0")
    inject(monkeypatch, get_metric("pointwise"), "run_unit")
    recording = inject(monkeypatch, evalq.tasks.rows, "record_unit")
    job = runner.submit_pointwise("Te-worse", use_cache=False)
    ended = runner.run(run_up_to(runner, RUN_UNIT))
    assert ended.state == "done" and ended.value["unrecorded"]
    assert recording.raised == 1
    (callback,) = runner.queue  # the chord completed
    assert callback.task == AGGREGATE_ROW
    outcome = runner.next()
    while outcome.state == "retry":  # the callback waits for the missing verdict, then scores
        assert outcome.retry is not None
        outcome = runner.run(outcome.retry)
    assert outcome.state == "done"
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_done, errors_counted(summary)) == ("finished", 1, 1)


def test_a_task_error_is_exported_and_shown_in_status(
    runner: TaskRunner, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, get_metric("pointwise"), "plan")
    job = runner.submit_pointwise("Te-shown")
    assert runner.next().state == "retry"
    families = {f.name: f for f in JobCollector(runner.store).collect()}
    (sample,) = [s for s in families["evalq_job_task_errors"].samples if s.labels["job_id"] == job]
    assert sample.value == 1.0
    text = "\n".join(summary_lines(runner.client.summary(job), width=300))
    assert "task errors" in text and "1 · last in prepare_row" in text
    assert "TypeError: injected fault #1" in text
    shown = json.loads(runner.client.summary(job).model_dump_json())["task_errors"]
    assert (shown["count"], shown["task"], shown["last_error"]) == (
        1,
        "prepare_row",
        "TypeError: injected fault #1",
    )


# ---- batch mode: submit_batch, poll_batch, ingest_batch ----

BATCH = {
    SUBMIT_BATCH: (evalq.worker.batch.flow, "sweep"),
    POLL_BATCH: (evalq.worker.batch.service, "poll"),
    INGEST_BATCH: (evalq.worker.batch.service, "ingest"),
}


def run_batch_job(runner: TaskRunner) -> list[Outcome]:
    ran = []
    while runner.queue:
        ran.append(runner.next_settled())
        assert ran[-1].state == "done", ran[-1]
    return ran


@pytest.mark.parametrize("task", list(BATCH))
def test_a_batch_task_meets_redis_out_of_reach_as_a_row_task_does(
    runner: TaskRunner, fake: FakeGemini, task: str
) -> None:
    """evalq.tasks.guard for both: retried later with when Redis was first found out of reach
    riding along, and past EVALQ_REDIS_RETRY_MAX_S the task fails with the error, as a row
    task does (test_task_branches); the watchdog's re-attach takes the job up after."""
    fake.script([{"match": "Te-batch-down", "reply": rating(3)}])
    job = runner.submit_pointwise("Te-batch-down", mode="batch")
    while runner.queue[0].task != task:
        assert runner.next_settled().state == "done"
    call = runner.queue.popleft()
    before = time.time()
    with runner.redis_unreachable():
        down = runner.run(call)
    assert down.state == "retry" and down.retry is not None
    assert before <= down.retry.kwargs["down_since"] <= time.time()
    late = Call(call.task, call.args, {**call.kwargs, "down_since": time.time() - 3600})
    with runner.redis_unreachable():
        failed = runner.run(late)
    assert failed.state == "failed"
    assert "Connection" in type(failed.error).__name__
    summary = runner.client.summary(job)
    assert summary.status == "running" and summary.task_errors is None  # not a task error
    runner.queue.appendleft(down.retry)  # Redis is back: the job goes on from there
    run_batch_job(runner)
    assert runner.client.summary(job).rows_scored == 1


@pytest.mark.parametrize("task", list(BATCH))
def test_a_batch_task_error_pauses_the_job_and_resume_finishes_it(
    runner: TaskRunner, fake: FakeGemini, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    fake.script([{"match": "Te-batch", "reply": rating(3)}])
    owner, attr = BATCH[task]
    job = runner.submit_pointwise("Te-batch", mode="batch")
    fault: Fault | None = None
    outcome: Outcome | None = None
    while outcome is None:  # the job's tasks, until the faulted one fails
        if runner.queue[0].task == task and fault is None:
            fault = inject(monkeypatch, owner, attr)
        ran = runner.next_settled()
        if ran.state == "retry":
            outcome = ran
        else:
            assert ran.state == "done", ran
    name = task.rsplit(".", 1)[-1]
    for attempt in range(RETRIES):
        assert outcome.state == "retry" and outcome.retry is not None
        assert outcome.retry.kwargs["task_errors"] == attempt + 1
        shown = runner.client.summary(job).task_errors
        assert shown is not None and (shown.count, shown.task) == (attempt + 1, name)
        assert shown.last_error == f"TypeError: injected fault #{attempt + 1}"
        if task != SUBMIT_BATCH:  # the batch's record says so too
            (record,) = runner.client.batches(job)
            assert record.last_error == f"TypeError: injected fault #{attempt + 1}"
            assert record.last_error_at is not None
            (note,) = batch_notes([record], time.time())  # under `evalq status`'s table
            assert "last error " in note
            assert f" ago: TypeError: injected fault #{attempt + 1}" in note
        assert runner.client.summary(job).status == "running"
        outcome = runner.run(outcome.retry)
    assert outcome.state == "done" and outcome.value["paused"]
    summary = runner.client.summary(job)
    error = f"internal error in {name}: TypeError: injected fault #{RETRIES + 1}"
    assert summary.status == "paused" and error in (summary.pause_reason or "")
    assert f"evalq resume {job}" in (summary.pause_reason or "")
    assert errors_counted(summary) == RETRIES + 1
    assert not runner.queue  # nothing more runs on its own
    assert fault is not None
    fault.on = False  # the cause is fixed
    assert runner.client.resume(job) == 1
    run_batch_job(runner)
    summary = runner.client.summary(job)
    assert (summary.status, summary.rows_scored) == ("finished", 1)
    assert [r.state for r in runner.client.batches(job)] == ["SUCCEEDED"]  # none sent twice


@pytest.fixture
def held_batches(fake: FakeGemini) -> Iterator[None]:
    """Batches on the shared fake server stay RUNNING until the test ends."""

    def delay(seconds: float) -> None:
        request = urllib.request.Request(
            fake.url + "/batch-delay",
            data=json.dumps({"delay_s": seconds}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=10).close()

    delay(3600)
    try:
        yield
    finally:
        delay(0)


@pytest.mark.parametrize("task", [POLL_BATCH, INGEST_BATCH])
def test_a_batch_whose_job_is_gone_is_cancelled_on_the_server(
    runner: TaskRunner, fake: FakeGemini, held_batches: None, task: str
) -> None:
    """Redis lost the job (its keys are gone, ledger included): the poll or ingest that finds
    it gone cancels the batch on the server instead of leaving it running, and billed."""
    job = runner.submit_pointwise("Te-gone", mode="batch")
    assert runner.next().value == {"outcome": "submitted"}
    (poll,) = runner.queue
    assert poll.task == POLL_BATCH
    runner.queue.clear()
    assert fake.stats()["batches"]["created"] == 1
    for key in runner.store.r.scan_iter(keys.job(job) + "*"):
        runner.store.r.delete(key)
    batch_id = poll.args[1]
    call = poll if task == POLL_BATCH else Call(INGEST_BATCH, (job, batch_id))
    gone = runner.run(call)
    assert gone.state == "done"
    assert gone.value["gone"] and str(gone.value["cancelled"]).startswith("batches/")
    assert fake.stats()["batches"]["ended"] == {"CANCELLED": 1}
    assert runner.run(call).value == {"gone": True, "cancelled": None}  # once is enough
