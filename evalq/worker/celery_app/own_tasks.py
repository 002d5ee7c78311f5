"""A worker runs only evalq's own tasks (`evalq.*`), whoever can push to its queues.

Celery registers its built-in tasks on every app (`celery.backend_cleanup`, `celery.chord`,
`celery.accumulate`, ...), and a worker runs any registered task a message names: anyone who
may add to a queue could make workers run them. evalq needs none of them in a worker: its
chords join natively in the Redis result backend (no `celery.chord_unlock`), and groups and
chords are applied where they are sent. So once the consumer has read the app's tasks, every
name but evalq's is dropped from what it will run: a message naming one meets Celery's
unregistered-task path, which logs it, rejects it without requeueing (it is gone, not
redelivered) and stores a NotRegistered failure as its result; this module logs one line more
saying it was refused on purpose."""

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
    same dict, and the event loop that feeds it starts after every other step."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c: Any) -> None:
        for name in [n for n in c.strategies if not is_own(n)]:
            del c.strategies[name]


def _say_refused(sender: Any = None, **info: Any) -> None:
    log.error(
        "refused task %r (id %s): an evalq worker runs only evalq's own tasks (%s*); "
        "the message was dropped",
        info.get("name"),
        info.get("id"),
        OWN_PREFIX,
    )


task_unknown.connect(_say_refused, weak=False)
