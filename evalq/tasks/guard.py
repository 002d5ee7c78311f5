"""The one guard every task runs its body in, online (evalq.tasks.rows) and in batch mode
(evalq.tasks.batch): what escapes a body is sorted here, the same way for both. A task declares
it once, `@guarded(SomeRun)` under `@app.task`: the guard makes the task's run (a TaskRun, the
body's first argument in the bound task's place) from the message's arguments, runs the body in
the rules below with the run's Driver, and hands the reply to the run's `ended`.

- Celery's own control flow (a Retry, a Reject) passes.
- Redis out of reach (or the broker on it) is infrastructure, never a verdict: the whole task
  runs again later with jittered backoff that roughly doubles, and writes nothing meanwhile.
  `down_since` (when the task first found Redis out of reach) rides along in the retry's
  kwargs; past EVALQ_REDIS_RETRY_MAX_S the error propagates and the task fails without a
  verdict, leaving its row to the watchdog or its batch to the next sweep and `evalq resume`.
- A job gone from Redis: the driver's `gone` says what is left to do.
- An error the driver knows (batch mode: the Batch API's) goes to its `known`, which returns a
  reply, raises a retry, or returns None to let it count as a task error.
- Anything else is a task error (evalq.worker.celery_app.task_errors): recorded, retried a few times
  with backoff, then the driver's `task_error` gives up (a row fails, a unit's verdict says so, a
  batch job pauses). What that handling meets itself is guarded the same way, less the last
  step; a chord `header_part` whose handling fails too (not for Redis out of reach) still
  ends, without a verdict, so the chord's callback fires and scores the unit unscored.
"""

from __future__ import annotations

import functools
import inspect
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from celery import Task
from celery.exceptions import TaskPredicate
from kombu.exceptions import OperationalError

from evalq.core.errors import JobNotFound
from evalq.worker.celery_app.scheduling import scheduler
from evalq.worker.celery_app.task_errors import describe
from evalq.worker.runtime import runtime
from evalq.worker.store import REDIS_DOWN

log = logging.getLogger(__name__)

# Redis itself, or publishing to the broker on it (kombu's error once its own retries are spent)
OUT_OF_REACH: tuple[type[Exception], ...] = (*REDIS_DOWN, OperationalError)
BACKOFF_MAX_S = 30.0

Reply = dict[str, Any]
P = ParamSpec("P")


@dataclass(frozen=True)
class Driver:
    """What a task does with what the guard sorts out: `gone` for its job gone from Redis,
    `task_error` to record and give up on anything unforeseen (None: let it propagate),
    `known` for errors of the driver's own (None: it has none)."""

    gone: Callable[[JobNotFound], Reply]
    task_error: Callable[[Exception], Reply] | None = None
    known: Callable[[Exception], Reply | None] | None = None
    header_part: bool = False


class TaskRun:
    """One run of a guarded task, made from the task and its message's arguments (by name) and
    handed to the body as its first argument: the task and its job, and `driver`, what the guard
    does with what escapes the body. A task's run of its own adds what its body and its driver
    share (its row, what its unit's calls hold)."""

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        self.task = task
        self.job_id: str = args["job_id"]

    def driver(self) -> Driver:
        return Driver(gone=lambda exc: gone(self.task, self.job_id, exc))

    def ended(self, reply: Reply) -> Reply:
        """The task's reply, once the body or the guard's handling has returned it."""
        return reply


RunT = TypeVar("RunT", bound=TaskRun)


def guarded(
    run_of: Callable[[Task, Mapping[str, Any]], RunT],
) -> Callable[[Callable[Concatenate[RunT, P], Reply]], Callable[Concatenate[Task, P], Reply]]:
    """The task's body wrapped once in the guard, as Celery's autoretry wraps Task.run: the
    body gets its run (`run_of(task, arguments)`) where the bound task would be, and keeps its
    signature, so Celery checks a message's arguments against it as before. Its parameters
    name `job_id` and `down_since`, which the guard reads."""

    def wrap(body: Callable[Concatenate[RunT, P], Reply]) -> Callable[Concatenate[Task, P], Reply]:
        signature = inspect.signature(body)

        def run_task(task: Task, /, *args: P.args, **kwargs: P.kwargs) -> Reply:
            bound = signature.bind(task, *args, **kwargs)
            bound.apply_defaults()
            run = run_of(task, bound.arguments)
            down_since: float | None = bound.arguments["down_since"]
            reply = guard(
                task, run.job_id, down_since, lambda: body(run, *args, **kwargs), run.driver()
            )
            return run.ended(reply)

        functools.update_wrapper(run_task, body)  # Celery names the task after it
        run_task.__signature__ = signature  # type: ignore[attr-defined]  # and checks it
        return run_task

    return wrap


def guard(
    task: Task, job_id: str, down_since: float | None, body: Callable[[], Reply], driver: Driver
) -> Reply:
    """Run a task's body under the rules above."""
    try:
        return body()
    except TaskPredicate:  # Retry, Reject
        raise
    except OUT_OF_REACH as exc:
        raise redis_down(task, exc, down_since) from None
    except JobNotFound as exc:
        return driver.gone(exc)
    except Exception as exc:
        if driver.known is not None and (reply := driver.known(exc)) is not None:
            return reply
        if driver.task_error is None:
            raise
        error = exc  # `exc` is unbound once the except clause ends; the closure keeps `error`
        give_up = driver.task_error
    handling = Driver(gone=driver.gone, known=driver.known)  # no second task error
    try:
        return guard(task, job_id, down_since, lambda: give_up(error), handling)
    except (TaskPredicate, *OUT_OF_REACH):
        raise
    except Exception:
        if not driver.header_part:
            raise
        log.exception(
            "%s: job %s: a task error's handling failed too; the part ends", task.name, job_id
        )
        return {"unrecorded": True, "error": describe(error)}


def redis_down(task: Task, exc: Exception, down_since: float | None) -> Exception:
    """The whole task again later (a Retry for the task to raise), or `exc` itself once Redis
    has been out of reach for redis_retry_max_s."""
    now = time.time()
    since = now if down_since is None else down_since
    waited = now - since
    if waited >= runtime().settings.redis_retry_max_s:
        log.error("%s: Redis out of reach for %.0f s, giving up: %s", task.name, waited, exc)
        return exc
    delay = min(BACKOFF_MAX_S, max(1.0, waited)) * random.uniform(0.5, 1.0)
    log.warning("%s: Redis out of reach (%s); again in %.1f s", task.name, exc, delay)
    kwargs = {**(task.request.kwargs or {}), "down_since": since}  # keeps what else rides along
    return scheduler().retry(task, countdown=delay, kwargs=kwargs, max_retries=None, exc=exc)


def gone(task: Task, job_id: str, exc: JobNotFound) -> Reply:
    """The job is no longer in Redis (expired, or Redis lost its data): nothing to write to."""
    log.warning("%s: job %s is gone, task dropped: %s", task.name, job_id, exc)
    return {"gone": True}
