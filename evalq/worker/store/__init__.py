"""Redis store: every key evalq writes, split by what it keeps, and the atomic steps (Lua, in
worker/store/lua/, one script a file) that keep counts exact.

Every key's name is in keys (what each holds: key_table); no other module talks to Redis, so
the Store's methods are the whole of what evalq does with it (redis_tls: its connections' TLS;
unit_writes: what a unit's calls write with its verdict). The client side never sees the Store:
it reads jobs through evalq.worker.jobs.reads and steers them through evalq.worker.jobs.control.
The Store is one object composed of its parts, each a module owning its keys and scripts:

- jobs: create, config, list, status and the transition state machine (TRANSITIONS), pause,
  the active set, refusals counted toward a pause, task errors;
- rows: rows, plans (first write wins), what a unit reads, signs of life, re-drives, done;
- verdicts: verdicts and a unit's outcome in one step (record_unit);
- results: counting a finished row once (finish_row), results, unscored counts, the summary;
- counters: incr and account (one path, never recreating a vanished job), spend and cap, and
  the counters read back typed (evalq.core.counters.JobCounters);
- shared: the call and rubric caches, uploads, leases and locks (SharedEntries, renew_claims);
- schedule: the global rate limiter's schedules;
- turns: which rows may be in the broker or running now, and the workers' slots;
- batches: batch mode's ledger;
- failover: which Redis this is (run_id, replication id), the failovers workers found, and a
  job's spend restored from one process's own tallies after one (evalq.worker.store.tallies);
- archiving: which ended jobs are due for the archive, the outcome of each write, keys held
  until one succeeds, the archive each worker writes to, a job's parts read in bulk.

No secret is ever written: JobConfig has no credential fields.
"""

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
    """Every part of the store on one connection (see the module's docstring)."""
