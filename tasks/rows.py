"""The three tasks every metric runs. Each is a few lines: load by id, call the metric with a
RowContext, store, decide retry. prepare_row plans the row (rubric or candidate generation) and
fans out one run_unit per unit into a chord whose callback, aggregate_row, scores the row.
Chord header tasks never raise, so the callback always fires.

Retry policies come from the error classes: "countdown" (429, or our limiter's next slot is far)
becomes a Celery retry; "pause" (a spent daily quota) pauses the job, leaving its rows for
`evalq resume`; everything else is already an unscored verdict or a failed row when it gets here.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from celery import Task, chord
from celery.exceptions import Retry

from evalq.errors import (
    InputError,
    JobHalted,
    JudgeError,
    LimiterBusy,
    QuotaExhausted,
    RateLimited,
)
from evalq.gecko import failed_row, unscored
from evalq.metric import Plan, check_plan_size, get_metric
from worker.app import PREPARE_ROW, app
from worker.jobs import finish_row
from worker.runtime import Runtime, row_context, runtime

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10
_IDLE = ("cancelled", "paused")


def _countdown(task: Task, rt: Runtime, job_id: str, row_id: str, exc: RateLimited) -> Retry | None:
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
    rt.store.touch(job_id, row_id, at=time.time() + delay)  # waiting, not stalled
    kwargs = {**(task.request.kwargs or {}), "first_429_at": first}
    return task.retry(
        countdown=delay,
        kwargs=kwargs,
        max_retries=rt.settings.rate_limit_max_retries,
        throw=False,
    )


def _gave_up(task: Task, rt: Runtime, exc: RateLimited) -> str:
    """Why a unit stopped retrying a rate limit, for its judge_error verdict."""
    first = (task.request.kwargs or {}).get("first_429_at")
    if first is not None and time.time() - first >= rt.settings.rate_limit_max_total_s:
        return (
            f"still rate limited {time.time() - first:.0f} s after the first 429, over "
            f"EVALQ_RATE_LIMIT_MAX_TOTAL_S={rt.settings.rate_limit_max_total_s:g}: {exc.message}"
        )
    return f"still rate limited after {task.request.retries} retries: {exc.message}"


def _pause(rt: Runtime, job_id: str, exc: QuotaExhausted | JobHalted) -> None:
    if isinstance(exc, JobHalted):
        return  # already paused where it was decided; pausing again could undo a resume
    if rt.store.pause(job_id, f"daily quota exhausted: {exc.message}"):
        log.warning("job %s paused: %s", job_id, exc.message)


def _fail_row(
    rt: Runtime, job_id: str, row_id: str, exc: JudgeError | InputError, what: str
) -> None:
    row = rt.store.row(job_id, row_id)
    reason = exc.reason if isinstance(exc, JudgeError) else "input_error"
    result = failed_row(row.id, row.line, row.prompt, reason, f"{what}: {exc}")
    finish_row(rt.store, job_id, result, rt.store.config(job_id).rows_total)


@app.task(bind=True, name=PREPARE_ROW, max_retries=None, ignore_result=True)
def prepare_row(
    self: Task, job_id: str, row_id: str, first_429_at: float | None = None
) -> dict[str, Any]:
    rt = runtime()
    if rt.store.is_done(job_id, row_id) or rt.store.recent_status(job_id) in _IDLE:
        return {"row": row_id, "skipped": True}
    rt.store.touch(job_id, row_id)
    ctx = row_context(rt, job_id, row_id)
    try:
        plan = rt.store.row_plan(job_id, row_id) or get_metric(ctx.job.metric).plan(ctx)
        check_plan_size(plan, row_id, rt.settings.max_plan_bytes)
    except InputError as exc:
        _fail_row(rt, job_id, row_id, exc, "bad input")
        return {"row": row_id, "status": "failed"}
    except (QuotaExhausted, JobHalted) as exc:
        _pause(rt, job_id, exc)
        return {"row": row_id, "paused": True}
    except RateLimited as exc:
        if (retry := _countdown(self, rt, job_id, row_id, exc)) is not None:
            raise retry from None
        _fail_row(rt, job_id, row_id, exc, f"preparing the row: {_gave_up(self, rt, exc)}")
        return {"row": row_id, "status": "failed"}
    except JudgeError as exc:
        _fail_row(rt, job_id, row_id, exc, "preparing the row failed")
        return {"row": row_id, "status": "failed"}
    rt.store.save_row_plan(job_id, row_id, plan)  # first write wins: redeliveries keep indexes
    plan = rt.store.row_plan(job_id, row_id) or plan
    if not plan.units:
        _fail_row(rt, job_id, row_id, InputError(row_id, "(row)", "nothing to judge"), "bad input")
        return {"row": row_id, "status": "failed"}
    header = [run_unit.s(job_id, row_id, unit.index) for unit in plan.units]
    chord(header)(aggregate_row.s(job_id, row_id))
    return {"row": row_id, "units": len(header)}


@app.task(bind=True, name="evalq.run_unit", max_retries=None)
def run_unit(
    self: Task, job_id: str, row_id: str, index: int, first_429_at: float | None = None
) -> dict[str, Any]:
    rt = runtime()
    try:
        return _run_unit(self, rt, job_id, row_id, index)
    except Retry:
        raise
    except Exception as exc:  # a chord header must not fail, or the row's callback never runs
        log.exception("run_unit %s/%s/%s crashed", job_id, row_id, index)
        verdict = unscored(index, "judge_error", f"internal error: {type(exc).__name__}: {exc}")
        try:
            rt.store.save_verdict(job_id, row_id, verdict)
        except Exception:
            log.exception("could not record the failure either")
        return {"index": index, "status": "unscored"}


def _run_unit(task: Task, rt: Runtime, job_id: str, row_id: str, index: int) -> dict[str, Any]:
    if (existing := rt.store.verdict(job_id, row_id, index)) is not None:
        return {"index": index, "status": existing.status, "duplicate": True}
    if rt.store.recent_status(job_id) in _IDLE:
        return {"index": index, "skipped": True}  # left unanswered for `evalq resume`
    plan = _plan(rt, job_id, row_id)
    ctx = row_context(rt, job_id, row_id)
    try:
        verdict = get_metric(ctx.job.metric).run_unit(ctx, plan, plan.units[index])
    except (QuotaExhausted, JobHalted) as exc:
        _pause(rt, job_id, exc)
        return {"index": index, "paused": True}
    except RateLimited as exc:
        if (retry := _countdown(task, rt, job_id, row_id, exc)) is not None:
            raise retry from None
        verdict = unscored(index, "judge_error", _gave_up(task, rt, exc))
    rt.store.save_verdict(job_id, row_id, verdict)
    rt.store.touch(job_id, row_id)
    return {"index": index, "status": verdict.status}


def _plan(rt: Runtime, job_id: str, row_id: str) -> Plan:
    plan: Plan | None = rt.store.row_plan(job_id, row_id)
    if plan is None:
        raise RuntimeError(f"row {row_id} has no stored plan")
    return plan


@app.task(bind=True, name="evalq.aggregate_row", max_retries=None, ignore_result=True)
def aggregate_row(self: Task, _parts: list[Any], job_id: str, row_id: str) -> dict[str, Any]:
    rt = runtime()
    if rt.store.is_done(job_id, row_id):
        return {"row": row_id, "duplicate": True}
    plan, verdicts = _plan(rt, job_id, row_id), rt.store.verdicts(job_id, row_id)
    if len(verdicts) < len(plan.units):
        if rt.store.status(job_id) in _IDLE:
            return {"row": row_id, "left": "for resume"}  # not counted: resume finishes it
        # A redelivered header part can complete the chord early; wait for the stragglers a little.
        if self.request.retries < _EARLY_CALLBACK_RETRIES:
            raise self.retry(countdown=2, max_retries=_EARLY_CALLBACK_RETRIES)
    config = rt.store.config(job_id)
    result = get_metric(config.metric).aggregate(rt.store.row(job_id, row_id), plan, verdicts)
    finish_row(rt.store, job_id, result, config.rows_total)
    return {"row": row_id, "status": result.status}
