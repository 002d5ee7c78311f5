"""The archive in tests: an archive URL per backend (a SQLite file, or a fresh PostgreSQL
database from the conftest's `postgres_url`), waiting until a job is written, and deleting a
job's Redis keys as expiry (or a Redis restarted without its append-only file) would."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from devtools.local import wait_for
from worker import keys

BACKENDS = ("sqlite", "postgresql")


def archive_url_for(backend: str, request: pytest.FixtureRequest, folder: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{folder / 'archive.sqlite'}"
    return str(request.getfixturevalue("postgres_url"))


def job_key_names(redis: Redis, job_id: str) -> list[str]:
    names = [keys.job(job_id)] + [str(n) for n in redis.scan_iter(match=keys.job(job_id, "*"))]
    return [n if isinstance(n, str) else n.decode() for n in names]


def forget_in_redis(redis: Redis, *job_ids: str) -> int:
    """Delete every key of these jobs: what their expiry does. Returns how many went."""
    gone = 0
    for job_id in job_ids:
        names = job_key_names(redis, job_id)
        gone += int(redis.delete(*names)) if names else 0
    return gone


def wait_archived(redis: Redis, *job_ids: str, timeout_s: float = 60) -> None:
    """Until Redis says each job is written to the archive (archived_at, off the pending set)."""

    def written(job_id: str) -> bool:
        return bool(redis.hget(keys.job(job_id), keys.ARCHIVED_AT)) and (
            redis.zscore(keys.ARCHIVE_PENDING, job_id) is None
        )

    wait_for(lambda: all(written(j) for j in job_ids), timeout_s, f"archived {job_ids}")
