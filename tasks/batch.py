"""Batch mode's three tasks (logic in worker.batch.flow): submit_batch sweeps a job and sends
a round of batches; poll_batch looks at one batch, its Celery countdown retries being the timer
(the interval backs off); ingest_batch reads a finished batch's results in chunks.

Infrastructure trouble (Redis, the Batch API answering 5xx or not at all) retries the task
later and writes nothing; a refusal (4xx) pauses the job with the server's message, since
sending the same request again would get the same answer.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from celery import Task
from celery.exceptions import TaskPredicate
from google.genai import errors as genai_errors
from kombu.exceptions import OperationalError

from evalq.core.errors import JobNotFound
from worker.app import app
from worker.batch.flow import ingest_one, poll_one, submit_round
from worker.batch.ledger import next_poll_s
from worker.batch.names import INGEST_BATCH, POLL_BATCH, SUBMIT_BATCH
from worker.queues import PREPARE_ROW, QUEUE_QUESTIONS, QUEUE_ROWS
from worker.runtime import runtime
from worker.store import REDIS_DOWN

log = logging.getLogger(__name__)
_RETRY_MAX_S = 60.0
_OUT_OF_REACH: tuple[type[Exception], ...] = (
    *REDIS_DOWN,
    OperationalError,
    ConnectionError,
    TimeoutError,
)


def send(name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
    queue = QUEUE_ROWS if name == PREPARE_ROW else QUEUE_QUESTIONS
    app.send_task(name, args, countdown=countdown_s, queue=queue)


def _guarded(task: Task, job_id: str, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return body()
    except TaskPredicate:
        raise
    except JobNotFound as exc:
        log.warning("%s: job %s is gone: %s", task.name, job_id, exc)
        return {"gone": True}
    except genai_errors.APIError as exc:
        if exc.code is not None and 400 <= exc.code < 500 and exc.code not in (408, 429):
            message = f"the Batch API refused a request: {exc.code} {exc.status}: {exc.message}"
            runtime().store.pause(job_id, message)
            log.error("%s: job %s paused: %s", task.name, job_id, message)
            return {"paused": True}
        raise _again(task, exc) from None
    except _OUT_OF_REACH as exc:
        raise _again(task, exc) from None
    except Exception as exc:  # transport errors of the SDK's HTTP client
        if type(exc).__module__.split(".")[0] in ("httpx", "httpcore"):
            raise _again(task, exc) from None
        raise


def _again(task: Task, exc: Exception) -> Exception:
    delay = min(_RETRY_MAX_S, 2.0 ** min(task.request.retries, 6)) * random.uniform(0.5, 1.0)
    log.warning("%s: %s; again in %.1f s", task.name, exc, delay)
    retry: Exception = task.retry(countdown=delay, exc=exc, max_retries=None, throw=False)
    return retry


@app.task(bind=True, name=SUBMIT_BATCH, max_retries=None, ignore_result=True)
def submit_batch(self: Task, job_id: str) -> dict[str, Any]:
    return _guarded(self, job_id, lambda: {"outcome": submit_round(runtime(), job_id, send)})


@app.task(bind=True, name=POLL_BATCH, max_retries=None, ignore_result=True)
def poll_batch(
    self: Task, job_id: str, batch_id: str, chain: str, interval_s: float | None = None
) -> dict[str, Any]:
    def body() -> dict[str, Any]:
        settings = runtime().settings
        interval = interval_s or settings.batch_poll_initial_s
        if not poll_one(runtime(), job_id, batch_id, chain, send):
            return {"batch": batch_id, "polling": False}
        later = next_poll_s(interval, settings.batch_poll_max_s)
        raise self.retry(
            countdown=interval, kwargs={"interval_s": later}, max_retries=None, throw=False
        )

    return _guarded(self, job_id, body)


@app.task(bind=True, name=INGEST_BATCH, max_retries=None, ignore_result=True)
def ingest_batch(self: Task, job_id: str, batch_id: str) -> dict[str, Any]:
    def body() -> dict[str, Any]:
        ingest_one(runtime(), job_id, batch_id, send)
        return {"batch": batch_id, "ingested": True}

    return _guarded(self, job_id, body)
