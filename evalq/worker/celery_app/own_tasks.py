"""A worker runs only evalq's own tasks (`evalq.*`), whoever can push to its queues: Celery's
built-in tasks registered on every app would otherwise run for anyone who may add to a queue."""

from __future__ import annotations

import logging
from typing import Any

from celery import bootsteps
from celery.signals import task_unknown

log = logging.getLogger(__name__)

OWN_PREFIX = "evalq."  # every task evalq defines (tasks/rows.py, tasks/batch.py) is named so


def is_own(name: str) -> bool:
    return name.startswith(OWN_PREFIX)


class OwnTasksOnly(bootsteps.StartStopStep):  # type: ignore[misc]
    """After the consumer's Tasks step has built a strategy per registered task (at every
    (re)connection), keep evalq's only. The consumer's message handler looks names up in that
    same dict, and the event loop that feeds it starts after every other step.

    evalq needs none of Celery's built-ins in a worker: its chords join natively in the Redis
    result backend (no `celery.chord_unlock`), and groups and chords are applied where they are
    sent. A message naming a dropped task meets Celery's unregistered-task path: logged,
    rejected without requeueing, a NotRegistered failure stored as its result."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c: Any) -> None:
        for name in [n for n in c.strategies if not is_own(n)]:
            del c.strategies[name]


def _say_refused(sender: Any = None, **info: Any) -> None:
    """One line more than Celery's: the refusal is on purpose."""
    log.error(
        "refused task %r (id %s): an evalq worker runs only evalq's own tasks (%s*); "
        "the message was dropped",
        info.get("name"),
        info.get("id"),
        OWN_PREFIX,
    )


task_unknown.connect(_say_refused, weak=False)
