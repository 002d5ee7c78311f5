"""Batch mode's three tasks (logic in evalq.worker.batch.flow): submit_batch sweeps a job and sends
a round of batches; poll_batch looks at one batch, its Celery countdown retries being the timer;
ingest_batch reads a finished batch's results in chunks."""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Mapping
from typing import Any

from celery import Task
from celery.exceptions import TaskPredicate
from google.genai import errors as genai_errors

from evalq.core.errors import JobNotFound
from evalq.tasks.guard import OUT_OF_REACH, Driver, Reply, TaskRun, guard, guarded
from evalq.worker.batch import ledger, orphans
from evalq.worker.batch.flow import ingest_one, poll_one, submit_round
from evalq.worker.batch.ledger import next_poll_s
from evalq.worker.batch.names import INGEST_BATCH, POLL_BATCH, SUBMIT_BATCH
from evalq.worker.batch.service import display_name
from evalq.worker.celery_app.app import app
from evalq.worker.celery_app.scheduling import scheduler
from evalq.worker.celery_app.task_errors import describe, retry_or_give_up
from evalq.worker.runtime import runtime

log = logging.getLogger(__name__)
_RETRY_MAX_S = 60.0
# The Batch API out of reach (its SDK's socket errors); Redis out of reach is evalq.tasks.guard's.
_API_OUT_OF_REACH: tuple[type[Exception], ...] = (ConnectionError, TimeoutError)


class BatchRun(TaskRun):
    """A run of a batch task; `batch_id`: the batch a poll or an ingest works on, cancelled on
    the server when its job is gone. A task error is recorded (on the batch too) and retried,
    then the job pauses with it."""

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        super().__init__(task, args)
        self.batch_id: str | None = args.get("batch_id")

    def driver(self) -> Driver:
        return Driver(gone=self.gone, task_error=self.task_error, known=self.api_error)

    def gone(self, exc: JobNotFound) -> Reply:
        task, job_id, batch_id = self.task, self.job_id, self.batch_id
        if batch_id is None:
            return super().gone(exc)
        log.warning("%s: job %s is gone: %s", task.name, job_id, exc)
        orphan = Driver(gone=super().gone, known=self.api_error)
        return guard(
            task, job_id, self.down_since, lambda: _cancel_orphan(task, job_id, batch_id), orphan
        )

    def api_error(self, exc: Exception) -> Reply | None:
        """The Batch API's errors: a refusal (4xx) pauses the job with the server's message;
        the API out of reach or failing (5xx, 408, 429, its transport) is tried again later."""
        task, job_id, batch_id = self.task, self.job_id, self.batch_id
        if isinstance(exc, genai_errors.APIError):
            _note(job_id, batch_id, exc)
            if exc.code is not None and 400 <= exc.code < 500 and exc.code not in (408, 429):
                message = f"the Batch API refused a request: {exc.code} {exc.status}: {exc.message}"
                runtime().store.pause(job_id, message)
                log.error("%s: job %s paused: %s", task.name, job_id, message)
                return {"paused": True}
            raise _again(task, exc) from None
        transport = type(exc).__module__.split(".")[0] in ("httpx", "httpcore")
        if transport or isinstance(exc, _API_OUT_OF_REACH):
            _note(job_id, batch_id, exc)
            raise _again(task, exc) from None
        return None

    def task_error(self, exc: Exception) -> Reply:
        return _task_error(self.task, self.job_id, self.batch_id, exc)


def _task_error(task: Task, job_id: str, batch_id: str | None, exc: Exception) -> dict[str, Any]:
    """Record the error (on the batch too), retry while retries last, then pause the job."""
    rt = runtime()
    if batch_id is not None:
        ledger.note_error(rt.store, job_id, batch_id, describe(exc), time.time())
    why = retry_or_give_up(task, rt.store, rt.settings, job_id, exc)
    if rt.store.pause(job_id, f"{why}; `evalq resume {job_id}` tries again once it is fixed"):
        log.error("%s: job %s paused: %s", task.name, job_id, why)
    return {"paused": True, "error": why}


def _note(job_id: str, batch_id: str | None, exc: Exception) -> None:
    """A poll or an ingest failed: say so on its batch's record, if Redis lets us."""
    if batch_id is None:
        return
    with contextlib.suppress(*OUT_OF_REACH):  # the retry that follows is what matters
        ledger.note_error(runtime().store, job_id, batch_id, describe(exc), time.time())


def _cancel_orphan(task: Task, job_id: str, batch_id: str) -> dict[str, Any]:
    """The job is gone: cancel its batch on the server. The API failing is retried as a task
    error (a few times); past that, the log names the batch to cancel by hand."""
    rt = runtime()
    try:
        name = orphans.cancel_orphan(rt.settings, job_id, batch_id)
    except Exception as exc:
        if isinstance(exc, (TaskPredicate, *OUT_OF_REACH)):
            raise
        why = retry_or_give_up(task, rt.store, rt.settings, job_id, exc)
        log.error(
            "%s: job %s is gone and its batch %s could not be cancelled (%s): cancel it by hand",
            task.name,
            job_id,
            display_name(job_id, batch_id),
            why,
        )
        return {"gone": True, "cancelled": None}
    return {"gone": True, "cancelled": name}


def _job_exists(job_id: str) -> None:
    """JobNotFound when the job's hash is gone (Redis lost its data, or it expired): its
    ledger is gone too, so this is asked first, not inferred from a missing record."""
    if runtime().store.status(job_id) == "unknown":
        raise JobNotFound(f"no job {job_id!r} in Redis (expired, or lost with Redis's data)")


def _again(task: Task, exc: Exception) -> Exception:
    delay = min(_RETRY_MAX_S, 2.0 ** min(task.request.retries, 6)) * random.uniform(0.5, 1.0)
    log.warning("%s: %s; again in %.1f s", task.name, exc, delay)
    return scheduler().retry(task, countdown=delay, exc=exc, max_retries=None)


@app.task(bind=True, name=SUBMIT_BATCH, max_retries=None, ignore_result=True)
@guarded(BatchRun)
def submit_batch(
    run: BatchRun, job_id: str, task_errors: int = 0, down_since: float | None = None
) -> Reply:
    return {"outcome": submit_round(runtime(), job_id, scheduler().send)}


@app.task(bind=True, name=POLL_BATCH, max_retries=None, ignore_result=True)
@guarded(BatchRun)
def poll_batch(
    run: BatchRun,
    job_id: str,
    batch_id: str,
    chain: str,
    interval_s: float | None = None,
    task_errors: int = 0,
    down_since: float | None = None,
) -> Reply:
    settings = runtime().settings
    interval = interval_s or settings.batch_poll_initial_s
    _job_exists(job_id)
    if not poll_one(runtime(), job_id, batch_id, chain, scheduler().send):
        return {"batch": batch_id, "polling": False}
    later = next_poll_s(interval, settings.batch_poll_max_s)
    # A poll that answered: task errors in a row start again from none.
    raise scheduler().retry(
        run.task, countdown=interval, kwargs={"interval_s": later}, max_retries=None
    )


@app.task(bind=True, name=INGEST_BATCH, max_retries=None, ignore_result=True)
@guarded(BatchRun)
def ingest_batch(
    run: BatchRun, job_id: str, batch_id: str, task_errors: int = 0, down_since: float | None = None
) -> Reply:
    _job_exists(job_id)
    ingest_one(runtime(), job_id, batch_id, scheduler().send)
    return {"batch": batch_id, "ingested": True}
