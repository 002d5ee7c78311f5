"""The three tasks every metric runs. Each is a few lines: load by id, call the metric with a
RowContext, store, decide retry. prepare_row plans the row (rubric or candidate generation) and
fans out one run_unit per unit into a chord whose callback, aggregate_row, scores the row.
Chord header tasks never raise, so the callback always fires.

Cached work does not become tasks: prepare_row resolves inline every unit whose verdict is
stored or whose replies are all in the call cache, and only the units that need a judge call go
into the chord; a row with none left is aggregated at once (no chord: an empty header is not
allowed). A unit task reads what it needs in one round trip and writes its outcome (verdict,
activity, counters, cache entries, limiter correction) in one more (worker.unit_writes).

Retry policies come from the error classes (evalq.core.errors), read in one handler,
`_on_judge_error`: "countdown" (429, or our limiter's next slot is far) becomes a Celery retry;
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

from celery import Task, chord
from celery.exceptions import Retry, TaskPredicate
from kombu.exceptions import OperationalError

from evalq.core.errors import InputError, JobHalted, JobNotFound, JudgeError, LimiterBusy, policy_of
from evalq.core.metric import Plan, check_plan_size, get_metric
from evalq.core.models import Verdict
from evalq.core.verdicts import unscored
from worker.app import PREPARE_ROW, app
from worker.inline_units import resolve_inline
from worker.jobs import aggregate_and_count, fail_row
from worker.runtime import Runtime, record_unit, row_context, runtime
from worker.store import REDIS_DOWN
from worker.task_errors import describe, retry_or_give_up
from worker.unit_writes import UnitWrites

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10
_IDLE = ("cancelled", "paused")
# Redis itself, or publishing to the broker on it (kombu's error once its own retries are spent)
_OUT_OF_REACH: tuple[type[Exception], ...] = (*REDIS_DOWN, OperationalError)
_BACKOFF_MAX_S = 30.0


def _redis_down(task: Task, rt: Runtime, exc: Exception, down_since: float | None) -> Retry:
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
    retry: Retry = task.retry(
        countdown=delay, kwargs=kwargs, max_retries=None, exc=exc, throw=False
    )
    return retry


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

    return _guarded(task, job_id, down_since, lambda: body(task, rt, job_id, row), give_up, waiting)


def _gone(task: Task, job_id: str, exc: JobNotFound) -> dict[str, Any]:
    """The job is no longer in Redis (expired, or Redis lost its data): nothing to write to."""
    log.warning("%s: job %s is gone, task dropped: %s", task.name, job_id, exc)
    return {"gone": True}


def _on_judge_error(
    task: Task,
    rt: Runtime,
    job_id: str,
    row: str,
    exc: JudgeError,
    writes: UnitWrites | None = None,
) -> str | None:
    """What a task does with a judge error, by its policy: "countdown" raises the Celery retry
    while retries last; "pause" pauses the job and returns None; anything else, and a countdown
    whose retries are spent, returns why the work stops (for a failed row or a verdict). A unit's
    `writes` (what its calls spent) are written before its retry is sent; on a pause, by the
    caller."""
    match policy_of(exc):
        case "pause":
            _pause(rt, job_id, exc)
            return None
        case "countdown":
            if (retry := _countdown(task, rt, job_id, row, exc, writes)) is not None:
                raise retry from None
            return _gave_up(task, rt, exc)
        case _:  # "never", and "backoff" once the judge client's own attempts are spent
            return exc.message


def _countdown(
    task: Task, rt: Runtime, job_id: str, row: str, exc: JudgeError, writes: UnitWrites | None
) -> Retry | None:
    """A Celery retry after the delay asked for (jittered), or None when retries are spent:
    too many of them, or EVALQ_RATE_LIMIT_MAX_TOTAL_S since the unit's first server 429 (its
    time rides along in the task's kwargs, so it survives the countdowns)."""
    if task.request.retries >= rt.settings.rate_limit_max_retries:
        return None
    first = (task.request.kwargs or {}).get("first_429_at")
    if first is None and not isinstance(exc, LimiterBusy):
        first = time.time()
    if first is not None and time.time() - first >= rt.settings.rate_limit_max_total_s:
        return None
    delay = min(exc.retry_after_s, rt.settings.max_retry_delay_s) + random.uniform(0, 1)
    if writes is None:
        rt.store.touch(job_id, row, at=time.time() + delay)  # waiting, not stalled
    else:  # what the unit's calls spent (a 429 counts), with the same sign of life
        writes.touch_at = time.time() + delay
        record_unit(rt, job_id, row, None, writes)
    # down_since is dropped: Redis answered, so a later outage starts a new budget.
    return task.retry(
        countdown=delay,
        kwargs={"first_429_at": first},
        max_retries=rt.settings.rate_limit_max_retries,
        throw=False,
    )


def _gave_up(task: Task, rt: Runtime, exc: JudgeError) -> str:
    """Why a unit stopped retrying a rate limit, for its judge_error verdict."""
    first = (task.request.kwargs or {}).get("first_429_at")
    if first is not None and time.time() - first >= rt.settings.rate_limit_max_total_s:
        return (
            f"still rate limited {time.time() - first:.0f} s after the first 429, over "
            f"EVALQ_RATE_LIMIT_MAX_TOTAL_S={rt.settings.rate_limit_max_total_s:g}: {exc.message}"
        )
    return f"still rate limited after {task.request.retries} retries: {exc.message}"


def _pause(rt: Runtime, job_id: str, exc: JudgeError) -> None:
    if isinstance(exc, JobHalted):
        return  # already paused where it was decided; pausing again could undo a resume
    if rt.store.pause(job_id, f"daily quota exhausted: {exc.message}"):
        log.warning("job %s paused: %s", job_id, exc.message)


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


def _prepare_row(task: Task, rt: Runtime, job_id: str, row: str) -> dict[str, Any]:
    # Read now, not cached: a row skipped for a pause that a resume has just lifted would wait
    # for the watchdog.
    if rt.store.is_done(job_id, row) or rt.store.status(job_id) in _IDLE:
        return {"row": row, "skipped": True}
    rt.store.touch(job_id, row)
    ctx = row_context(rt, job_id, row)
    metric = get_metric(ctx.job.metric)
    plan = rt.store.row_plan(job_id, row, metric.plan_model)
    if plan is None:
        try:
            plan = metric.plan(ctx)
            check_plan_size(plan, ctx.row.id, rt.settings.max_plan_bytes)
        except InputError as exc:
            fail_row(rt.store, job_id, row, "input_error", f"bad input: {exc}")
            return {"row": row, "status": "failed"}
        except JudgeError as exc:
            if (why := _on_judge_error(task, rt, job_id, row, exc)) is None:
                return {"row": row, "paused": True}
            fail_row(rt.store, job_id, row, exc.reason, f"preparing the row failed: {why}")
            return {"row": row, "status": "failed"}
        # First write wins: a redelivery keeps the indexes the first delivery sent.
        plan = rt.store.keep_row_plan(job_id, row, plan)
    if not plan.units:
        nothing = InputError(ctx.row.id, "(row)", "nothing to judge")
        fail_row(rt.store, job_id, row, "input_error", f"bad input: {nothing}")
        return {"row": row, "status": "failed"}
    asked = resolve_inline(rt, job_id, row, plan)
    if not asked:  # every unit answered: no chord (an empty header is not allowed)
        return {**_aggregate(rt, job_id, row, plan, rt.store.verdicts(job_id, row)), "units": 0}
    # Counted as sent: a redelivered prepare_row sends the units still unanswered again.
    rt.store.incr(job_id, unit_tasks=len(asked))
    chord([run_unit.s(job_id, row, index) for index in asked])(aggregate_row.s(job_id, row))
    return {"row": row, "units": len(asked)}


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
    task: Task, rt: Runtime, job_id: str, row: str, index: int, writes: UnitWrites
) -> dict[str, Any]:
    """One read (UnitInputs), the metric's call(s), one write (record_unit) on every way out
    but a duplicate or an idle job: a verdict, a countdown retry, a pause."""
    seen = rt.store.unit_inputs(job_id, row, index, lambda c: get_metric(c.metric).plan_model)
    if seen.verdict is not None:
        return {"index": index, "status": seen.verdict.status, "duplicate": True}
    if seen.status in _IDLE:
        return {"index": index, "skipped": True}  # left unanswered for `evalq resume`
    if seen.plan is None:
        raise RuntimeError(f"row {row} has no stored plan")
    writes.budget = (seen.spent_nanos, seen.cap_nanos)
    ctx = row_context(rt, job_id, row, writes)  # config and row: read with the inputs
    try:
        verdict = get_metric(ctx.job.metric).run_unit(ctx, seen.plan, seen.plan.units[index])
    except JudgeError as exc:
        if (why := _on_judge_error(task, rt, job_id, row, exc, writes)) is None:
            record_unit(rt, job_id, row, None, writes)  # what the unit spent before the pause
            return {"index": index, "paused": True}
        verdict = unscored(index, exc.reason, why)
    record_unit(rt, job_id, row, verdict, writes)
    return {"index": index, "status": verdict.status}


def _plan(rt: Runtime, job_id: str, row: str) -> Plan[Any]:
    model = get_metric(rt.store.config(job_id).metric).plan_model
    plan: Plan[Any] | None = rt.store.row_plan(job_id, row, model)
    if plan is None:
        raise RuntimeError(f"row {row} has no stored plan")
    return plan


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


def _aggregate_row(task: Task, rt: Runtime, job_id: str, row: str) -> dict[str, Any]:
    if rt.store.is_done(job_id, row):
        return {"row": row, "duplicate": True}
    plan, verdicts = _plan(rt, job_id, row), rt.store.verdicts(job_id, row)
    if len(verdicts) < len(plan.units):
        if rt.store.status(job_id) in _IDLE:
            return {"row": row, "left": "for resume"}  # not counted: resume finishes it
        # A redelivered header part can complete the chord early; wait for the stragglers a little.
        if task.request.retries < _EARLY_CALLBACK_RETRIES:
            raise task.retry(countdown=2, max_retries=_EARLY_CALLBACK_RETRIES)
    return _aggregate(rt, job_id, row, plan, verdicts)


def _aggregate(
    rt: Runtime, job_id: str, row: str, plan: Plan[Any], verdicts: dict[int, Verdict]
) -> dict[str, Any]:
    """Score the row and count it (once: finish_row's gate)."""
    result = aggregate_and_count(rt.store, job_id, row, plan, verdicts)
    return {"row": row, "status": result.status}
