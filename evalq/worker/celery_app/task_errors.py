"""What any task does with an exception no handler names (a bug of ours, an SDK's TypeError, a
reply shaped as nobody expected): one rule for every task, here only; the rule is described in
docs/architecture/row-path.md ("Nothing fails in silence")."""

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
    stalls), or return the text to give up with once they are spent: the caller fails its row,
    gives its unit an unscored judge_error verdict, or pauses its batch-mode job.

    The count rides in the task's kwargs (KWARG), so it survives retries and a redelivery.
    Celery's control flow, infrastructure errors and a job gone from Redis never come here:
    callers catch those first."""
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
