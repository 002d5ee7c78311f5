"""The Redis store: the only code that talks to Redis, split by what it keeps (a module a
part, each owning its keys and Lua scripts), with atomic steps that keep counts exact."""

from __future__ import annotations

from evalq.worker.store.archiving import ArchiveState, ArchivingStore
from evalq.worker.store.base import REDIS_DOWN, REDIS_ERROR, Memo, RowRef, row_key
from evalq.worker.store.batches import BatchesStore
from evalq.worker.store.counters import COUNTERS, CountersStore, read_counters, usage_field
from evalq.worker.store.failover import FailoverStore, RedisIdentity
from evalq.worker.store.jobs import TRANSITIONS, Finish, JobsStore, Transition, clip_error
from evalq.worker.store.results import ResultsStore
from evalq.worker.store.rows import RowsStore, UnitInputs
from evalq.worker.store.schedule import ScheduleStore
from evalq.worker.store.shared import SharedEntries, SharedStore, renew_claims
from evalq.worker.store.turns import PRIORITIES, Granted, TurnsStore, TurnState
from evalq.worker.store.verdicts import Recorded, VerdictsStore

__all__ = [
    "COUNTERS",
    "PRIORITIES",
    "REDIS_DOWN",
    "REDIS_ERROR",
    "TRANSITIONS",
    "ArchiveState",
    "Finish",
    "Granted",
    "Memo",
    "Recorded",
    "RedisIdentity",
    "RowRef",
    "SharedEntries",
    "Store",
    "Transition",
    "TurnState",
    "UnitInputs",
    "clip_error",
    "read_counters",
    "renew_claims",
    "row_key",
    "usage_field",
]


class Store(
    JobsStore,
    RowsStore,
    VerdictsStore,
    ResultsStore,
    CountersStore,
    SharedStore,
    ScheduleStore,
    BatchesStore,
    TurnsStore,
    ArchivingStore,
    FailoverStore,
):
    """Every part of the store on one connection: its methods are the whole of what evalq does
    with Redis. The client side never sees it (evalq.worker.jobs.reads and .control stand
    between). No secret is ever written: JobConfig has no credential fields."""
