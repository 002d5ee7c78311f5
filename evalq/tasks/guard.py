"""The one guard every task runs its body in, declared once as `@guarded(SomeRun)` under
`@app.task`: what escapes a body is sorted here, online and in batch mode alike
(docs/architecture/row-path.md: infrastructure is never a verdict, nothing fails in silence)."""

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
    handed to the body as its first argument: the task, its job, `down_since`, and `driver`, what
    the guard does with what escapes the body (by default: `gone` when the job is). A task's run
    of its own adds what its body and its driver share (its row, what its unit's calls hold)."""

    def __init__(self, task: Task, args: Mapping[str, Any]) -> None:
        self.task = task
        self.job_id: str = args["job_id"]
        self.down_since: float | None = args["down_since"]

    def driver(self) -> Driver:
        return Driver(gone=self.gone)

    def gone(self, exc: JobNotFound) -> Reply:
        """The job is not in Redis (expired, or Redis lost its data): nothing to write to."""
        log.warning("%s: job %s is gone, task dropped: %s", self.task.name, self.job_id, exc)
        return {"gone": True}

    def ended(self, reply: Reply) -> Reply:
        """The task's reply, once the body or the guard's handling has returned it."""
        return reply


RunT = TypeVar("RunT", bound=TaskRun)


def guarded(
    run_of: Callable[[Task, Mapping[str, Any]], RunT],
) -> Callable[[Callable[Concatenate[RunT, P], Reply]], Callable[Concatenate[Task, P], Reply]]:
    """The task's body wrapped once in the guard, as Celery's autoretry wraps Task.run: the
    body gets its run (`run_of(task, arguments)`) where the bound task would be, and keeps its
    signature, so Celery checks a message's arguments against it. Its parameters
    name `job_id` and `down_since`, which the run reads."""

    def wrap(body: Callable[Concatenate[RunT, P], Reply]) -> Callable[Concatenate[Task, P], Reply]:
        signature = inspect.signature(body)

        def run_task(task: Task, /, *args: P.args, **kwargs: P.kwargs) -> Reply:
            bound = signature.bind(task, *args, **kwargs)
            bound.apply_defaults()
            run = run_of(task, bound.arguments)
            reply = guard(
                task, run.job_id, run.down_since, lambda: body(run, *args, **kwargs), run.driver()
            )
            return run.ended(reply)

        functools.update_wrapper(run_task, body)  # Celery names the task after it
        run_task.__signature__ = signature  # type: ignore[attr-defined]  # and checks it
        return run_task

    return wrap


def guard(
    task: Task, job_id: str, down_since: float | None, body: Callable[[], Reply], driver: Driver
) -> Reply:
    """Run a task's body: Celery's control flow passes; Redis out of reach (or the broker on it)
    runs the whole task again later, writing nothing, until redis_retry_max_s; a job gone goes
    to the driver's `gone`; an error the driver knows to its `known`; anything else is a task
    error (evalq.worker.celery_app.task_errors), given up on by the driver's `task_error`. What
    that handling meets is guarded the same way, less the last step; a chord `header_part` whose
    handling fails too still ends, without a verdict, so the chord's callback fires."""
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
    """The whole task again later with jittered backoff that roughly doubles (a Retry for the task
    to raise, `down_since` riding along in its kwargs), or `exc` itself once Redis has been out
    of reach for redis_retry_max_s: the task fails without a verdict, for the watchdog or the
    next sweep and `evalq resume` to take up."""
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
