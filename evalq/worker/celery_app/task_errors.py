"""What a task does with an exception no handler names (a bug of ours, an SDK's TypeError, a
reply shaped as nobody expected): one rule for every task, applied here and only here (as
dramatiq's Retries middleware applies its own), by the guard every task of evalq.tasks.rows and
evalq.tasks.batch is declared with (evalq.tasks.guard).

Each such exception, in any task:
1. is recorded on the job (Store.record_task_error: a count, the last error as "Type: message",
   the task it escaped from, when), so `evalq status` and the Prometheus endpoint show it, and
   its traceback goes to the worker's log;
2. runs the task again after a jittered exponential backoff (EVALQ_TASK_ERROR_BACKOFF_S,
   doubling, up to EVALQ_TASK_ERROR_BACKOFF_MAX_S), at most EVALQ_TASK_ERROR_RETRIES times in a
   row: the count rides in the task's kwargs (`task_errors`), as first_429_at and down_since do,
   so it survives the retries and a redelivery, and a task that gets further (a retry of
   another kind, a poll that answers) starts again from none;
3. then the caller gives up with the error's text, "internal error in <task>: <Type>: <message>":
   online the row fails (prepare_row, aggregate_row) or the unit is an unscored judge_error
   verdict (run_unit: a chord header part must end, or its callback never fires); batch mode
   pauses the job, so `evalq resume` tries again once the cause is fixed.

Not for Celery's control flow (Retry, Reject), infrastructure (Redis or the broker out of reach,
retried by the task and never a verdict) or a job gone from Redis: callers catch those first.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

from celery import Task

from evalq.worker.celery_app.scheduling import scheduler
from evalq.worker.settings import Settings
from evalq.worker.store import Store, clip_error

log = logging.getLogger(__name__)

KWARG = "task_errors"  # the task's kwarg counting task errors in a row


def task_label(task: Task) -> str:
    """The task's short name, as status shows it: "prepare_row" for "evalq.prepare_row"."""
    return str(task.name).rsplit(".", 1)[-1]


def describe(exc: BaseException) -> str:
    """The error as "Type: message" on one line (a pydantic error spans several), clipped."""
    return clip_error(" ".join(f"{type(exc).__name__}: {exc}".split()))


def backoff_s(settings: Settings, attempt: int) -> float:
    """The delay before retry number `attempt` + 1: the base doubling each time, capped, and
    jittered down to half of it, so tasks that failed together do not come back together."""
    full = min(settings.task_error_backoff_max_s, settings.task_error_backoff_s * 2.0**attempt)
    return full * random.uniform(0.5, 1.0)


def retry_or_give_up(
    task: Task,
    store: Store,
    settings: Settings,
    job_id: str,
    exc: Exception,
    *,
    waiting: Callable[[float], None] | None = None,
) -> str:
    """Record `exc` on the job and log its traceback; then raise the Celery Retry while
    retries last (after `waiting(delay)`, which tells the watchdog the work waits rather than
    stalls), or return the text to give up with once they are spent."""
    label = task_label(task)
    kwargs = dict(task.request.kwargs or {})
    spent = int(kwargs.get(KWARG) or 0)
    log.error(
        "%s: job %s: %s (task error %d of at most %d retries)",
        task.name,
        job_id,
        describe(exc),
        spent + 1,
        settings.task_error_retries,
        exc_info=exc,
    )
    store.record_task_error(job_id, label, describe(exc), time.time())
    if spent >= settings.task_error_retries:
        log.error("%s: job %s: giving up after %d retries", task.name, job_id, spent)
        return f"internal error in {label}: {describe(exc)}"
    delay = backoff_s(settings, spent)
    if waiting is not None:
        waiting(delay)
    kwargs[KWARG] = spent + 1
    # Redis answered (the error is recorded): a later outage starts a budget of its own.
    kwargs.pop("down_since", None)
    raise scheduler().retry(
        task, countdown=delay, kwargs=kwargs, exc=exc, max_retries=None
    ) from None
