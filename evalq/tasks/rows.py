"""The three tasks every metric runs: prepare_row plans the row and fans out one run_unit per unit
into a chord whose callback, aggregate_row, scores it. The row's life is evalq.worker.lifecycle's;
each task only turns its outcome into a chord, a Celery retry or a return value."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from celery import Task

from evalq.core.verdicts import unscored
from evalq.tasks.guard import Driver, Reply, TaskRun, guarded
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
from evalq.worker.store import RowRef
from evalq.worker.store.unit_writes import UnitWrites

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10


class _RowTaskRun(TaskRun):
    """A run of a row task: its row and the runtime. A task error is recorded and retried
    (evalq.worker.celery_app.task_errors), the row waiting (not stalled) meanwhile; once retries
    are spent, `give_up` with its text."""

    header_part: ClassVar[bool] = False

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        super().__init__(task, args)
        self.row = RowRef(self.job_id, args["line"])
        self.rt = runtime()

    def attempt(self) -> Online:
        """What this run knows of its tries, for the judge-error policy."""
        request = self.task.request
        return Online(request.retries, (request.kwargs or {}).get("first_429_at"))

    def driver(self) -> Driver:
        def task_error(exc: Exception) -> Reply:
            rt = self.rt
            why = retry_or_give_up(
                self.task, rt.store, rt.settings, self.job_id, exc, waiting=self.waiting
            )
            return self.give_up(why)

        return Driver(
            gone=self.gone,
            task_error=task_error,
            header_part=self.header_part,
        )

    def waiting(self, delay_s: float) -> None:
        self.rt.store.touch(self.job_id, self.row.line, at=time.time() + delay_s)

    def give_up(self, why: str) -> Reply:
        raise NotImplementedError


class RowRun(_RowTaskRun):
    """A run of prepare_row or aggregate_row: once retries are spent the row fails with the
    error. A run whose outcome lets the row's turn go (evalq.worker.lifecycle.outcomes: all but
    Planned and RetryAfter), or whose job is gone, hands the freed turn to a waiting row."""

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        super().__init__(task, args)
        self.outcome: Outcome | None = None

    def reply(self, outcome: Outcome, say: Callable[[Outcome], Reply] | None = None) -> Reply:
        """The task's reply for how its step ended, kept for `ended`."""
        self.outcome = outcome
        return {"row": self.row.line, **(say or _reply)(outcome)}

    def give_up(self, why: str) -> Reply:
        self.outcome = fail_row(self.rt.store, self.row, "judge_error", why)
        return {"row": self.row.line, "status": "failed", "error": why}

    def ended(self, reply: Reply) -> Reply:
        if self.outcome is None or self.outcome.frees_turn:
            _hand_out_turns(self.rt)
        return reply


class UnitRun(_RowTaskRun):
    """A run of run_unit: what its calls hold (`writes`), written with its outcome. A task
    error (a bug of ours) is retried, then becomes the unit's unscored judge_error verdict: a
    chord header part must not fail, or the callback never runs."""

    header_part = True

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        super().__init__(task, args)
        self.index: int = args["index"]
        self.writes = UnitWrites()

    def waiting(self, delay_s: float) -> None:
        """What the unit's calls spent, and a sign of life ahead."""
        self.writes.touch_at = time.time() + delay_s
        record_unit(self.rt, self.row, None, self.writes)

    def give_up(self, why: str) -> Reply:
        self.writes.touch_at = None
        record_unit(self.rt, self.row, unscored(self.index, "judge_error", why), self.writes)
        return {"index": self.index, "status": "unscored", "error": why}


def _hand_out_turns(rt: Runtime) -> None:
    """Free turns to waiting rows (evalq.worker.dispatch.turns). What goes wrong here only delays
    them: the watchdog's next sweep hands turns out too, so it is logged, not retried."""

    def send_row(job_id: str, line: str) -> None:
        scheduler().send(PREPARE_ROW, (job_id, line), None)

    try:
        hand_out(rt.store, rt.settings, send_row)
    except Exception:
        log.warning("turns: handing out failed; the watchdog's next sweep does it", exc_info=True)


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


def _countdown(run: _RowTaskRun, outcome: Outcome) -> None:
    """A judge error's countdown (evalq.worker.lifecycle.judge_errors) as a Celery retry."""
    if isinstance(outcome, RetryAfter):
        # down_since is dropped: Redis answered, so a later outage starts a new budget.
        raise scheduler().retry(
            run.task,
            countdown=outcome.delay_s,
            kwargs={"first_429_at": outcome.first_429_at},
            max_retries=run.rt.settings.rate_limit_max_retries,
        ) from None


@app.task(bind=True, name=PREPARE_ROW, max_retries=None, ignore_result=True)
@guarded(RowRun)
def prepare_row(
    run: RowRun,
    job_id: str,
    line: str,
    down_since: float | None = None,
    first_429_at: float | None = None,
    task_errors: int = 0,
) -> Reply:
    outcome = online.prepare(run.rt, run.row, run.attempt())
    _countdown(run, outcome)
    if isinstance(outcome, Planned):
        header = [run_unit.s(job_id, line, index) for index in outcome.units]
        scheduler().chord(header, aggregate_row.s(job_id, line))
    return run.reply(outcome)


@app.task(bind=True, name="evalq.run_unit", max_retries=None)
@guarded(UnitRun)
def run_unit(
    run: UnitRun,
    job_id: str,
    line: str,
    index: int,
    down_since: float | None = None,
    first_429_at: float | None = None,
    task_errors: int = 0,
) -> Reply:
    outcome = online.run_unit(run.rt, run.row, index, run.writes, run.attempt())
    _countdown(run, outcome)
    return {"index": index, **_reply(outcome)}


@app.task(bind=True, name="evalq.aggregate_row", max_retries=None, ignore_result=True)
@guarded(RowRun)
def aggregate_row(
    run: RowRun,
    _parts: list[Any],
    job_id: str,
    line: str,
    down_since: float | None = None,
    task_errors: int = 0,
) -> Reply:
    early_retries_left = run.task.request.retries < _EARLY_CALLBACK_RETRIES
    outcome = online.aggregate(run.rt, run.row, early_retries_left=early_retries_left)
    if isinstance(outcome, RetryAfter):  # the chord completed early: wait for the stragglers
        raise scheduler().retry(
            run.task, countdown=outcome.delay_s, max_retries=_EARLY_CALLBACK_RETRIES
        )
    return run.reply(outcome, _aggregate_reply)


def _aggregate_reply(outcome: Outcome) -> Reply:
    if isinstance(outcome, Skipped):
        return {"left": "for resume"}  # not counted: resume finishes it
    return _reply(outcome)
