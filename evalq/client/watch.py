"""Waiting on a job: poll its progress until it finishes, pauses or is cancelled, riding out a
Redis that is out of reach for a while, and never waiting on a job that can not finish."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

import evalq.worker.jobs.control  # noqa: F401  (loaded before the wait: it may finish the job)
from evalq.client.jobs.lookup import check_job_id
from evalq.client.reads import JobReader
from evalq.client.workers_alive import WorkerWatch
from evalq.core.errors import EvalqError, JobGone, JobNotFound, RedisUnavailable
from evalq.core.models import JobSummary
from evalq.worker.jobs.reads import REDIS_DOWN

T = TypeVar("T")
OnRedis = Callable[[str | None], None]
OnWorkers = Callable[[int, str], None]  # workers alive now (0: none), what to say


def gone_message(job_id: str) -> str:
    return (
        f"job {job_id} is gone from Redis while it ran: Redis lost its data, most likely "
        "because it restarted without persistence (it may also have been flushed, or run out "
        "of memory). Run Redis with its append-only file (`appendonly yes`, as "
        "docker-compose.yml does) so jobs survive a restart, then submit the dataset again."
    )


def wait(
    reader: JobReader,
    job_id: str,
    *,
    poll_s: float = 0.5,
    on_progress: Callable[[int, int], None] | None = None,
    on_redis: OnRedis | None = None,
    timeout_s: float | None = None,
    on_workers: OnWorkers | None = None,
    stop: threading.Event | None = None,
) -> JobSummary:
    """Poll until the job is finished, cancelled or paused; return its summary.

    A job Redis no longer has is read from the archive (it ended). It never waits on a job
    that can not finish: one that vanished (Redis lost its data)
    raises JobGone, one whose row list is gone raises EvalqError. While Redis is out of
    reach it keeps trying for up to redis_retry_max_s, telling `on_redis` why (and None
    once Redis answers again), then raises RedisUnavailable. While the job runs with no worker
    alive in that Redis it tells `on_workers` so, once, and again when one is
    (evalq.client.workers_alive: within SAID_WITHIN_S of waiting). `stop`: set by the CLI's
    Ctrl-C (evalq.client.cli.attach.ctrl_c_flag); the wait then raises KeyboardInterrupt at
    its next pause, between reads and prints, never inside one."""
    check_job_id(job_id)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s

    def reachable(read: Callable[[], T]) -> T:
        return _reachable(reader, read, on_redis, deadline, stop)

    if not reachable(lambda: reader.is_live(job_id)):
        return reader.summary(job_id)  # gone from Redis: ended, and read from the archive
    total = reachable(lambda: reader.job_reads.config(job_id)).rows_total
    workers = WorkerWatch(reader.job_reads, reader.settings) if on_workers else None
    while True:
        try:
            job, listed = reachable(lambda: reader.job_reads.progress(job_id))
        except JobNotFound:
            raise JobGone(gone_message(job_id)) from None
        done, status = job.rows_done, job.status
        if on_progress:
            on_progress(done, total)
        over = status in ("finished", "cancelled", "paused") or done >= total
        if over and on_workers and workers and (said := reachable(workers.ended)) is not None:
            on_workers(*said)
        if status in ("finished", "cancelled", "paused"):
            break
        if done >= total:  # the worker that counted the last row may have died
            return reachable(lambda: reader.job_control.finish(job_id))
        if listed < total:
            raise EvalqError(
                f"job {job_id} can not finish: only {listed} of its {total} rows are "
                "listed in Redis (the list expired or was lost), so nothing can drive the "
                "rest; rows already done stay readable with `evalq results`"
            )
        if on_workers and workers and (said := reachable(workers.check)) is not None:
            on_workers(*said)
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id}: {done}/{total} rows done after {timeout_s} s")
        _pause(poll_s, stop)
    return reachable(lambda: reader.summary(job_id))


def _pause(seconds: float, stop: threading.Event | None) -> None:
    if stop is None:
        time.sleep(seconds)
    elif stop.wait(seconds):
        raise KeyboardInterrupt


def _reachable(
    reader: JobReader,
    read: Callable[[], T],
    on_redis: OnRedis | None,
    deadline: float | None,
    stop: threading.Event | None = None,
) -> T:
    """`read()`, tried again with backoff while Redis is out of reach (at most
    redis_retry_max_s, and never past `deadline`)."""
    down_since: float | None = None
    pause_s = 0.5
    while True:
        try:
            value = read()
        except REDIS_DOWN as exc:
            now = time.monotonic()
            down_since = now if down_since is None else down_since
            where = reader.redis_address()
            if now - down_since >= reader.settings.redis_retry_max_s:
                raise RedisUnavailable(
                    f"Redis at {where} out of reach for {now - down_since:.0f} s ({exc}); "
                    "the job goes on if workers reach it: check again with `evalq status`"
                ) from None
            if deadline is not None and now > deadline:
                raise TimeoutError(f"Redis at {where} out of reach ({exc})") from None
            if on_redis:
                on_redis(f"waiting for Redis at {where}: {exc}")
            _pause(pause_s, stop)
            pause_s = min(pause_s * 2, 5.0)
            continue
        if down_since is not None and on_redis:
            on_redis(None)
        return value
