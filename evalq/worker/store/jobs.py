"""Jobs: creating one, its config and status, the transition state machine (TRANSITIONS),
the active set, refusals counted toward a pause, and exceptions that escaped a task's code."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from evalq.core.errors import JobNotFound
from evalq.core.models import JobConfig, RowInput, RowResult
from evalq.core.pricing import nanos
from evalq.worker.store import keys
from evalq.worker.store.base import JOB_TTL, StoreBase, job_gone, line_order, row_key
from evalq.worker.store.counters import COUNTERS
from evalq.worker.store.results import finish_args

# Which status a job may move to, from which. "finished" is final. A cancelled job runs again
# only through `evalq resume`; running -> running is a resume of an interrupted job. Moving to
# "finished" also needs every row counted: a job is never finished with rows missing.
TRANSITIONS: dict[str, frozenset[str]] = {
    "running": frozenset({"running", "paused", "cancelled", "finished"}),
    "paused": frozenset({"running", "cancelled", "finished"}),
    "cancelled": frozenset({"running"}),
    "finished": frozenset(),
}
TASK_ERROR_MAX_CHARS = 500
# The refusal counts' field holding when they last restarted (a signature starts with a model).
FATAL_SINCE = "~since"


@dataclass(frozen=True)
class Transition:
    """What a status change found: whether it happened, and the status it met ("unknown"
    when the job is gone), so a caller can say "already finished" instead of pretending."""

    changed: bool
    before: str
    rows_done: int


@dataclass(frozen=True)
class Finish:
    """What asking to finish a job did: `marked` when this call finished it; `complete` when
    every row is counted, whatever the status (a cancelled job stays cancelled, a finished one
    was finished before); `before` the status it met."""

    marked: bool
    complete: bool
    before: str


def clip_error(text: str, limit: int = TASK_ERROR_MAX_CHARS) -> str:
    """An error's text, at most `limit` characters (an SDK's message can hold a whole body)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class JobsStore(StoreBase):
    def create_job(
        self, config: JobConfig, rows: list[RowInput], rejected: Sequence[RowResult] = ()
    ) -> None:
        """Store the job, its rows and its rejected lines (already counted as failed) in one
        transaction: a producer that dies half way leaves no job that can never finish."""
        key = keys.job(config.job_id)
        ttl = config.ttl_s or self.ttl_s  # the job's own, whoever writes its keys later
        lines = sorted(
            [row_key(row) for row in rows] + [row_key(r) for r in rejected], key=line_order
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
                "priority": config.priority,
                "max_in_flight": config.max_in_flight or 0,
                JOB_TTL: ttl,
            },
        )
        pipe.expire(key, ttl)
        for row in rows:
            pipe.set(keys.row(config.job_id, row_key(row)), row.model_dump_json(), ex=ttl)
        if lines:
            pipe.rpush(keys.job_rows(config.job_id), *lines)
            pipe.expire(keys.job_rows(config.job_id), ttl)
        if (
            rows and config.mode == "online"
        ):  # its rows wait for turns (evalq.worker.dispatch.turns)
            pipe.rpush(keys.waiting(config.job_id), *sorted(map(row_key, rows), key=line_order))
            pipe.expire(keys.waiting(config.job_id), ttl)
            pipe.zadd(keys.TURNS, {config.job_id: config.created_at})
        for result in rejected:
            names, args = finish_args(config.job_id, result, ttl)
            self._script("finish_row")(keys=names, args=args, client=pipe)
        pipe.zadd(keys.JOBS, {config.job_id: config.created_at})
        pipe.sadd(keys.ACTIVE_JOBS, config.job_id)
        pipe.execute()

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

    def configs(self, job_ids: Sequence[str]) -> dict[str, JobConfig]:
        """The configs of those of `job_ids` Redis still has, in one round trip; the ids of
        jobs gone (expired) are dropped from the job list, so listing stays one trip per
        page however long Redis has run."""
        pipe = self.r.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(keys.job(job_id), "config")
        found: dict[str, JobConfig] = {}
        gone: list[str] = []
        for job_id, raw in zip(job_ids, pipe.execute(), strict=True):
            if raw is None:
                gone.append(job_id)
            else:
                found[job_id] = JobConfig.model_validate_json(cast(str, raw))
        if gone:
            self.r.zrem(keys.JOBS, *gone)
        return found

    def job_hash(self, job_id: str) -> dict[str, str]:
        """The job hash as stored, every field a string (for tests and debugging: the runtime
        reads it typed, through Store.counters)."""
        data = cast(dict[str, str], self.r.hgetall(keys.job(job_id)))
        if not data:
            raise job_gone(job_id)
        return data

    def list_jobs(self, limit: int = 50) -> list[str]:
        return cast(list[str], self.r.zrevrange(keys.JOBS, 0, limit - 1))

    def active_jobs(self) -> list[str]:
        return sorted(cast(set[str], self.r.smembers(keys.ACTIVE_JOBS)))

    def deactivate(self, job_id: str) -> None:
        self.r.srem(keys.ACTIVE_JOBS, job_id)

    # ---- status: the transition state machine ----

    def status(self, job_id: str) -> str:
        return cast(str | None, self.r.hget(keys.job(job_id), "status")) or "unknown"

    def transition(
        self,
        job_id: str,
        status: str,
        *,
        reason: str = "",
        rows_total: int = 0,
        while_cap_nanos: int | None = None,
    ) -> Transition:
        """Move the job to `status` if TRANSITIONS allows it from the status it has now, in one
        atomic step. "finished" also needs rows_done >= rows_total; "paused" records `reason`.
        `while_cap_nanos`: only while the job's spend cap is still that one."""
        if status not in TRANSITIONS:
            raise ValueError(f"job {job_id}: no status {status!r} (known: {sorted(TRANSITIONS)})")
        sources = [before for before, targets in TRANSITIONS.items() if status in targets]
        now = time.time()
        changed, before, done = self._script("transition")(
            keys=[keys.job(job_id), keys.ACTIVE_JOBS, keys.ARCHIVE_PENDING],
            args=[
                status,
                now,
                rows_total,
                reason,
                job_id,
                now + self.archive_grace_s,
                "" if while_cap_nanos is None else str(while_cap_nanos),
                *sources,
            ],
        )
        return Transition(bool(changed), str(before), int(done))

    def mark_finished(self, job_id: str, rows_total: int) -> Finish:
        """Finish a running or paused job if every row is counted, and say what happened (see
        Finish): a caller goes on to the summary when `complete`, rows missing otherwise."""
        moved = self.transition(job_id, "finished", rows_total=rows_total)
        return Finish(moved.changed, moved.rows_done >= rows_total, moved.before)

    def pause(self, job_id: str, reason: str, *, at_cap_nanos: int | None = None) -> bool:
        """Pause a running job (first reason wins); False if it was not running. A pause for a
        spent cap names the cap it was read under (`at_cap_nanos`): a resume may have raised
        it since, and then the job runs on."""
        return self.transition(
            job_id, "paused", reason=reason, while_cap_nanos=at_cap_nanos
        ).changed

    def pause_reason(self, job_id: str) -> str | None:
        return cast(str | None, self.r.hget(keys.job(job_id), "pause_reason"))

    # ---- refusals counted toward a pause (evalq.worker.judges.fatal_errors) ----

    def count_fatal(self, job_id: str, signature: str, call_s: float = 0.0) -> int:
        """Count one more of this refusal for the job; returns how often it was seen since the
        job last resumed, or 0 when its call (which took `call_s`) was sent before that resume:
        with many calls in flight, the old cause's refusals arrive after the fix and must not
        pause the resumed job again."""
        return int(
            self._script("count_fatal")(
                keys=[keys.fatal(job_id)],
                args=[signature[:500], repr(max(0.0, call_s)), self.job_ttl(job_id), FATAL_SINCE],
            )
        )

    def clear_fatal(self, job_id: str) -> None:
        """Forget counted refusals, and note when, on resume: the cause may have been fixed."""
        self._script("restart_fatal")(
            keys=[keys.fatal(job_id)], args=[self.job_ttl(job_id), FATAL_SINCE]
        )

    # ---- exceptions that escaped a task's code (evalq.worker.celery_app.task_errors) ----

    def record_task_error(self, job_id: str, task: str, error: str, at: float) -> int:
        """Count one more exception that escaped a task of the job and keep it as the job's
        last (`error`: "Type: message", clipped here), with the task's name and when, in one
        atomic step, while the job exists. Returns the job's count (0: the job is gone)."""
        fields = [keys.TASK_ERRORS, keys.TASK_ERROR_LAST, keys.TASK_ERROR_TASK, keys.TASK_ERROR_AT]
        count = self._script("record_task_error")(
            keys=[keys.job(job_id)], args=[*fields, clip_error(error), task, repr(at)]
        )
        return int(count)
