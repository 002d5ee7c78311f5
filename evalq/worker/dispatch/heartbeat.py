"""Signs of life for rows whose task is running, so the watchdog leaves them alone: a task
alive and busy longer than the stall timeout (a long download, a slow judge call) would
otherwise be driven again into one more copy of the same work."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from celery.signals import task_postrun, task_prerun

from evalq.worker.dispatch.queues import PREPARE_ROW
from evalq.worker.dispatch.turns import register
from evalq.worker.store import Store, renew_claims

log = logging.getLogger(__name__)

# Where each row task carries (job_id, row_id) among its arguments.
_ROW_ARGS: dict[str, int] = {PREPARE_ROW: 0, "evalq.run_unit": 0, "evalq.aggregate_row": 1}


def row_of(task_name: str, args: Sequence[Any]) -> tuple[str, str] | None:
    """The (job, row) a task works on, from its arguments; None for other tasks."""
    at = _ROW_ARGS.get(task_name)
    if at is None or len(args) < at + 2:
        return None
    return str(args[at]), str(args[at + 1])


class Heartbeat:
    """While any task of a row runs in this process, a thread refreshes the row's sign of life
    every beat: a lease the task holds while it lives; when the worker dies the beats stop. A
    task held past `max_hold_s` (the task time limit) stops being vouched for: under the
    threads pool Celery can't stop it, and whether to drive its row again is the watchdog's
    call (capped)."""

    def __init__(
        self,
        store: Store,
        *,
        interval_s: float,
        max_hold_s: float,
        clock: Callable[[], float] = time.monotonic,
        share: tuple[str, Callable[[], int]] | None = None,
    ) -> None:
        self.store = store
        self.share = (
            share  # (worker name, its share of the turns' window now: evalq.worker.dispatch.pace)
        )
        self.interval_s = interval_s
        self.max_hold_s = max_hold_s
        self._clock = clock
        self._held: dict[str, tuple[str, str, float]] = {}  # task id -> (job, row, since)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def enter(self, task_id: str, job_id: str, row_id: str) -> None:
        with self._lock:
            self._held[task_id] = (job_id, row_id, self._clock())

    def leave(self, task_id: str) -> None:
        with self._lock:
            self._held.pop(task_id, None)

    def beat(self) -> int:
        """Refresh every row a live task holds; returns how many rows were refreshed."""
        now = self._clock()
        by_job: dict[str, set[str]] = {}
        with self._lock:
            for job_id, row_id, since in self._held.values():
                if now - since < self.max_hold_s:
                    by_job.setdefault(job_id, set()).add(row_id)
        for job_id, rows in by_job.items():
            self.store.touch(job_id, *sorted(rows))
        if self.share is not None:  # lapses after three missed beats: a dead worker drops out
            self._register(self.share)
        renew_claims(self.store, claim_lease_s(self.interval_s))
        return sum(map(len, by_job.values()))

    def _on_prerun(self, task_id: str = "", task: Any = None, args: Any = (), **_: Any) -> None:
        held = row_of(getattr(task, "name", ""), args or ())
        if held is not None:
            self.enter(task_id, *held)

    def _on_postrun(self, task_id: str = "", **_: Any) -> None:
        self.leave(task_id)

    def start(self) -> threading.Thread:
        """Follow this process's row tasks (Celery's prerun/postrun signals run in the task's
        own thread) and beat for them until stop()."""
        task_prerun.connect(self._on_prerun, weak=False)
        task_postrun.connect(self._on_postrun, weak=False)
        if self.share is not None:
            self._register(self.share)
        thread = threading.Thread(target=self._loop, name="evalq-heartbeat", daemon=True)
        thread.start()
        self._thread = thread
        return thread

    def _register(self, share: tuple[str, Callable[[], int]]) -> None:
        name, rows = share
        register(self.store, name, rows(), lapse_s=claim_lease_s(self.interval_s))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.beat()
            except Exception:  # Redis away for a moment: the next beat tries again
                log.exception("heartbeat failed; trying again in %.1f s", self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        task_prerun.disconnect(self._on_prerun)
        task_postrun.disconnect(self._on_postrun)

    def unregister(self, join_s: float = 5.0) -> None:
        """Stop beating and take the worker's registration out at once (a clean stop): it no
        longer widens the turns' window, and clients no longer count it as alive (one killed
        lapses three beats after its last)."""
        self.stop()
        if self._thread is not None:
            self._thread.join(join_s)  # a beat under way must not register it again after this
        if self.share is not None:
            self.store.unregister(self.share[0])


def claim_lease_s(interval_s: float) -> int:
    """A claim on shared work (a rubric several cells wait for) lasts three beats: renewed on
    every beat while its holder lives, gone soon after the holder is killed."""
    return max(2, math.ceil(3 * interval_s))


def interval_for(stall_timeout_s: float) -> float:
    """Four beats per stall timeout: a live row never looks quiet to the watchdog."""
    return min(30.0, max(0.2, stall_timeout_s / 4))
