"""The three tasks every metric runs. The row's life is worker.lifecycle's (plain functions that
return an outcome); each task turns its outcome into a chord, a Celery retry or a return value,
through the scheduler in use (worker.scheduling). prepare_row plans the row (rubric or candidate
generation) and fans out one run_unit per unit into a chord whose callback, aggregate_row,
scores the row. Chord header tasks never raise, so the callback always fires. A row task that
ends its row hands the freed turn to a waiting row (worker.turns).

Cached work does not become tasks: prepare_row resolves inline every unit whose verdict is
stored or whose replies are all in the call cache, and only the units that need a judge call go
into the chord; a row with none left is aggregated at once (no chord: an empty header is not
allowed). A unit task reads what it needs in one round trip and writes its outcome (verdict,
activity, counters, cache entries, limiter correction) in one more (worker.unit_writes).

Retry policies come from the error classes (evalq.core.errors), read in one handler
(worker.lifecycle.judge_errors, shared with batch mode): "countdown" (429, or our limiter's next slot is far) becomes a Celery retry;
"pause" (a spent daily quota, a job halted by repeated refusals) pauses the job, leaving its
rows for `evalq resume`; anything else fails the row being prepared, or is the unit's unscored
verdict (metrics make those verdicts themselves; the handler covers what gets past them).

Infrastructure is not the judge: when Redis (or the broker on it) is out of reach, the task runs
again later with backoff and writes nothing in the meantime. Any other exception that escapes a
task (a bug of ours, an SDK's unexpected error) is a task error (worker.task_errors): recorded
on the job, retried a few times with backoff, then it fails the row (prepare_row,
aggregate_row) or is the unit's unscored judge_error verdict (run_unit). Rows are named by their
line number (see worker.store).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any

from celery import Task
from celery.exceptions import TaskPredicate
from kombu.exceptions import OperationalError

from evalq.core.errors import JobNotFound
from evalq.core.verdicts import unscored
from worker.app import PREPARE_ROW, app
from worker.lifecycle import online
from worker.lifecycle.ending import fail_row
from worker.lifecycle.judge_errors import Attempt
from worker.lifecycle.outcomes import (
    Answered,
    Duplicate,
    Finished,
    Outcome,
    Paused,
    Planned,
    RetryAfter,
    Skipped,
)
from worker.lifecycle.units import record_unit
from worker.runtime import Runtime, runtime
from worker.scheduling import scheduler
from worker.store import REDIS_DOWN
from worker.task_errors import describe, retry_or_give_up
from worker.turns import hand_out
from worker.unit_writes import UnitWrites

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10
# Redis itself, or publishing to the broker on it (kombu's error once its own retries are spent)
_OUT_OF_REACH: tuple[type[Exception], ...] = (*REDIS_DOWN, OperationalError)
_BACKOFF_MAX_S = 30.0


def _redis_down(task: Task, rt: Runtime, exc: Exception, down_since: float | None) -> Exception:
    """The whole task again later, with jittered backoff that roughly doubles, so nothing it
    would have written is replaced by a verdict. `down_since` (when this task first found Redis
    out of reach) travels with the retry; past redis_retry_max_s the error propagates and the
    task fails without a verdict, leaving the row to the watchdog or `evalq resume`."""
    now = time.time()
    since = now if down_since is None else down_since
    waited = now - since
    if waited >= rt.settings.redis_retry_max_s:
        log.error("%s: Redis out of reach for %.0f s, giving up: %s", task.name, waited, exc)
        raise exc
    delay = min(_BACKOFF_MAX_S, max(1.0, waited)) * random.uniform(0.5, 1.0)
    log.warning("%s: Redis out of reach (%s); again in %.1f s", task.name, exc, delay)
    kwargs = {**(task.request.kwargs or {}), "down_since": since}  # keeps first_429_at
    return scheduler().retry(task, countdown=delay, kwargs=kwargs, max_retries=None, exc=exc)


GiveUp = Callable[[str], dict[str, Any]]


def _guarded(
    task: Task,
    job_id: str,
    down_since: float | None,
    body: Callable[[], dict[str, Any]],
    give_up: GiveUp | None = None,
    waiting: Callable[[float], None] | None = None,
    *,
    header_part: bool = False,
) -> dict[str, Any]:
    """Run a task's body; Redis out of reach becomes a retry of the whole task (never a
    verdict), a job gone from Redis drops the task, and Celery's own control flow passes.
    Anything else is a task error (worker.task_errors): recorded, retried with backoff, then
    `give_up` with its text (the row fails, or the unit's verdict says so). What that handling
    meets itself is guarded the same way, less the last step; a chord `header_part` whose
    handling fails too (not for Redis out of reach) still ends, without a verdict, so the
    callback fires and scores the unit unscored."""
    try:
        return body()
    except TaskPredicate:  # Retry, Reject
        raise
    except _OUT_OF_REACH as exc:
        raise _redis_down(task, runtime(), exc, down_since) from None
    except JobNotFound as exc:
        return _gone(task, job_id, exc)
    except Exception as exc:
        if give_up is None:
            raise
        error = exc  # `exc` is unbound once the except clause ends; the closure keeps `error`
    try:
        return _guarded(
            task, job_id, down_since, lambda: _task_error(task, job_id, error, give_up, waiting)
        )
    except (TaskPredicate, *_OUT_OF_REACH):
        raise
    except Exception:
        if not header_part:
            raise
        log.exception(
            "%s: job %s: a task error's handling failed too; the part ends", task.name, job_id
        )
        return {"unrecorded": True, "error": describe(error)}


def _task_error(
    task: Task,
    job_id: str,
    exc: Exception,
    give_up: GiveUp,
    waiting: Callable[[float], None] | None,
) -> dict[str, Any]:
    rt = runtime()
    return give_up(retry_or_give_up(task, rt.store, rt.settings, job_id, exc, waiting=waiting))


RowBody = Callable[[Task, Runtime, str, str], dict[str, Any]]


def _row_task(
    task: Task, job_id: str, row: str, down_since: float | None, body: RowBody
) -> dict[str, Any]:
    """prepare_row and aggregate_row: on a task error the row waits (not stalled) for the
    retry, and once retries are spent the row fails with the error."""
    rt = runtime()

    def give_up(why: str) -> dict[str, Any]:
        fail_row(rt.store, job_id, row, "judge_error", why)
        return {"row": row, "status": "failed", "error": why}

    def waiting(delay: float) -> None:
        rt.store.touch(job_id, row, at=time.time() + delay)

    reply = _guarded(
        task, job_id, down_since, lambda: body(task, rt, job_id, row), give_up, waiting
    )
    if _turn_free(reply):
        _hand_out_turns(rt)
    return reply


def _turn_free(reply: dict[str, Any]) -> bool:
    """Whether the row task let its turn go: it counted the row (a "status", also when
    prepare_row answered every unit itself: "units" 0), or let the row go (paused, skipped, a
    duplicate), rather than sending its units as a chord (only "units")."""
    return "status" in reply or "units" not in reply


def _hand_out_turns(rt: Runtime) -> None:
    """Free turns to waiting rows (worker.turns). What goes wrong here only delays them: the
    watchdog's next sweep hands turns out too, so it is logged, not retried."""

    def send_row(job_id: str, line: str) -> None:
        scheduler().send(PREPARE_ROW, (job_id, line), None)

    try:
        hand_out(rt.store, rt.settings, send_row)
    except Exception:
        log.warning("turns: handing out failed; the watchdog's next sweep does it", exc_info=True)


def _gone(task: Task, job_id: str, exc: JobNotFound) -> dict[str, Any]:
    """The job is no longer in Redis (expired, or Redis lost its data): nothing to write to."""
    log.warning("%s: job %s is gone, task dropped: %s", task.name, job_id, exc)
    return {"gone": True}


def _attempt(task: Task) -> Attempt:
    return Attempt(task.request.retries, (task.request.kwargs or {}).get("first_429_at"))


def _reply(outcome: Outcome) -> dict[str, Any]:
    """What a task returns for how its step ended (its row or unit named by the caller)."""
    match outcome:
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
    """A judge error's countdown (worker.lifecycle.judge_errors) as a Celery retry."""
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


def _prepare_row(task: Task, rt: Runtime, job_id: str, line: str) -> dict[str, Any]:
    outcome = online.prepare(rt, job_id, line, _attempt(task))
    _countdown(task, rt, outcome)
    if isinstance(outcome, Planned):
        header = [run_unit.s(job_id, line, index) for index in outcome.units]
        scheduler().chord(header, aggregate_row.s(job_id, line))
        return {"row": line, "units": len(outcome.units)}
    return {"row": line, **_reply(outcome)}


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

    def give_up(why: str) -> dict[str, Any]:
        writes.touch_at = None
        record_unit(rt, job_id, row, unscored(index, "judge_error", why), writes)
        return {"index": index, "status": "unscored", "error": why}

    return _guarded(
        self,
        job_id,
        down_since,
        lambda: _run_unit(self, rt, job_id, row, index, writes),
        give_up,
        waiting,
        header_part=True,
    )


def _run_unit(
    task: Task, rt: Runtime, job_id: str, line: str, index: int, writes: UnitWrites
) -> dict[str, Any]:
    outcome = online.run_unit(rt, job_id, line, index, writes, _attempt(task))
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
    return _row_task(self, job_id, row, down_since, _aggregate_row)


def _aggregate_row(task: Task, rt: Runtime, job_id: str, line: str) -> dict[str, Any]:
    early_retries_left = task.request.retries < _EARLY_CALLBACK_RETRIES
    outcome = online.aggregate(rt, job_id, line, early_retries_left=early_retries_left)
    if isinstance(outcome, RetryAfter):  # the chord completed early: wait for the stragglers
        again = scheduler().retry(
            task, countdown=outcome.delay_s, max_retries=_EARLY_CALLBACK_RETRIES
        )
        raise again
    if isinstance(outcome, Skipped):
        return {"row": line, "left": "for resume"}  # not counted: resume finishes it
    return {"row": line, **_reply(outcome)}
