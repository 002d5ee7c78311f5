"""A database of the session's test Redis that no worker watches, and jobs planted in it.

Tests of the store, the watchdog, re-drives and job status write job keys by hand and then run
one piece of the runtime against them. The shared integration worker consumes database 0 of
the same server, so a job planted there could be picked up or swept by it; these tests use
another database instead, flushed before and after each test, so no test sees another's keys.
(The in-process task runner takes a database of its own the same way, through db_url.)"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from evalq.core.models import MediaRef, RowInput
from evalq.worker.settings import Settings
from evalq.worker.store import Store, keys
from tests.support.job_configs import job_config

SCRATCH_DB = 2


def db_url(url: str, db: int) -> str:
    """The same Redis server, another database number."""
    return f"{url.rsplit('/', 1)[0]}/{db}"


@contextmanager
def scratch_db(redis_url: str) -> Iterator[str]:
    """The URL of the scratch database on the server at `redis_url`, empty on entry and
    emptied on exit."""
    url = db_url(redis_url, SCRATCH_DB)
    r = redis.Redis.from_url(url)
    r.flushdb()
    try:
        yield url
    finally:
        r.flushdb()
        r.close()


def job_keys(url: str) -> list[str]:
    """Every key a stored job leaves in the database at `url` (its own keys and its place in
    the jobs index), sorted: a refused job must leave none, a dry run none more."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return sorted(r.scan_iter("evalq:job*"))
    finally:
        r.close()


def store_on(url: str) -> Store:
    """A Store on the Redis database at `url`, with default settings otherwise."""
    return Store.from_settings(Settings(redis_url=url))


def plant_job(
    store: Store,
    rows: int,
    *,
    first_line: int = 1,
    same_id: str | None = None,
    mode: str = "online",
    waiting: bool = False,
    extra: dict[str, Any] | None = None,
) -> str:
    """A running gecko-image job of `rows` rows (in `mode`), created as the client creates one,
    with no task sent for it; returns its id (a valid client job id). Online, its rows hold
    their turns (evalq.worker.dispatch.turns) as if their tasks had been sent and lost, unless
    `waiting`. `extra`: the user's own columns, the same in every row.

    Rows are r0, r1, … on lines `first_line`, `first_line` + 1, …; with `same_id`, every row
    has that id instead, as a producer that checked nothing would store them. Each names an
    image path that does not exist: nothing here reads it."""
    job_id = uuid.uuid4().hex[:12]
    config = job_config(job_id=job_id, rows_total=rows, created_at=time.time(), mode=mode)
    ref = MediaRef(kind="path", value="/x.png")
    inputs = [
        RowInput(
            id=same_id or f"r{i}",
            line=first_line + i,
            prompt="p",
            media={"image": ref},
            extra=dict(extra or {}),
        )
        for i in range(rows)
    ]
    store.create_job(config, inputs)
    if mode == "online" and not waiting:
        lines = store.r.lrange(keys.waiting(job_id), 0, -1)
        if lines:
            store.r.sadd(keys.turns(job_id), *lines)
        store.r.delete(keys.waiting(job_id))
    return job_id
