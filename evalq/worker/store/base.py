"""What every part of the Store shares: the Redis connection, the job TTL, the memo of values
that never change once written, and the Lua scripts; each part is a mixin on this base, so
the parts share one connection and one memo without knowing of each other."""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Generic, Self, TypeVar, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.commands.core import Script
from redis.retry import Retry

from evalq.core.errors import JobNotFound
from evalq.core.models import RowInput, RowResult
from evalq.worker.settings import Settings
from evalq.worker.store import keys
from evalq.worker.store.redis_tls import tls_options
from evalq.worker.store.tallies import Tallies

# Redis out of reach, or unable to take a command for now (loading after a restart, a replica
# still read-only after failover, out of memory under noeviction). Whoever meets one retries
# later or gives up; it is never a verdict.
REDIS_DOWN: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,
)

# Any error of the Redis client, for a command that says Redis failed it in one line (exit 3).
REDIS_ERROR: type[Exception] = redis.exceptions.RedisError

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A small thread-safe LRU for values that never change once written."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._items[key] = value
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


@cache
def lua_source(name: str) -> str:
    """The text of worker/store/lua/{name}.lua (package data: it ships with the wheel)."""
    return (resources.files("evalq.worker.store") / "lua" / f"{name}.lua").read_text()


JOB_TTL = "ttl_s"  # the job hash's field holding the job's own expiry (JobConfig.ttl_s)


def job_gone(job_id: str) -> JobNotFound:
    return JobNotFound(f"no job {job_id!r} in Redis (never created, or expired)")


def row_key(row: RowInput | RowResult) -> str:
    """How every internal structure names a row: its line number, unique in a dataset; a
    multi-candidate job's cell adds its candidate column (`7/flux`)."""
    return str(row.line) if row.candidate is None else f"{row.line}/{row.candidate}"


@dataclass(frozen=True)
class RowRef:
    """One row of one job, the one value every step of a row's life names it by: its job and
    its line (row_key: the line number, a cell's candidate added). A task's message carries the
    two as strings."""

    job_id: str
    line: str


def line_order(key: str) -> tuple[int, str]:
    line, _, candidate = key.partition("/")
    return int(line), candidate


class StoreBase:
    def __init__(self, client: redis.Redis, settings: Settings) -> None:
        self.r = client
        self.ttl_s = settings.result_ttl_s
        # An ended job's archive write falls to the watchdog this long after the end, when the
        # worker that ended it has not written it by then (evalq.worker.jobs.archiving).
        self.archive_grace_s = settings.archive_retry_s
        self._scripts: dict[str, Script] = {}
        # Job configs, rows and plans never change once written (plans are first-write-wins),
        # so a worker reads each once instead of on every unit task.
        self._memo: Memo[tuple[str, ...], Any] = Memo(8192)
        # What this process spent per job, and its name in the jobs' spent_by hashes: what a
        # Redis failover lost is restored from them (evalq.worker.store.tallies).
        self.tallies = Tallies()
        self.tally_tag = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        # A frozen or unreachable Redis gives an error after redis_socket_timeout_s instead of
        # a hang. A command that timed out is not sent again here (Redis may still run it when
        # it wakes, and counters are not idempotent): callers retry whole idempotent steps.
        # redis-py's Retry resends timeouts unless told which errors it may retry, whatever
        # retry_on_timeout says (tests/unit/worker/store/test_store_timeouts.py).
        timeout = settings.redis_socket_timeout_s
        client = redis.Redis.from_url(
            settings.redis_url,
            decode_responses=True,
            health_check_interval=30,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            socket_keepalive=True,
            max_connections=settings.connection_slots,  # redis-py's 100 is < a gevent pool
            retry=Retry(
                ExponentialWithJitterBackoff(cap=1.0, base=0.01),
                3,
                supported_errors=(redis.ConnectionError,),
            ),
            **(tls_options(settings) or {}),
        )
        return cls(client, settings)

    def job_ttl(self, job_id: str) -> int:
        """The expiry the job was submitted with (JobConfig.ttl_s, on its hash as ttl_s), for
        every key of the job whoever writes it: a worker's own EVALQ_RESULT_TTL_S must not
        give a job's keys other lifetimes than the submitter asked for. This process's setting
        for a job stored before jobs carried their own (or one gone)."""
        if (hit := self._memo.get(("ttl", job_id))) is not None:
            return cast(int, hit)
        config = self._memo.get(("config", job_id))  # read with a unit's inputs, most often
        if config is not None:
            return cast(int, config.ttl_s or self.ttl_s)
        raw = self.r.hget(keys.job(job_id), JOB_TTL)
        if raw is None:
            return self.ttl_s
        return cast(int, self._memo.put(("ttl", job_id), int(cast(str, raw))))

    def _script(self, name: str) -> Script:
        """The script worker/store/lua/{name}.lua on this connection, registered once."""
        if (script := self._scripts.get(name)) is None:
            script = self._scripts[name] = self.r.register_script(lua_source(name))
        return script

    def ping(self) -> None:
        """Raises a Redis error when Redis can't be reached."""
        self.r.ping()

    def address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        kwargs = self.r.connection_pool.connection_kwargs
        return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"

    def memory(self) -> tuple[int, int]:
        """Bytes Redis uses and its maxmemory (0: no limit), from one INFO memory: under
        noeviction, reaching the limit makes every write fail, so readers warn before."""
        info = self.r.info("memory")
        return int(info.get("used_memory", 0)), int(info.get("maxmemory", 0))

    def queued(self, *queues: str) -> int:
        """Messages waiting in the broker's queues (the watchdog's sign that messages are lost)."""
        pipe = self.r.pipeline(transaction=False)
        for queue in queues:
            pipe.llen(queue)
        return sum(int(n) for n in cast(list[int], pipe.execute()))
