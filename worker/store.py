"""Redis store: every key evalq writes, and the atomic step that counts a finished row once.

Every key's name, and the table of what each holds, is in worker.keys; no other module talks
to Redis, so the Store's methods are the whole of what evalq does with it.

Rows are keyed by their line number in the dataset (`row_key`), never by the user's id: ids are
the user's to choose and could repeat, lines can not, so no row can hide behind another's key.
The id stays in RowInput and RowResult for display and for results read back by id.

No secret is ever written: JobConfig has no credential fields.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.commands.core import Script
from redis.retry import Retry

from evalq.core.errors import JobNotFound
from evalq.core.metric import Plan, PlanT, get_metric, load_plan
from evalq.core.models import JobConfig, RowInput, RowResult, TaskErrors, Verdict
from evalq.core.pricing import USAGE_KINDS, Usage, nanos
from worker import keys
from worker.settings import Settings
from worker.unit_writes import UnitWrites

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

K = TypeVar("K")
V = TypeVar("V")

COUNTERS = (
    "rows_done",
    "rows_scored",
    "rows_partial",
    "rows_failed",
    "judge_calls",
    "prompt_tokens",
    "output_tokens",
    "rubric_cache_hits",
    "cache_hits",
    "retries",
    "rate_limited",
    "limiter_wait_ms",
    "simulated_calls",
    "redriven",
    "redrive_capped",
    "candidate_calls",
    "candidate_prompt_tokens",
    "candidate_output_tokens",
    "thought_tokens",
    "candidate_thought_tokens",
    "cached_tokens",
    "candidate_cached_tokens",
    "unit_tasks",
    "units_inline",
)

# Counts a row exactly once however often its callback runs: the SADD gate and every counter
# change happen in one atomic script, so a crash can not leave one without the other.
_FINISH_ROW = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then
  return -1
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'rows_done', 1)
redis.call('HINCRBY', KEYS[2], 'rows_' .. ARGV[3], 1)
if ARGV[5] ~= '' then
  redis.call('HINCRBY', KEYS[2], 'failed:' .. ARGV[5], 1)
end
if ARGV[6] ~= '' then
  redis.call('HINCRBYFLOAT', KEYS[2], 'score_sum', ARGV[6])
  redis.call('HINCRBY', KEYS[2], 'score_count', 1)
end
for i = 7, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], tonumber(ARGV[i + 1]))
end
local ttl = tonumber(ARGV[4])
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return tonumber(redis.call('HGET', KEYS[2], 'rows_done'))
"""

# Counters of a job that still exists (its hash holds the config); ARGV: name, amount, ...
_INCR_EXISTING = """
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""

# One unit's outcome in one step (worker.unit_writes says which counter counts when). KEYS: the
# row's verdicts, the job hash, the job's activity, then ARGV[6] call-cache keys, then ARGV[7]
# limiter token schedules. ARGV: 1 verdict index ('' for none), 2 verdict JSON, 3 ttl_s, 4 the
# row's line, 5 its activity time, 6 replies, 7 corrections, 8 spent pairs; then each reply's
# (JSON, ttl_s), each correction's ms, the spent (name, amount) pairs, the counted ones.
# Returns {1 new verdict | 0 | -1 job gone, spend, cap or ''}.
_RECORD_UNIT = """
if redis.call('HEXISTS', KEYS[2], 'config') == 0 then
  return {-1, '0', ''}
end
local ttl = tonumber(ARGV[3])
local written = 0
if ARGV[1] ~= '' then
  written = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ttl)
end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('EXPIRE', KEYS[3], ttl)
local replies, corrections, spent = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local a = 9
for i = 1, replies do
  redis.call('SET', KEYS[3 + i], ARGV[a], 'EX', ARGV[a + 1])
  a = a + 2
end
for i = 1, corrections do
  local key = KEYS[3 + replies + i]
  local tat = redis.call('GET', key)
  if tat then
    local left = redis.call('PTTL', key)
    if left < 0 then left = 60000 end
    redis.call('SET', key, tostring(tonumber(tat) + tonumber(ARGV[a])), 'PX', left)
  end
  a = a + 1
end
for i = 1, spent do
  redis.call('HINCRBY', KEYS[2], ARGV[a], ARGV[a + 1])
  a = a + 2
end
if written == 1 then
  while a < #ARGV do
    redis.call('HINCRBY', KEYS[2], ARGV[a], ARGV[a + 1])
    a = a + 2
  end
end
local cap = redis.call('HGET', KEYS[2], 'budget_nanos') or ''
return {written, redis.call('HGET', KEYS[2], 'spent_nanos') or '0', cap}
"""

# Which status a job may move to, from which. "finished" is final. A cancelled job runs again
# only through `evalq resume`; running -> running is a resume of an interrupted job. Moving to
# "finished" also needs every row counted: a job is never finished with rows missing.
TRANSITIONS: dict[str, frozenset[str]] = {
    "running": frozenset({"running", "paused", "cancelled", "finished"}),
    "paused": frozenset({"running", "cancelled", "finished"}),
    "cancelled": frozenset({"running"}),
    "finished": frozenset(),
}

# Every status change, checked against TRANSITIONS (the allowed sources come in as ARGV[6:])
# and written in one atomic step: nothing can land between the check and the write. A job
# that runs is one the watchdog looks after; a cancelled or finished one is not.
# Returns {changed, status found, rows_done}.
_TRANSITION = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return {0, 'unknown', 0}
end
local done = tonumber(redis.call('HGET', KEYS[1], 'rows_done') or '0')
local target = ARGV[1]
local allowed = false
for i = 6, #ARGV do
  if ARGV[i] == status then allowed = true end
end
if not allowed or (target == 'finished' and done < tonumber(ARGV[3])) then
  return {0, status, done}
end
redis.call('HSET', KEYS[1], 'status', target, target .. '_at', ARGV[2])
if target == 'paused' then
  redis.call('HSET', KEYS[1], 'pause_reason', ARGV[4])
elseif target == 'running' then
  redis.call('HDEL', KEYS[1], 'pause_reason')
  redis.call('SADD', KEYS[2], ARGV[5])
else
  redis.call('SREM', KEYS[2], ARGV[5])
end
return {1, status, done}
"""


# Delete a lock only while its owner token is still the one stored.
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end"
# Extend each lock this owner still holds (one it lost to expiry is another's now).
_RENEW = """
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('EXPIRE', key, ARGV[2]) end
end
return 0
"""


@dataclass(frozen=True)
class UnitInputs:
    """What a unit task reads before its call, in one round trip: its verdict if one is stored
    (a redelivery), the job's status now, its spend and cap, and the row's plan (None: no plan
    stored). The job's config and the row's input are read into the Store's memo with it."""

    verdict: Verdict | None
    status: str
    spent_nanos: int
    cap_nanos: int | None
    plan: Plan[Any] | None


@dataclass(frozen=True)
class Recorded:
    """What recording a unit's outcome found: whether its verdict is the one stored (False for
    a duplicate, or when there was none to record), and the job's spend and cap after it."""

    written: bool
    spent_nanos: int
    cap_nanos: int | None


@dataclass(frozen=True)
class Transition:
    """What a status change found: whether it happened, and the status it met ("unknown"
    when the job is gone), so a caller can say "already finished" instead of pretending."""

    changed: bool
    before: str
    rows_done: int


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


def usage_field(role: str, kind: str, model: str) -> str:
    """The job-hash field of one usage counter; the model goes last, whatever it holds."""
    return f"usage:{role}:{kind}:{model}"


def parse_usage(job_hash: dict[str, str]) -> list[Usage]:
    """The per-role, per-model usage counters of a job hash."""
    found: dict[tuple[str, str], Usage] = {}
    for name, value in job_hash.items():
        if not name.startswith("usage:"):
            continue
        parts = name.split(":", 3)
        if len(parts) != 4 or parts[2] not in USAGE_KINDS:
            continue
        _, role, kind, model = parts
        entry = found.setdefault((role, model), Usage(role=role, model=model))
        setattr(entry, kind, getattr(entry, kind) + int(value or 0))
    return list(found.values())


def row_key(row: RowInput | RowResult) -> str:
    """How every internal structure names a row: its line number, unique in a dataset; a
    multi-candidate job's cell adds its candidate column (`7/flux`)."""
    return str(row.line) if row.candidate is None else f"{row.line}/{row.candidate}"


def _line_order(key: str) -> tuple[int, str]:
    line, _, candidate = key.partition("/")
    return int(line), candidate


class Store:
    def __init__(self, client: redis.Redis, settings: Settings) -> None:
        self.r = client
        self.ttl_s = settings.result_ttl_s
        self._finish_row = self.r.register_script(_FINISH_ROW)
        self._incr_existing = self.r.register_script(_INCR_EXISTING)
        self._transition = self.r.register_script(_TRANSITION)
        self._release = self.r.register_script(_RELEASE)
        self._renew = self.r.register_script(_RENEW)
        self._record_unit = self.r.register_script(_RECORD_UNIT)
        # Job configs, rows and plans never change once written (plans are first-write-wins),
        # so a worker reads each once instead of on every unit task.
        self._memo: Memo[tuple[str, ...], Any] = Memo(8192)

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        # A frozen or unreachable Redis gives an error after redis_socket_timeout_s instead of
        # a hang. A command that timed out is not sent again here (Redis may still run it when
        # it wakes, and counters are not idempotent): callers retry whole idempotent steps.
        timeout = settings.redis_socket_timeout_s
        client = redis.Redis.from_url(
            settings.redis_url,
            decode_responses=True,
            health_check_interval=30,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            socket_keepalive=True,
            retry_on_timeout=False,
            max_connections=settings.connection_slots,  # redis-py's 100 is < a gevent pool
            retry=Retry(ExponentialWithJitterBackoff(cap=1.0, base=0.01), 3),
        )
        return cls(client, settings)

    # ---- jobs ----

    def create_job(
        self, config: JobConfig, rows: list[RowInput], rejected: Sequence[RowResult] = ()
    ) -> None:
        """Store the job, its rows and its rejected lines (already counted as failed) in one
        transaction: a producer that dies half way leaves no job that can never finish."""
        key = keys.job(config.job_id)
        lines = sorted(
            [row_key(row) for row in rows] + [row_key(r) for r in rejected], key=_line_order
        )
        if len(set(lines)) != len(lines) or len(lines) != config.rows_total:
            raise ValueError(
                f"job {config.job_id}: {len(lines)} distinct lines, rows_total {config.rows_total}"
            )
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(
            key,
            mapping={
                "config": config.model_dump_json(),
                "status": "running",
                **dict.fromkeys(COUNTERS, 0),
                "spent_nanos": 0,
                **(
                    {"budget_nanos": nanos(config.max_cost_usd)}
                    if config.max_cost_usd is not None
                    else {}
                ),
            },
        )
        pipe.expire(key, self.ttl_s)
        for row in rows:
            pipe.set(keys.row(config.job_id, row_key(row)), row.model_dump_json(), ex=self.ttl_s)
        if lines:
            pipe.rpush(keys.job_rows(config.job_id), *lines)
            pipe.expire(keys.job_rows(config.job_id), self.ttl_s)
        for result in rejected:
            names, args = self._finish_args(config.job_id, result)
            self._finish_row(keys=names, args=args, client=pipe)
        pipe.zadd(keys.JOBS, {config.job_id: config.created_at})
        pipe.sadd(keys.ACTIVE_JOBS, config.job_id)
        pipe.execute()

    def active_jobs(self) -> list[str]:
        return sorted(cast(set[str], self.r.smembers(keys.ACTIVE_JOBS)))

    def deactivate(self, job_id: str) -> None:
        self.r.srem(keys.ACTIVE_JOBS, job_id)

    def pause(self, job_id: str, reason: str) -> bool:
        """Pause a running job (first reason wins); False if it was not running."""
        return self.transition(job_id, "paused", reason=reason).changed

    def pause_reason(self, job_id: str) -> str | None:
        return cast(str | None, self.r.hget(keys.job(job_id), "pause_reason"))

    def row_keys(self, job_id: str) -> list[str]:
        return cast(list[str], self.r.lrange(keys.job_rows(job_id), 0, -1))

    def not_done(self, job_id: str) -> list[str]:
        done = cast(set[str], self.r.smembers(keys.done(job_id)))
        return [row for row in self.row_keys(job_id) if row not in done]

    def progress(self, job_id: str) -> tuple[dict[str, str], int]:
        """The job hash and how many rows its row list holds, read together: a list shorter
        than rows_total (expired, or lost) means some rows can never be driven."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hgetall(keys.job(job_id))
        pipe.llen(keys.job_rows(job_id))
        job_hash, listed = pipe.execute()
        if not job_hash or "config" not in job_hash:
            raise JobNotFound(f"no job {job_id!r} in Redis (never created, or expired)")
        return cast(dict[str, str], job_hash), int(listed)

    def touch(self, job_id: str, *rows: str, at: float | None = None) -> None:
        """Record a sign of life; `at` in the future for a row waiting on a countdown."""
        if not rows:
            return
        key = keys.activity(job_id)
        when = time.time() if at is None else at
        pipe = self.r.pipeline()
        pipe.zadd(key, dict.fromkeys(rows, when))
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def quiet_since(self, job_id: str, before: float) -> list[str]:
        """Rows whose last sign of life is older than `before`."""
        return cast(list[str], self.r.zrangebyscore(keys.activity(job_id), "-inf", before))

    def count_redrives(
        self, job_id: str, row_ids: list[str], *, at: float | None = None, count_all: bool = True
    ) -> dict[str, int]:
        """Count one more re-drive of each row; returns each row's re-drives since its last new
        verdict (this one included). `at` is when the watchdog re-drives them (the sign of life
        it writes, worker.jobs.redrive). Without ``count_all``, a re-drive counts only when a
        task took the row since its previous re-drive (a sign of life later than that one's
        `at`): one whose message still waits behind other work is not a strike. The watchdog,
        one sweeper at a time, is the only caller."""
        key = keys.redrives(job_id)
        pipe = self.r.pipeline()
        for row_id in row_ids:
            pipe.hlen(keys.verdicts(job_id, row_id))
            pipe.hget(key, row_id)
            pipe.zscore(keys.activity(job_id), row_id)
        seen = pipe.execute()
        strikes: dict[str, int] = {}
        write = self.r.pipeline()
        for i, row_id in enumerate(row_ids):
            verdicts, record = int(seen[3 * i]), cast(str | None, seen[3 * i + 1])
            alive_at = cast(float | None, seen[3 * i + 2])
            parts = record.split(":") if record else []
            before, then = (int(parts[0]), int(parts[1])) if parts else (0, 0)
            last = float(parts[2]) if len(parts) > 2 else None
            if verdicts > then or not parts:
                strikes[row_id] = 1
            elif count_all or last is None or (alive_at is not None and alive_at > last):
                strikes[row_id] = before + 1
            else:
                strikes[row_id] = before
            entry = f"{strikes[row_id]}:{verdicts}" + ("" if at is None else f":{at!r}")
            write.hset(key, row_id, entry)
        write.expire(key, self.ttl_s)
        write.execute()
        return strikes

    def touched(self, job_id: str) -> set[str]:
        return set(cast(list[str], self.r.zrange(keys.activity(job_id), 0, -1)))

    def config(self, job_id: str) -> JobConfig:
        if (hit := self._memo.get(("config", job_id))) is not None:
            return cast(JobConfig, hit)
        raw = self.r.hget(keys.job(job_id), "config")
        if raw is None:
            raise JobNotFound(
                f"no job {job_id!r} in Redis (never created, expired, or lost when Redis "
                "restarted without its append-only file)"
            )
        return cast(
            JobConfig,
            self._memo.put(("config", job_id), JobConfig.model_validate_json(cast(str, raw))),
        )

    def job_hash(self, job_id: str) -> dict[str, str]:
        data = cast(dict[str, str], self.r.hgetall(keys.job(job_id)))
        if not data:
            raise JobNotFound(f"no job {job_id!r} in Redis (never created, or expired)")
        return data

    def status(self, job_id: str) -> str:
        return cast(str | None, self.r.hget(keys.job(job_id), "status")) or "unknown"

    def transition(
        self, job_id: str, status: str, *, reason: str = "", rows_total: int = 0
    ) -> Transition:
        """Move the job to `status` if TRANSITIONS allows it from the status it has now, in one
        atomic step. "finished" also needs rows_done >= rows_total; "paused" records `reason`."""
        if status not in TRANSITIONS:
            raise ValueError(f"job {job_id}: no status {status!r} (known: {sorted(TRANSITIONS)})")
        sources = [before for before, targets in TRANSITIONS.items() if status in targets]
        changed, before, done = self._transition(
            keys=[keys.job(job_id), keys.ACTIVE_JOBS],
            args=[status, time.time(), rows_total, reason, job_id, *sources],
        )
        return Transition(bool(changed), str(before), int(done))

    def mark_finished(self, job_id: str, rows_total: int) -> bool:
        """Finish a running or paused job if every row is counted. True when every row is
        counted (whatever the status: a cancelled job stays cancelled), False while rows are
        missing."""
        return self.transition(job_id, "finished", rows_total=rows_total).rows_done >= rows_total

    def list_jobs(self, limit: int = 50) -> list[str]:
        return cast(list[str], self.r.zrevrange(keys.JOBS, 0, limit - 1))

    def count_fatal(self, job_id: str, signature: str) -> int:
        """Count one more of this refusal for the job; returns how often it was seen."""
        key = keys.fatal(job_id)
        pipe = self.r.pipeline()
        pipe.hincrby(key, signature[:500], 1)
        pipe.expire(key, self.ttl_s)
        return int(pipe.execute()[0])

    def clear_fatal(self, job_id: str) -> None:
        """Forget counted refusals (on resume: the cause may have been fixed)."""
        self.r.delete(keys.fatal(job_id))

    def account(
        self, job_id: str, counters: dict[str, int], usage: Usage | None = None
    ) -> tuple[int, int | None]:
        """Add a call's counters and its usage to the job in one round trip; returns the
        priced spend after it and the cap in force (None: no cap). HINCRBY is atomic, so the
        spend adds up across every worker and host."""
        key = keys.job(job_id)
        pipe = self.r.pipeline()
        for name, amount in counters.items():
            if amount:
                pipe.hincrby(key, name, amount)
        if usage is not None:
            for kind, amount in (*usage.tokens().items(), ("cost_nanos", usage.cost_nanos)):
                if amount:
                    pipe.hincrby(key, usage_field(usage.role, kind, usage.model), amount)
        pipe.hincrby(key, "spent_nanos", usage.cost_nanos if usage is not None else 0)
        pipe.hget(key, "budget_nanos")
        results = pipe.execute()
        budget = cast(str | None, results[-1])
        return int(results[-2]), int(budget) if budget else None

    def budget(self, job_id: str) -> tuple[int, int | None]:
        """(priced spend so far, the cap in force or None), in billionths of a dollar."""
        spent, budget = cast(
            list[str | None], self.r.hmget(keys.job(job_id), ["spent_nanos", "budget_nanos"])
        )
        return int(spent or 0), int(budget) if budget else None

    def set_budget(self, job_id: str, cap_nanos: int | None) -> None:
        if cap_nanos is None:
            self.r.hdel(keys.job(job_id), "budget_nanos")
        else:
            self.r.hset(keys.job(job_id), "budget_nanos", cap_nanos)

    def incr(self, job_id: str, **amounts: int) -> None:
        """Add to a job's counters, only while the job exists: a call that lands after Redis
        lost the job must not leave a config-less hash behind (no TTL, and it would look like
        a job to `wait`)."""
        pairs = [str(x) for name, amount in amounts.items() if amount for x in (name, amount)]
        if pairs:
            self._incr_existing(keys=[keys.job(job_id)], args=pairs)

    # ---- rows, rubrics, verdicts ----

    def row(self, job_id: str, row: str) -> RowInput:
        if (hit := self._memo.get(("row", job_id, row))) is not None:
            return cast(RowInput, hit)
        raw = self.r.get(keys.row(job_id, row))
        if raw is None:
            raise JobNotFound(f"job {job_id!r} has no row on line {row} (expired?)")
        return cast(
            RowInput,
            self._memo.put(("row", job_id, row), RowInput.model_validate_json(cast(str, raw))),
        )

    def keep_row_plan(self, job_id: str, row: str, plan: PlanT) -> PlanT:
        """Store the plan unless one is stored, and return the stored one, in one round trip.
        First write wins: a redelivered prepare_row must not renumber the row's units."""
        key = keys.plan(job_id, row)
        pipe = self.r.pipeline(transaction=True)
        pipe.set(key, plan.model_dump_json(), ex=self.ttl_s, nx=True)
        pipe.get(key)
        _, raw = pipe.execute()
        return self._remember_plan(job_id, row, cast(str, raw), type(plan)) or plan

    def row_plan(self, job_id: str, row: str, model: type[PlanT]) -> PlanT | None:
        """The row's stored plan as its metric's ``model``; StoredPlanError if it doesn't fit."""
        if isinstance(hit := self._memo.get(("plan", job_id, row)), model):
            return hit
        raw = cast(str | None, self.r.get(keys.plan(job_id, row)))
        return self._remember_plan(job_id, row, raw, model)

    def _remember_plan(
        self, job_id: str, row: str, raw: str | None, model: type[PlanT]
    ) -> PlanT | None:
        """A stored plan read as its metric's model (StoredPlanError if it doesn't fit), kept in
        this process's memo: a row's plan never changes once written."""
        if not raw:
            return None
        plan = load_plan(model, raw, f"job {job_id}, row on line {row}")
        return cast(PlanT, self._memo.put(("plan", job_id, row), plan))

    def unit_inputs(self, job_id: str, row: str, index: int) -> UnitInputs:
        """Everything a unit task reads before its call, in one round trip (see UnitInputs);
        the config, row and plan only when this process has not read them yet."""
        config = self._memo.get(("config", job_id))
        given = self._memo.get(("row", job_id, row))
        plan = self._memo.get(("plan", job_id, row))
        pipe = self.r.pipeline(transaction=True)
        pipe.hget(keys.verdicts(job_id, row), str(index))
        fields = ["status", "spent_nanos", "budget_nanos", *(["config"] if config is None else [])]
        pipe.hmget(keys.job(job_id), fields)
        if given is None:
            pipe.get(keys.row(job_id, row))
        if plan is None:
            pipe.get(keys.plan(job_id, row))
        found = pipe.execute()
        verdict, job = cast(str | None, found[0]), cast(list[str | None], found[1])
        status, spent, cap = job[0], job[1], job[2]
        if status is None or (config is None and job[3] is None):
            raise JobNotFound(f"no job {job_id!r} in Redis (never created, or expired)")
        if config is None:
            config = JobConfig.model_validate_json(cast(str, job[3]))
            self._memo.put(("config", job_id), config)
        rest = found[2:]
        if given is None:
            if (raw_row := cast(str | None, rest.pop(0))) is None:
                raise JobNotFound(f"job {job_id!r} has no row on line {row} (expired?)")
            self._memo.put(("row", job_id, row), RowInput.model_validate_json(raw_row))
        if plan is None:
            model = get_metric(cast(JobConfig, config).metric).plan_model
            plan = self._remember_plan(job_id, row, cast(str | None, rest.pop(0)), model)
        return UnitInputs(
            verdict=Verdict.model_validate_json(verdict) if verdict else None,
            status=status,
            spent_nanos=int(spent or 0),
            cap_nanos=int(cap) if cap else None,
            plan=cast(Plan[Any] | None, plan),
        )

    def record_unit(
        self, job_id: str, row: str, verdict: Verdict | None, writes: UnitWrites
    ) -> Recorded:
        """A unit's outcome in one round trip (one script): its verdict (first write wins, as
        HSETNX), the row's sign of life, its counters, its call-cache entries and its
        limiter corrections. Which counters count when is worker.unit_writes's rule: `spent`
        always, `counted` only with this run's new verdict. JobNotFound when the job is gone
        (nothing is written then)."""
        return self.record_units(job_id, row, [(verdict, writes)])[0]

    def record_units(
        self, job_id: str, row: str, outcomes: Sequence[tuple[Verdict | None, UnitWrites]]
    ) -> list[Recorded]:
        """Several units' outcomes, each as record_unit writes it (each script is atomic on its
        own), sent together in one round trip: prepare_row's units answered from the cache."""
        if not outcomes:
            return []
        calls = [self._record_args(job_id, row, verdict, writes) for verdict, writes in outcomes]
        # EVALSHA by hand: redis-py's Script in a pipeline asks SCRIPT EXISTS first, every time.
        for attempt in range(2):
            pipe = self.r.pipeline(transaction=False)
            for script_keys, args in calls:
                pipe.evalsha(self._record_unit.sha, len(script_keys), *script_keys, *args)
            replies = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
                self.r.script_load(_RECORD_UNIT)  # Redis restarted: its script cache is empty
                continue  # nothing ran: each script failed before its first write
            break
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return [self._recorded(job_id, reply) for reply in replies]

    def _record_args(
        self, job_id: str, row: str, verdict: Verdict | None, writes: UnitWrites
    ) -> tuple[list[str], list[Any]]:
        spent: Counter[str] = Counter(writes.spent)
        for usage in writes.usage:
            spent.update(self._usage_counters(usage))
        spent["spent_nanos"] += 0  # always returned, so always present
        reply_keys = list(writes.replies)
        limiter_keys = [key for key, _ in writes.corrections]
        args: list[Any] = [
            "" if verdict is None else verdict.index,
            "" if verdict is None else verdict.model_dump_json(),
            self.ttl_s,
            row,
            time.time() if writes.touch_at is None else writes.touch_at,
            len(reply_keys),
            len(limiter_keys),
            sum(1 for amount in spent.values() if amount),
        ]
        for key in reply_keys:
            args += list(writes.replies[key])
        args += [repr(float(ms)) for _, ms in writes.corrections]
        for pairs in (spent, writes.counted):
            for name, amount in sorted(pairs.items()):
                if amount:
                    args += [name, amount]
        script_keys = [
            keys.verdicts(job_id, row),
            keys.job(job_id),
            keys.activity(job_id),
            *reply_keys,
            *limiter_keys,
        ]
        return script_keys, args

    @staticmethod
    def _recorded(job_id: str, reply: Any) -> Recorded:
        written, spend, cap = reply
        if int(written) < 0:
            raise JobNotFound(f"no job {job_id!r} in Redis (never created, or expired)")
        return Recorded(bool(int(written)), int(spend), int(cap) if cap else None)

    @staticmethod
    def _usage_counters(usage: Usage) -> dict[str, int]:
        """A call's usage as job-hash counters: per role and model, and the priced spend."""
        counters = {
            usage_field(usage.role, kind, usage.model): amount
            for kind, amount in (*usage.tokens().items(), ("cost_nanos", usage.cost_nanos))
            if amount
        }
        counters["spent_nanos"] = usage.cost_nanos
        return counters

    # ---- a small shared cache (rubrics, long contexts) ----

    def get(self, key: str) -> str | None:
        return cast(str | None, self.r.get(key))

    def get_many(self, names: Sequence[str]) -> list[str | None]:
        return cast(list[str | None], self.r.mget(names)) if names else []

    def has(self, key: str) -> bool:
        return bool(self.r.exists(key))

    def ping(self) -> None:
        """Raises a Redis error when Redis can't be reached."""
        self.r.ping()

    def set(self, key: str, value: str, ttl_s: int) -> None:
        self.r.set(key, value, ex=ttl_s)

    # ---- locks, scripts and queues for the runtime's other parts (keys from worker.keys) ----

    def claim(self, key: str, owner: str, ttl_s: int) -> bool:
        """Take a lock that expires after ttl_s; False while someone else holds it."""
        return bool(self.r.set(key, owner, nx=True, ex=ttl_s))

    def release(self, key: str, owner: str) -> None:
        """Drop a lock only if `owner` still holds it (an expired lock may be another's now)."""
        self._release(keys=[key], args=[owner])

    def renew(self, lock_keys: Sequence[str], owner: str, ttl_s: int) -> None:
        """Extend the locks `owner` still holds to ttl_s from now, in one round trip."""
        if lock_keys:
            self._renew(keys=list(lock_keys), args=[owner, ttl_s])

    def script(self, source: str) -> Script:
        """A Lua script on this Store's connection, for a part that keeps its own atomic step
        (the rate limiter); it is called with keys named by worker.keys."""
        return self.r.register_script(source)

    def queued(self, *queues: str) -> int:
        """Messages waiting in the broker's queues (the watchdog's sign that messages are lost)."""
        pipe = self.r.pipeline(transaction=False)
        for queue in queues:
            pipe.llen(queue)
        return sum(int(n) for n in pipe.execute())

    def address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        kwargs = self.r.connection_pool.connection_kwargs
        return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"

    def verdict(self, job_id: str, row: str, index: int) -> Verdict | None:
        raw = self.r.hget(keys.verdicts(job_id, row), str(index))
        return Verdict.model_validate_json(cast(str, raw)) if raw else None

    def answered(self, job_id: str, row: str) -> frozenset[int]:
        """The indexes of the row's units that have a verdict."""
        return frozenset(int(k) for k in cast(list[str], self.r.hkeys(keys.verdicts(job_id, row))))

    def verdicts(self, job_id: str, row: str) -> dict[int, Verdict]:
        raw = cast(dict[str, str], self.r.hgetall(keys.verdicts(job_id, row)))
        return {int(k): Verdict.model_validate_json(v) for k, v in raw.items()}

    # ---- results ----

    def finish_row(self, job_id: str, result: RowResult) -> int:
        """Record a row's result and count it; -1 when it was already counted."""
        names, args = self._finish_args(job_id, result)
        return int(self._finish_row(keys=names, args=args))

    def _finish_args(self, job_id: str, result: RowResult) -> tuple[list[str], list[Any]]:
        unscored: dict[str, int] = {}
        for q in result.questions:
            if q.reason:
                unscored[q.reason] = unscored.get(q.reason, 0) + 1
        args: list[Any] = [row_key(result), result.model_dump_json(), result.status, self.ttl_s]
        args.append(result.reason or "" if result.status == "failed" else "")
        args.append("" if result.score is None else repr(float(result.score)))  # running mean
        for reason, count in sorted(unscored.items()):
            args += [reason, count]
        names = [
            keys.done(job_id),
            keys.job(job_id),
            keys.results(job_id),
            keys.unscored(job_id),
        ]
        return names, args

    def is_done(self, job_id: str, row: str) -> bool:
        return bool(self.r.sismember(keys.done(job_id), row))

    def unscored_counts(self, job_id: str) -> dict[str, int]:
        raw = cast(dict[str, str], self.r.hgetall(keys.unscored(job_id)))
        return {k: int(v) for k, v in sorted(raw.items())}

    def iter_results(self, job_id: str) -> Iterator[RowResult]:
        for _, raw in self.r.hscan_iter(keys.results(job_id), count=500):
            yield RowResult.model_validate_json(cast(str, raw))

    def save_summary(self, job_id: str, summary_json: str) -> None:
        self.r.set(keys.summary(job_id), summary_json, ex=self.ttl_s)

    def summary_json(self, job_id: str) -> str | None:
        return cast(str | None, self.r.get(keys.summary(job_id)))

    # ---- batch mode's ledger (worker.batch reads and writes these as JSON) ----

    def batch_records(self, job_id: str) -> dict[str, str]:
        """Every batch of the job: local id -> BatchRecord JSON."""
        return cast(dict[str, str], self.r.hgetall(keys.batches(job_id)))

    def save_batch_record(self, job_id: str, batch: str, record_json: str) -> None:
        key = keys.batches(job_id)
        pipe = self.r.pipeline()
        pipe.hset(key, batch, record_json)
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def save_batch_units(self, job_id: str, batch: str, entries: Sequence[str]) -> None:
        """The batch's requests in order, written once (a second call replaces the first)."""
        key = keys.batch_units(job_id, batch)
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(key)
        for start in range(0, len(entries), 1000):
            pipe.rpush(key, *entries[start : start + 1000])
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def batch_units(self, job_id: str, batch: str, start: int = 0, end: int = -1) -> list[str]:
        return cast(list[str], self.r.lrange(keys.batch_units(job_id, batch), start, end))

    def save_batch_replies(self, job_id: str, replies: Mapping[str, str]) -> None:
        """Results by call digest; a result already there stays (first write wins)."""
        if not replies:
            return
        key = keys.batch_replies(job_id)
        pipe = self.r.pipeline()
        for digest, value in replies.items():
            pipe.hsetnx(key, digest, value)
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def batch_reply(self, job_id: str, digest: str) -> str | None:
        return cast(str | None, self.r.hget(keys.batch_replies(job_id), digest))

    def batch_first_serve(self, job_id: str, digest: str) -> bool:
        """True the first time a batch reply is handed to a metric (it is accounted then)."""
        return self._first_time(keys.batch_served(job_id), digest)

    def batch_retry(self, job_id: str, digest: str, batch: str) -> int:
        """Count a request's transient failure (or missing result) in one batch; returns how
        many distinct batches it has failed in. Ingesting a batch twice counts it once."""
        key = keys.batch_tries(job_id)
        if self.r.hsetnx(key, f"{digest}@{batch}", 1):
            pipe = self.r.pipeline()
            pipe.hincrby(key, digest, 1)
            pipe.expire(key, self.ttl_s)
            pipe.execute()
        return int(cast(str, self.r.hget(key, digest)) or 0)

    def _first_time(self, key: str, member: str) -> bool:
        """Add `member` to the set at `key` (living as long as the job); True if it is new."""
        pipe = self.r.pipeline()
        pipe.sadd(key, member)
        pipe.expire(key, self.ttl_s)
        added, _ = pipe.execute()
        return bool(added)

    def batch_meta(self, job_id: str) -> dict[str, str]:
        return cast(dict[str, str], self.r.hgetall(keys.batch_meta(job_id)))

    def set_batch_meta(self, job_id: str, **fields: str | int | float) -> None:
        key = keys.batch_meta(job_id)
        pipe = self.r.pipeline()
        pipe.hset(key, mapping={name: str(value) for name, value in fields.items()})
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def incr_batch_meta(self, job_id: str, name: str, amount: int = 1) -> int:
        key = keys.batch_meta(job_id)
        pipe = self.r.pipeline()
        pipe.hincrby(key, name, amount)
        pipe.expire(key, self.ttl_s)
        value, _ = pipe.execute()
        return int(value)

    # ---- exceptions that escaped a task's code (worker.task_errors) ----
    # Kept together at the end of the class: fields worker.keys.TASK_ERROR*, in the job hash.

    @cached_property
    def _record_task_error(self) -> Script:
        return self.r.register_script(_RECORD_TASK_ERROR)

    def record_task_error(self, job_id: str, task: str, error: str, at: float) -> int:
        """Count one more exception that escaped a task of the job and keep it as the job's
        last (`error`: "Type: message", clipped here), with the task's name and when, in one
        atomic step, while the job exists. Returns the job's count (0: the job is gone)."""
        fields = [keys.TASK_ERRORS, keys.TASK_ERROR_LAST, keys.TASK_ERROR_TASK, keys.TASK_ERROR_AT]
        count = self._record_task_error(
            keys=[keys.job(job_id)], args=[*fields, clip_error(error), task, repr(at)]
        )
        return int(count)

    @staticmethod
    def task_errors_of(job_hash: Mapping[str, str]) -> TaskErrors | None:
        """What a job hash says of its task errors; None when there were none."""
        count = int(job_hash.get(keys.TASK_ERRORS) or 0)
        if not count:
            return None
        at = job_hash.get(keys.TASK_ERROR_AT)
        return TaskErrors(
            count=count,
            last_error=job_hash.get(keys.TASK_ERROR_LAST),
            task=job_hash.get(keys.TASK_ERROR_TASK),
            at=float(at) if at else None,
        )


# Record a task error on a job that still exists (its hash holds the config). KEYS: the job
# hash. ARGV: the count's field, the last error's, its task's, its time's; then their values.
_RECORD_TASK_ERROR = """
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return 0 end
local count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HSET', KEYS[1], ARGV[2], ARGV[5], ARGV[3], ARGV[6], ARGV[4], ARGV[7])
return count
"""
TASK_ERROR_MAX_CHARS = 500


def clip_error(text: str, limit: int = TASK_ERROR_MAX_CHARS) -> str:
    """An error's text, at most `limit` characters (an SDK's message can hold a whole body)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Who holds a claim on a shared entry: this process. A claim is a lease: taken for lease_s,
# renewed by the worker's heartbeat while the task that took it runs (renew_claims), released
# by that task, so a holder killed mid-write holds the others up for one lease, not for the
# whole time its write was allowed.
_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
_HELD: set[str] = set()  # the claim keys this process holds now
_HELD_LOCK = threading.Lock()


def renew_claims(store: Store, lease_s: int) -> int:
    """Extend every claim this process holds by lease_s (the heartbeat calls it each beat)."""
    with _HELD_LOCK:
        held = sorted(_HELD)
    store.renew(held, _OWNER, lease_s)
    return len(held)


@dataclass(frozen=True)
class SharedEntries:
    """One kind of entry shared across jobs (rubrics, judge replies), as the domain's KeyValue
    (evalq.core.metric.KeyValue): callers name an entry by its digest, `key` (a worker.keys
    builder) names it in Redis."""

    store: Store
    key: Callable[[str], str]
    lease_s: int | None = None  # a claim's first lease (renewed by the heartbeat); None: ttl_s

    def get(self, entry: str) -> str | None:
        return self.store.get(self.key(entry))

    def set(self, entry: str, value: str, ttl_s: int) -> None:
        self.store.set(self.key(entry), value, ttl_s)

    def claim(self, entry: str, ttl_s: int) -> bool:
        """The right to write the entry, for ttl_s at most (a lease of lease_s, renewed while
        this process lives); False while another holds it."""
        key = keys.claim(self.key(entry))
        lease_s = ttl_s if self.lease_s is None else min(ttl_s, self.lease_s)
        if not self.store.claim(key, _OWNER, lease_s):
            return False
        with _HELD_LOCK:
            _HELD.add(key)
        return True

    def release(self, entry: str) -> None:
        key = keys.claim(self.key(entry))
        with _HELD_LOCK:
            _HELD.discard(key)
        self.store.release(key, _OWNER)
