"""Turns, as stored: which rows of which jobs may be in the broker or running now, and each
worker's registered share of the window (evalq.worker.dispatch.turns has the rules,
evalq.worker.dispatch.pace sizes the shares)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase

PRIORITIES = ("high", "normal", "low")
# The keys take_turns.lua names for each job it finds, in the order it reads them.
JOB_KEYS = (keys.job, keys.turns, keys.waiting, keys.activity)
_ID = "\x00"  # no job id holds it


def around_job(key: Callable[[str], str]) -> tuple[str, str]:
    """The text before and after a job's id in the job's key `key`: how a Lua script is given
    the keys of jobs it finds itself (take_turns.lua), spelled by evalq.worker.store.keys all the
    same."""
    before, _, after = key(_ID).partition(_ID)
    return before, after


# take_turns.lua's ARGV after its first five, the same on every call.
AROUND_JOB_KEYS = tuple(part for key in JOB_KEYS for part in around_job(key))


@dataclass(frozen=True)
class Granted:
    """What one take_turns call did: the window it used, the turns held before it, the
    (job, line) pairs it gave a turn to, in order, and the rows still in line after it that a
    free turn could go to (more than 0: the window holds work back)."""

    window: int
    held: int
    rows: list[tuple[str, str]]
    waiting: int = 0


@dataclass(frozen=True)
class TurnState:
    """A job's place in the turns, as `evalq status` shows it."""

    priority: str
    max_in_flight: int | None
    holding: int
    waiting: int


class TurnsStore(StoreBase):
    def take_turns(self, *, window: int, least: int, most: int = 1000) -> Granted:
        """Hand free turns out (take_turns.lua); `window` 0 adds up the live workers' shares."""
        found = self._script("take_turns")(
            keys=[keys.TURNS, keys.WORKERS, keys.WORKER_SHARES],
            args=[window, least, time.time(), self.ttl_s, most, *AROUND_JOB_KEYS],
        )
        flat = [str(v) for v in found[3:]]
        pairs = list(zip(flat[0::2], flat[1::2], strict=True))
        return Granted(int(found[0]), int(found[1]), pairs, int(found[2]))

    def wait_for_turns(self, job_id: str, lines: Sequence[str], created_at: float) -> None:
        """Put the job's `lines` (and only those) in line for turns: what it held before is let
        go. For a resume: rows still in the broker from before are taken as duplicates."""
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(keys.turns(job_id), keys.waiting(job_id))
        if lines:
            pipe.rpush(keys.waiting(job_id), *lines)
            pipe.expire(keys.waiting(job_id), self.job_ttl(job_id))
            pipe.zadd(keys.TURNS, {job_id: created_at})
        pipe.execute()

    def turn_places(self, job_id: str) -> tuple[set[str], set[str]]:
        """The rows holding a turn and the rows waiting in line, read in one transaction (a
        row moves from one to the other atomically, so none is missed between the reads)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.smembers(keys.turns(job_id))
        pipe.lrange(keys.waiting(job_id), 0, -1)
        holding, waiting = pipe.execute()
        return cast(set[str], holding), set(cast(list[str], waiting))

    def rejoin_line(self, job_id: str, lines: Sequence[str], created_at: float) -> None:
        """Put `lines` at the back of the job's line, leaving its turns and the rows already
        waiting as they are: a running job's rows that lost their place (a resume)."""
        if not lines:
            return
        pipe = self.r.pipeline(transaction=True)
        pipe.rpush(keys.waiting(job_id), *lines)
        pipe.expire(keys.waiting(job_id), self.job_ttl(job_id))
        pipe.zadd(keys.TURNS, {job_id: created_at})
        pipe.execute()

    def holding_turns(self, job_id: str) -> set[str]:
        return cast(set[str], self.r.smembers(keys.turns(job_id)))

    def turn_holders(self, job_id: str) -> set[str] | None:
        """The rows holding a turn, in one round trip; None for a job whose rows do not go
        through turns (batch mode, or created before turns): every row it has is sent."""
        pipe = self.r.pipeline(transaction=False)
        pipe.smembers(keys.turns(job_id))
        pipe.exists(keys.waiting(job_id))
        holding, waiting = pipe.execute()
        return cast(set[str], holding) if holding or waiting else None

    def set_turns(
        self, job_id: str, *, priority: str | None = None, max_in_flight: int | None = None
    ) -> None:
        """Change a job's priority or cap; `max_in_flight` 0 lifts the cap."""
        pipe = self.r.pipeline(transaction=True)
        if priority is not None:
            pipe.hset(keys.job(job_id), "priority", priority)
        if max_in_flight is not None:
            pipe.hset(keys.job(job_id), "max_in_flight", max_in_flight)
        pipe.execute()

    def note_open_calls(self, job_id: str, calls: int) -> None:
        """The judge calls a cancel found sent and not answered (JobCounters)."""
        self.r.hset(keys.job(job_id), "calls_open_at_cancel", calls)

    def turn_state(self, job_id: str) -> TurnState:
        pipe = self.r.pipeline(transaction=False)
        pipe.hmget(keys.job(job_id), ["priority", "max_in_flight"])
        pipe.scard(keys.turns(job_id))
        pipe.llen(keys.waiting(job_id))
        (priority, cap), holding, waiting = pipe.execute()
        return TurnState(
            priority=str(priority or "normal"),
            max_in_flight=int(cap) if cap and int(cap) > 0 else None,
            holding=int(holding),
            waiting=int(waiting),
        )

    def register_share(self, worker: str, rows: int, lapse_s: float) -> None:
        """Count this worker alive, and its share of the window, until `lapse_s` from now."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(keys.WORKER_SHARES, worker, rows)
        pipe.zadd(keys.WORKERS, {worker: time.time() + lapse_s})
        pipe.execute()

    def set_share(self, worker: str, rows: int) -> None:
        """A registered worker's new share of the window (its liveness is the heartbeat's)."""
        self.r.hset(keys.WORKER_SHARES, worker, rows)

    def live_workers(self) -> int:
        """How many workers are registered and not lapsed now (each renews its registration
        every heartbeat; one that stops beating lapses three beats later)."""
        return int(self.r.zcount(keys.WORKERS, f"({time.time()}", "+inf"))

    def unregister(self, worker: str) -> None:
        pipe = self.r.pipeline(transaction=True)
        pipe.zrem(keys.WORKERS, worker)
        pipe.hdel(keys.WORKER_SHARES, worker)
        pipe.execute()
