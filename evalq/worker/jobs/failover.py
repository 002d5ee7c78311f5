"""Noticing a Redis failover that lost writes (a replica promoted lacks its master's last
writes), and what a worker does then; docs/operations/redis.md says what a user sees."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from evalq.worker.lifecycle.job_end import refresh_summary
from evalq.worker.store import RedisIdentity, Store

log = logging.getLogger(__name__)


def lost_writes(before: RedisIdentity | None, now: RedisIdentity) -> bool:
    """Whether Redis may have lost writes between two answers: another server process, or
    another replication history (a replica promoted). The first answer (None before) is not."""
    return before is not None and now != before


class FailoverWatch:
    """Asks Redis who it is (one INFO a watchdog tick), compares each answer with the last and
    calls `on_failover(identity, at)` on a change. A first answer only sets what is compared:
    a worker started after the failover has nothing to restore.
    When that raises (Redis away again), the old identity is kept, so the next check tries
    again: what it does is safe to do twice."""

    def __init__(
        self,
        identity: Callable[[], RedisIdentity | None],
        on_failover: Callable[[RedisIdentity, float], object],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._identity = identity
        self._on_failover = on_failover
        self._clock = clock
        self.seen: RedisIdentity | None = None
        self._blind = False

    def check(self) -> bool:
        """True when a failover was found (and handled)."""
        now = self._identity()
        if now is None:  # this Redis user may not run INFO: the stall timeout is all there is
            if not self._blind:
                log.warning(
                    "this Redis user may not run INFO: a Redis failover that loses writes is "
                    "not noticed (rows wait for EVALQ_STALL_TIMEOUT_S); allow +info"
                )
            self._blind = True
            return False
        found = lost_writes(self.seen, now)
        if found:
            log.warning(
                "Redis changed (run_id %s, replication id %s, was %s, %s): it may have lost "
                "writes; restoring this worker's spend and re-driving rows now",
                now.run_id,
                now.replid,
                self.seen.run_id if self.seen else "?",
                self.seen.replid if self.seen else "?",
            )
            self._on_failover(now, self._clock())
        self.seen = now
        return found


def restore_spend(store: Store, at: float) -> dict[str, int]:
    """Every job this process has tallies for, and every active job: the spend its own tallies
    hold beyond what Redis kept is added back and the failover noted (evalq.worker.store.failover);
    a job that ended meanwhile has its summary written again. Returns the calls restored per
    job."""
    active = set(store.active_jobs())
    restored: dict[str, int] = {}
    with store.tallies.quiet():  # every write of spend begun so far is tallied
        for job_id in sorted(active | set(store.tallies.jobs())):
            if calls := store.reconcile_spend(job_id, at, active=job_id in active):
                restored[job_id] = calls
    for job_id, calls in restored.items():
        log.warning("job %s: %d calls' spend restored after the Redis failover", job_id, calls)
        if job_id not in active:
            refresh_summary(store, job_id)
    return restored
