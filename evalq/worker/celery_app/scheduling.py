"""Where a task's follow-up work goes (a chord of unit tasks, batch mode's next step, a retry):
the one Scheduler in use, Celery's in a worker, or the tests' in-process task runner, which
records what would be scheduled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from celery import Task, chord
from celery.canvas import Signature

from evalq.worker.celery_app.app import get_app
from evalq.worker.dispatch.queues import queue_for


class Scheduler(Protocol):
    def chord(self, header: Sequence[Signature], body: Signature) -> None:
        """Run `header` in parallel, then `body` with their results."""
        ...

    def send(self, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        """Send the task `name` on its queue, after `countdown_s` if given."""
        ...

    def retry(self, task: Task, **options: Any) -> Exception:
        """The running `task` again (Task.retry's options): a Retry, for the task to raise."""
        ...


class CeleryScheduler:
    def chord(self, header: Sequence[Signature], body: Signature) -> None:
        chord(list(header))(body)

    def send(self, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        get_app().send_task(name, args, countdown=countdown_s, queue=queue_for(name))

    def retry(self, task: Task, **options: Any) -> Exception:
        again: Exception = task.retry(throw=False, **options)
        return again


_in_use: list[Scheduler] = [CeleryScheduler()]


def scheduler() -> Scheduler:
    return _in_use[0]


def use_scheduler(new: Scheduler) -> Scheduler:
    """Hand the tasks `new` from now on; returns the one it replaces (to hand back later)."""
    old, _in_use[0] = _in_use[0], new
    return old
