"""Task events for Flower in batches, in workers that run without Celery's event loop (gevent):
sent one by one, the three events of every task cost a tenth of a gevent worker's CPU."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import bootsteps

log = logging.getLogger(__name__)


def batching_step(flush_s: float) -> type[TaskEventBatches]:
    """The consumer step for an app (`app.steps["consumer"].add(...)`), with its interval."""
    return type("TaskEventBatches", (TaskEventBatches,), {"flush_s": flush_s})


class TaskEventBatches(bootsteps.StartStopStep):  # type: ignore[misc]
    """Celery's "task.multi" batching, which its receivers and Flower read as lists, turned on
    where Celery's event loop does not run: flushed every `flush_s` (0: off) and whenever
    Celery's batch limit is reached. Each event keeps the time it was made; a worker killed
    outright loses at most one interval's events, which are monitoring, never results."""

    requires = ("celery.worker.consumer.events:Events",)
    flush_s = 0.0

    def __init__(self, c: Any, **kwargs: Any) -> None:
        self._stop: threading.Event | None = None
        super().__init__(c, **kwargs)

    def start(self, c: Any) -> None:
        dispatcher = c.event_dispatcher
        if self.flush_s <= 0 or c.hub is not None or dispatcher is None:
            return  # off, or Celery's event loop batches already
        if not dispatcher.enabled or (dispatcher.groups and "task" not in dispatcher.groups):
            return
        dispatcher.buffer_group = frozenset({"task"})
        self._stop = stop = threading.Event()
        threading.Thread(
            target=self._flush_every, args=(dispatcher, stop), name="task-events", daemon=True
        ).start()

    def _flush_every(self, dispatcher: Any, stop: threading.Event) -> None:
        while not stop.wait(self.flush_s):
            self._flush(dispatcher)

    @staticmethod
    def _flush(dispatcher: Any) -> None:
        try:
            dispatcher.flush(errors=False, groups=True)
        except Exception:  # the broker is away: Celery keeps what it could not send
            log.warning("task events: flush failed", exc_info=True)

    def stop(self, c: Any) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
            if c.event_dispatcher is not None:
                self._flush(c.event_dispatcher)

    def shutdown(self, c: Any) -> None:
        self.stop(c)
