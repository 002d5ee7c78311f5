"""The three tasks every metric runs. The row's life is evalq.worker.lifecycle's (plain functions
that return an outcome); each task turns its outcome into a chord, a Celery retry or a return value,
through the scheduler in use (evalq.worker.celery_app.scheduling). prepare_row plans the row (rubric
or candidate generation) and fans out one run_unit per unit into a chord whose callback,
aggregate_row, scores the row. Chord header tasks never raise, so the callback always fires. A row
task that ends its row hands the freed turn to a waiting row (evalq.worker.dispatch.turns).

Cached work does not become tasks: prepare_row resolves inline every unit whose verdict is
stored or whose replies are all in the call cache, and only the units that need a judge call go
into the chord; a row with none left is aggregated at once (no chord: an empty header is not
allowed). A unit task reads what it needs in one round trip and writes its outcome (verdict,
activity, counters, cache entries, limiter correction) in one more (evalq.worker.store.unit_writes).

Retry policies come from the error classes (evalq.core.errors), read in one handler
(evalq.worker.lifecycle.judge_errors, shared with batch mode): "countdown" (429, or our limiter's
next slot is far) becomes a Celery retry;
"pause" (a spent daily quota, a job halted by repeated refusals) pauses the job, leaving its
rows for `evalq resume`; anything else fails the row being prepared, or is the unit's unscored
verdict (metrics make those verdicts themselves; the handler covers what gets past them).

What escapes a task's body is sorted by the one guard every task runs in (evalq.tasks.guard):
Redis out of reach is retried later, bounded, writing nothing; any other exception is a task
error (evalq.worker.celery_app.task_errors): recorded on the job, retried a few times with backoff,
then it fails the row (prepare_row, aggregate_row) or is the unit's unscored judge_error verdict
(run_unit). Rows are named by their line number (see evalq.worker.store).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from celery import Task

from evalq.core.verdicts import unscored
from evalq.tasks.guard import Driver, Reply, gone, guarded
from evalq.worker.celery_app.app import PREPARE_ROW, app
from evalq.worker.celery_app.scheduling import scheduler
from evalq.worker.celery_app.task_errors import retry_or_give_up
from evalq.worker.dispatch.turns import hand_out
from evalq.worker.lifecycle import online
from evalq.worker.lifecycle.ending import fail_row
from evalq.worker.lifecycle.modes import Online
from evalq.worker.lifecycle.outcomes import (
    Answered,
    Duplicate,
    Finished,
    Outcome,
    Paused,
    Planned,
    RetryAfter,
    Skipped,
)
from evalq.worker.lifecycle.units import record_unit
from evalq.worker.runtime import Runtime, runtime
from evalq.worker.store.unit_writes import UnitWrites

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10

GiveUp = Callable[[str], Reply]


def _driver(
    task: Task,
    job_id: str,
    give_up: GiveUp,
    waiting: Callable[[float], None] | None = None,
    *,
    header_part: bool = False,
) -> Driver:
    """How a row task meets what its body lets escape (evalq.tasks.guard): a task error is recorded
    and retried (evalq.worker.celery_app.task_errors), then `give_up` with its text (the row fails,
    or the unit's verdict says so)."""

    def task_error(exc: Exception) -> Reply:
        rt = runtime()
        return give_up(retry_or_give_up(task, rt.store, rt.settings, job_id, exc, waiting=waiting))

    return Driver(
        gone=lambda exc: gone(task, job_id, exc), task_error=task_error, header_part=header_part
    )


RowBody = Callable[[Task, Runtime, str, str], Outcome]


def _row_task(
    task: Task,
    job_id: str,
    row: str,
    down_since: float | None,
    body: RowBody,
    reply: Callable[[Outcome], Reply] | None = None,
) -> Reply:
    """prepare_row and aggregate_row: on a task error the row waits (not stalled) for the
    retry, and once retries are spent the row fails with the error. A row task whose outcome
    lets the row's turn go (evalq.worker.lifecycle.outcomes: all but Planned), or whose job is gone,
    hands the freed turn to a waiting row."""
    rt = runtime()
    ended: list[Outcome] = []

    def run() -> Reply:
        outcome = body(task, rt, job_id, row)
        ended.append(outcome)
        return {"row": row, **(reply or _reply)(outcome)}

    def give_up(why: str) -> Reply:
        ended.append(fail_row(rt.store, job_id, row, "judge_error", why))
        return {"row": row, "status": "failed", "error": why}

    def waiting(delay: float) -> None:
        rt.store.touch(job_id, row, at=time.time() + delay)

    answer = guarded(task, job_id, down_since, run, _driver(task, job_id, give_up, waiting))
    if not ended or ended[-1].frees_turn:
        _hand_out_turns(rt)
    return answer


def _hand_out_turns(rt: Runtime) -> None:
    """Free turns to waiting rows (evalq.worker.dispatch.turns). What goes wrong here only delays
    them: the watchdog's next sweep hands turns out too, so it is logged, not retried."""

    def send_row(job_id: str, line: str) -> None:
        scheduler().send(PREPARE_ROW, (job_id, line), None)

    try:
        hand_out(rt.store, rt.settings, send_row)
    except Exception:
        log.warning("turns: handing out failed; the watchdog's next sweep does it", exc_info=True)


def _online(task: Task) -> Online:
    return Online(task.request.retries, (task.request.kwargs or {}).get("first_429_at"))


def _reply(outcome: Outcome) -> Reply:
    """What a task returns for how its step ended (its row or unit named by the caller)."""
    match outcome:
        case Planned(units=units):
            return {"units": len(units)}
        case Finished(status=status, units=units):
            return {"status": status} if units is None else {"status": status, "units": units}
        case Answered(status=status):
            return {"status": status}
        case Duplicate(status=status):
            return {"duplicate": True} if status is None else {"status": status, "duplicate": True}
        case Paused():
            return {"paused": True}
        case Skipped():
            return {"skipped": True}
    raise AssertionError(f"a row task cannot end with {outcome}")


def _countdown(task: Task, rt: Runtime, outcome: Outcome) -> None:
    """A judge error's countdown (evalq.worker.lifecycle.judge_errors) as a Celery retry."""
    if isinstance(outcome, RetryAfter):
        # down_since is dropped: Redis answered, so a later outage starts a new budget.
        raise scheduler().retry(
            task,
            countdown=outcome.delay_s,
            kwargs={"first_429_at": outcome.first_429_at},
            max_retries=rt.settings.rate_limit_max_retries,
        ) from None


@app.task(bind=True, name=PREPARE_ROW, max_retries=None, ignore_result=True)
def prepare_row(
    self: Task,
    job_id: str,
    row: str,
    down_since: float | None = None,
    first_429_at: float | None = None,
    task_errors: int = 0,
) -> dict[str, Any]:
    return _row_task(self, job_id, row, down_since, _prepare_row)


def _prepare_row(task: Task, rt: Runtime, job_id: str, line: str) -> Outcome:
    outcome = online.prepare(rt, job_id, line, _online(task))
    _countdown(task, rt, outcome)
    if isinstance(outcome, Planned):
        header = [run_unit.s(job_id, line, index) for index in outcome.units]
        scheduler().chord(header, aggregate_row.s(job_id, line))
    return outcome


@app.task(bind=True, name="evalq.run_unit", max_retries=None)
def run_unit(
    self: Task,
    job_id: str,
    row: str,
    index: int,
    down_since: float | None = None,
    first_429_at: float | None = None,
    task_errors: int = 0,
) -> dict[str, Any]:
    """A task error (a bug of ours) is retried, then becomes the unit's unscored judge_error
    verdict: a chord header part must not fail, or the callback never runs."""
    rt = runtime()
    writes = UnitWrites()

    def waiting(delay: float) -> None:  # what the unit's calls spent, and a sign of life ahead
        writes.touch_at = time.time() + delay
        record_unit(rt, job_id, row, None, writes)

    def give_up(why: str) -> Reply:
        writes.touch_at = None
        record_unit(rt, job_id, row, unscored(index, "judge_error", why), writes)
        return {"index": index, "status": "unscored", "error": why}

    return guarded(
        self,
        job_id,
        down_since,
        lambda: _run_unit(self, rt, job_id, row, index, writes),
        _driver(self, job_id, give_up, waiting, header_part=True),
    )


def _run_unit(
    task: Task, rt: Runtime, job_id: str, line: str, index: int, writes: UnitWrites
) -> dict[str, Any]:
    outcome = online.run_unit(rt, job_id, line, index, writes, _online(task))
    _countdown(task, rt, outcome)
    return {"index": index, **_reply(outcome)}


@app.task(bind=True, name="evalq.aggregate_row", max_retries=None, ignore_result=True)
def aggregate_row(
    self: Task,
    _parts: list[Any],
    job_id: str,
    row: str,
    down_since: float | None = None,
    task_errors: int = 0,
) -> dict[str, Any]:
    return _row_task(self, job_id, row, down_since, _aggregate_row, _aggregate_reply)


def _aggregate_reply(outcome: Outcome) -> Reply:
    if isinstance(outcome, Skipped):
        return {"left": "for resume"}  # not counted: resume finishes it
    return _reply(outcome)


def _aggregate_row(task: Task, rt: Runtime, job_id: str, line: str) -> Outcome:
    early_retries_left = task.request.retries < _EARLY_CALLBACK_RETRIES
    outcome = online.aggregate(rt, job_id, line, early_retries_left=early_retries_left)
    if isinstance(outcome, RetryAfter):  # the chord completed early: wait for the stragglers
        again = scheduler().retry(
            task, countdown=outcome.delay_s, max_retries=_EARLY_CALLBACK_RETRIES
        )
        raise again
    return outcome
