"""The watchdog: drives rows whose chord will never complete (a worker killed mid-task, a lost
message, Redis restarted) instead of waiting for the broker's visibility timeout.

Every worker runs it in a thread; a Redis lock lets one sweep at a time. A row is re-driven
when it started but showed no sign of life for stall_timeout_s, or when it never started while
both queues have been empty on two sweeps in a row (its message is gone). Re-driving is safe
with duplicates, so the watchdog may err on the side of acting. A row whose task is alive shows
signs of life (worker.heartbeat), so it is not driven again while it works. A row driven again
max_redrives times in a row without a new verdict fails instead: every task that takes it
dies or hangs, and driving it forever would take a thread each time. Only re-drives made while
both queues are empty count toward that cap: with work waiting, a quiet row may just be queued
behind it (a backlog, or a loaded machine), and failing it would lose a row nobody killed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from worker import keys
from worker.batch.flow import reattach
from worker.batch.names import Send as BatchSend
from worker.jobs import finalize, give_up, redrive
from worker.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from worker.settings import Settings
from worker.store import Store

log = logging.getLogger(__name__)
Send = Callable[[str, str], None]


@dataclass(frozen=True)
class BatchDriving:
    """What the watchdog needs to re-attach batch-mode jobs: settings, and a task sender."""

    settings: Settings
    send: BatchSend


class Watchdog:
    def __init__(
        self,
        store: Store,
        send: Send,
        *,
        interval_s: float,
        stall_timeout_s: float,
        name: str,
        max_redrives: int = 5,
        batches: BatchDriving | None = None,
    ) -> None:
        self.batches = batches
        self.store = store
        self.max_redrives = max_redrives
        self.send = send
        self.interval_s = interval_s
        self.stall_timeout_s = stall_timeout_s
        self.name = name
        self._quiet_before = False
        self._stop = threading.Event()

    def queues_empty(self) -> bool:
        return self.store.queued(QUEUE_ROWS, QUEUE_QUESTIONS) == 0

    def sweep(self, now: float | None = None) -> dict[str, int]:
        """One pass over the active jobs; returns rows re-driven per job."""
        now = time.time() if now is None else now
        quiet = self.queues_empty()
        quiet_twice, self._quiet_before = quiet and self._quiet_before, quiet
        redriven: dict[str, int] = {}
        for job_id in self.store.active_jobs():
            status = self.store.status(job_id)
            if status == "unknown":
                self.store.deactivate(job_id)  # expired
                continue
            if status != "running":
                continue
            pending = self.store.not_done(job_id)
            if not pending:
                finalize(self.store, job_id)  # the worker that counted the last row died
                continue
            if self.batches is not None and reattach(
                self.store, self.batches.settings, self.batches.send, job_id, now
            ):
                continue  # batch mode: its batches are re-attached, its rows never re-driven
            pending_set = set(pending)
            stalled = [
                r
                for r in self.store.quiet_since(job_id, now - self.stall_timeout_s)
                if r in pending_set
            ]
            lost: list[str] = []
            if quiet_twice:
                touched = self.store.touched(job_id)
                lost = [r for r in pending if r not in touched]
            again = self.within_cap(job_id, stalled + lost, strike=quiet)
            if count := redrive(self.store, self.send, job_id, again):
                log.warning(
                    "watchdog: job %s: re-drove %d rows (%d stalled, %d lost)",
                    job_id,
                    count,
                    len(stalled),
                    len(lost),
                )
                redriven[job_id] = count
        return redriven

    def within_cap(self, job_id: str, row_ids: list[str], *, strike: bool = True) -> list[str]:
        """The rows that may be driven again; the others fail, with the cap in their error.
        Without ``strike`` (work is waiting in the queues) every row may go again uncounted."""
        if not row_ids or not strike:
            return row_ids
        strikes = self.store.count_redrives(job_id, row_ids)
        over = [row for row in row_ids if strikes[row] > self.max_redrives]
        for row_id in over:
            log.warning(
                "watchdog: job %s: row %s gave up after %d re-drives",
                job_id,
                row_id,
                self.max_redrives,
            )
            give_up(self.store, job_id, row_id, self.max_redrives)
        return [row for row in row_ids if strikes[row] <= self.max_redrives]

    def run_once_if_leader(self) -> dict[str, int]:
        if not self.store.claim(keys.WATCHDOG_LOCK, self.name, max(1, int(self.interval_s))):
            return {}
        return self.sweep()

    def loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.run_once_if_leader()
            except Exception:  # the watchdog must outlive Redis restarts and bad data
                log.exception("watchdog sweep failed; trying again in %.0f s", self.interval_s)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.loop, name="evalq-watchdog", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
