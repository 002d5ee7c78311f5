"""The archive in tests: an archive URL per backend (a SQLite file, or a fresh PostgreSQL
database from the conftest's `postgres_url`), waiting until a job is written, and deleting a
job's Redis keys as expiry (or a Redis restarted without its append-only file) would."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from redis import Redis
from sqlalchemy.engine import make_url

from devtools.local import libpq_url, wait_for
from evalq.worker.store import keys

BACKENDS = ("sqlite", "postgresql")


def archive_url_for(backend: str, request: pytest.FixtureRequest, folder: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{folder / 'archive.sqlite'}"
    return str(request.getfixturevalue("postgres_url"))


@contextmanager
def archive_for_module(backend: str, request: pytest.FixtureRequest, folder: Path) -> Iterator[str]:
    """An archive URL that lasts as long as the caller needs it, for a fixture wider than a
    test (the conftest's `postgres_url` is one test's): a SQLite file in `folder`, or a fresh
    database on the shared PostgreSQL server, dropped at the end."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'archive.sqlite'}"
        return
    server_url = str(request.getfixturevalue("postgres_server").url)
    with postgres_database(server_url) as url:
        yield url


@contextmanager
def postgres_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the server (its SQLAlchemy URL), made from template0 and
    dropped WITH (FORCE), as the conftest's `postgres_url` does for one test."""
    name = f"evalq_test_{secrets.token_hex(8)}"
    admin = libpq_url(server_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


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
