"""The watchdog: drives again rows whose chord will never complete (a worker killed
mid-task, a lost message, Redis restarted) instead of waiting for the broker's visibility
timeout; docs/architecture/row-path.md ("Watchdog") says when."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from evalq.worker.batch import ledger
from evalq.worker.batch.flow import reattach
from evalq.worker.batch.names import Send as BatchSend
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from evalq.worker.dispatch.turns import hand_out
from evalq.worker.jobs.archiving import Archiver
from evalq.worker.jobs.failover import FailoverWatch, restore_spend
from evalq.worker.lifecycle.job_end import finalize, give_up, redrive
from evalq.worker.settings import Settings
from evalq.worker.store import RedisIdentity, RowRef, Store, keys

log = logging.getLogger(__name__)
Send = Callable[[str, str], None]


@dataclass(frozen=True)
class BatchDriving:
    """What the watchdog needs to re-attach batch-mode jobs: settings, and a task sender."""

    settings: Settings
    send: BatchSend


class Watchdog:
    """Runs in a thread of every worker; a Redis lock lets one sweep at a time. Re-driving is
    safe with duplicates, so it may err on the side of acting. Each tick also asks Redis who it
    is (a failover), says which archive this worker writes to, and the sweep writes ended jobs
    whose archive write is due."""

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
        turns: Settings | None = None,
        archiver: Archiver | None = None,
    ) -> None:
        self.archiver = archiver
        self.batches = batches
        self.turns = turns
        self.store = store
        self.max_redrives = max_redrives
        self.send = send
        self.interval_s = interval_s
        self.stall_timeout_s = stall_timeout_s
        self.name = name
        self._quiet_before = False
        self._stop = threading.Event()
        self.failovers = FailoverWatch(store.redis_identity, self.after_failover)
        self._restore_again: float | None = None  # the last failover's time, until restored twice
        self._first_to_see: RedisIdentity | None = None  # the last failover this worker recorded

    def queues_empty(self) -> bool:
        return self.store.queued(QUEUE_ROWS, QUEUE_QUESTIONS) == 0

    def sweep(self, now: float | None = None) -> dict[str, int]:
        """One pass over the active jobs; returns rows re-driven per job. A row is driven again
        when it holds a turn (a row waiting for one has no message to lose) and either showed
        no sign of life for stall_timeout_s or never started while both queues were empty on
        two sweeps (its message is gone)."""
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
            if self.batches is not None and self.reattach_batches(job_id, now):
                continue  # batch mode: its batches are re-attached, its rows never re-driven
            pending_set = set(pending)
            if (holding := self.store.turn_holders(job_id)) is not None:
                pending_set &= holding  # rows waiting for a turn are not stalled
                pending = [r for r in pending if r in pending_set]
            stalled = [
                r
                for r in self.store.quiet_since(job_id, now - self.stall_timeout_s)
                if r in pending_set
            ]
            lost: list[str] = []
            if quiet_twice:
                touched = self.store.touched(job_id)
                lost = [r for r in pending if r not in touched]
            at = time.time()  # the re-drive's sign of life (not `now`, which tests move)
            again = self.within_cap(job_id, stalled + lost, count_all=quiet, at=at)
            if count := redrive(self.store, self.send, job_id, again, at=at):
                log.warning(
                    "watchdog: job %s: re-drove %d rows (%d stalled, %d lost)",
                    job_id,
                    count,
                    len(stalled),
                    len(lost),
                )
                redriven[job_id] = count
        if self.turns is not None:  # makes up for a hand-out a killed task never made
            hand_out(self.store, self.turns, self.send)
        if self.archiver is not None:  # ended jobs whose worker died or whose write failed
            self.archiver.sweep()
        return redriven

    def after_failover(self, identity: RedisIdentity, at: float) -> dict[str, int]:
        """Redis may have lost writes (evalq.worker.jobs.failover): this process's lost spend is
        restored on every job, then, if this worker is the first to record the failover, every row
        of a running job that holds a turn and is not counted is driven again now, without
        counting toward the cap (the row did nothing wrong); batch-mode jobs are re-attached.
        Returns rows re-driven per job. The next tick restores once more: a write the failover
        cut off may be found unconfirmed only after this one ran."""
        restore_spend(self.store, at)
        self._restore_again = at
        # A worker that recorded it first and failed on the way re-drives when tried again.
        if identity != self._first_to_see and not self.store.note_failover(identity, at):
            return {}
        self._first_to_see = identity
        redriven: dict[str, int] = {}
        for job_id in self.store.active_jobs():
            if self.store.status(job_id) != "running":
                continue
            if self.batches is not None and self.reattach_batches(job_id, at):
                continue
            pending = self.store.not_done(job_id)
            if not pending:
                finalize(self.store, job_id)
                continue
            if (holding := self.store.turn_holders(job_id)) is not None:
                pending = [r for r in pending if r in holding]
            if count := redrive(self.store, self.send, job_id, pending, at=time.time()):
                log.warning(
                    "watchdog: job %s: re-drove %d rows after a Redis failover", job_id, count
                )
                redriven[job_id] = count
        if self.turns is not None:  # turns handed out before the failover may be lost too
            hand_out(self.store, self.turns, self.send)
        return redriven

    def within_cap(
        self, job_id: str, row_ids: list[str], *, count_all: bool = True, at: float | None = None
    ) -> list[str]:
        """The rows that may be driven again (at `at`); the others fail, with the cap in their
        error. Without ``count_all`` (work is waiting in the queues) a re-drive counts only if a
        task took the row since its previous one: a row whose tasks die fails however busy the
        queues are, and one merely queued behind a backlog is not failed for waiting."""
        if not row_ids:
            return row_ids
        strikes = self.store.count_redrives(job_id, row_ids, at=at, count_all=count_all)
        over = [row for row in row_ids if strikes[row] > self.max_redrives]
        for row_id in over:
            log.warning(
                "watchdog: job %s: row %s gave up after %d re-drives",
                job_id,
                row_id,
                self.max_redrives,
            )
            give_up(self.store, RowRef(job_id, row_id), self.max_redrives)
        return [row for row in row_ids if strikes[row] <= self.max_redrives]

    def reattach_batches(self, job_id: str, now: float) -> bool:
        """Batch mode: re-attach the job (its stale batches polled again, a stale sweep sent
        again; False for jobs batch mode does not drive). What the re-attach would send is held
        until the job is found within its cap; past the cap the job pauses instead, and nothing
        is sent."""
        assert self.batches is not None
        held: list[tuple[str, tuple[object, ...], float | None]] = []

        def hold(name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
            held.append((name, args, countdown_s))

        if not reattach(self.store, self.batches.settings, hold, job_id, now):
            return False
        if held and not self.batch_within_cap(job_id, now):
            return True
        for name, args, countdown_s in held:
            self.batches.send(name, args, countdown_s)
        return True

    def batch_within_cap(self, job_id: str, now: float) -> bool:
        """Count this re-attach of a batch-mode job unless it made progress since the last one
        counted (then the count starts again), a submit holds its lock (it is being worked on),
        or the last one counted is less than stall_timeout_s old. False, and the job paused,
        once more than max_redrives were counted in a row."""
        meta = self.store.batch_meta(job_id)
        seen = self.batch_progress(job_id)
        strikes = int(meta.get(keys.REATTACH_STRIKES) or 0)
        if seen != meta.get(keys.REATTACH_SEEN):
            strikes = 1
        elif (
            self.store.batch_locked(job_id)
            or now - float(meta.get(keys.REATTACH_AT) or 0) < self.stall_timeout_s
        ):
            return True
        else:
            strikes += 1
        if strikes > self.max_redrives:
            reason = (
                f"batch mode: re-attached by the watchdog {strikes - 1} times without progress "
                "(no batch polled, ingested or sent, no row finished; EVALQ_MAX_REDRIVES="
                f"{self.max_redrives}): its tasks die or hang, see the workers' logs; "
                f"`evalq resume {job_id}` tries again"
            )
            if self.store.pause(job_id, reason):
                log.warning("watchdog: job %s paused: %s", job_id, reason)
            return False
        fields: dict[str, str | int | float] = {
            keys.REATTACH_STRIKES: strikes,
            keys.REATTACH_SEEN: seen,
            keys.REATTACH_AT: now,
        }
        self.store.set_batch_meta(job_id, **fields)
        return True

    def batch_progress(self, job_id: str) -> str:
        """A digest of what progress a batch-mode job shows: rows counted, its last resume,
        and each batch's state, whether ingested, and its polls while it runs (a poll of a
        batch that has ended is no progress)."""
        job = self.store.counters(job_id)
        running_at = "" if job.running_at is None else repr(job.running_at)
        parts = [str(job.rows_done), running_at]
        for r in ledger.records(self.store, job_id):
            polls = "" if r.state in ledger.TERMINAL else str(r.polls)
            parts.append(f"{r.id}:{r.state}:{r.ingested}:{polls}")
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    def run_once_if_leader(self) -> dict[str, int]:
        if not self.store.claim_watchdog(self.name, max(1, int(self.interval_s))):
            return {}
        return self.sweep()

    def loop(self) -> None:
        if self.archiver is not None:
            self.archiver.check()
        self.check_failover()  # the Redis this worker started with, to compare with
        while not self._stop.wait(self.interval_s):
            self.check_failover()
            try:
                if self.archiver is not None:
                    self.archiver.register()
                self.run_once_if_leader()
            except Exception:  # the watchdog must outlive Redis restarts and bad data
                log.exception("watchdog sweep failed; trying again in %.0f s", self.interval_s)

    def check_failover(self) -> None:
        try:
            if not self.failovers.check() and (at := self._restore_again) is not None:
                restore_spend(self.store, at)
                self._restore_again = None
        except Exception as exc:  # Redis away: the next tick asks again
            log.warning("watchdog: checking Redis for a failover failed (%s); trying again", exc)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.loop, name="evalq-watchdog", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
