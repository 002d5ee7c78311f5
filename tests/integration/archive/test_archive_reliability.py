"""The archive when things go wrong, with real processes: PostgreSQL stopped while a job ends
(the job ends in Redis, `status` says the write is pending, its keys are held, and it is
written once PostgreSQL is back), a worker SIGKILLed in the middle of its write (the job is
archived once, whole, by another worker), and writing by hand twice (one record)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from redis import Redis

from devtools.local import PostgresServer, libpq_url, wait_for
from evalq.worker.archive import schema
from evalq.worker.archive.archive import Archive
from evalq.worker.store import keys
from tests.support.archive import job_key_names, wait_archived
from tests.support.cli import run_evalq
from tests.support.stack import stack

pytestmark = pytest.mark.integration

QUICK = {"EVALQ_ARCHIVE_RETRY_S": "1", "EVALQ_WATCHDOG_INTERVAL_S": "1"}


def example(folder: Path) -> Path:
    from evalq.examples.gecko import write_gecko_image_example

    return write_gecko_image_example(folder)


def record_counts(url: str, job_id: str) -> dict[str, int]:
    archive = Archive.at(url)
    assert archive is not None
    with archive.engine.connect() as connection:

        def count(table: sa.Table) -> int:
            query = sa.select(sa.func.count()).select_from(table).where(table.c.job_id == job_id)
            return int(connection.execute(query).one()[0])

        return {t.name: count(t) for t in (schema.jobs, schema.rows, schema.verdicts)}


def verdicts_in_redis(redis: Redis, job_id: str) -> int:
    return sum(
        int(redis.hlen(name))
        for name in job_key_names(redis, job_id)
        if name.startswith(keys.job(job_id, "verdicts"))
    )


def test_archive_down_when_the_job_ends(private_postgres: PostgresServer, tmp_path: Path) -> None:
    url = private_postgres.url
    dataset = example(tmp_path / "data")
    with stack(tmp_path / "stack", EVALQ_ARCHIVE_URL=url, **QUICK) as s:
        env, redis = s.env(), s.redis_client()
        private_postgres.stop()
        done = run_evalq(env, "run", "gecko-image", str(dataset), "--wait", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        job_id = json.loads(done.stdout)["job_id"]
        assert json.loads(done.stdout)["status"] == "finished"  # the job ends all the same

        def failed_once() -> bool:
            return int(redis.hget(keys.job(job_id), keys.ARCHIVE_TRIES) or 0) >= 1

        wait_for(failed_once, 60, "a failed archive write")
        status = run_evalq(env, "status", job_id)
        assert status.returncode == 0, status.stderr
        assert "archive: write pending" in status.stderr
        assert "failed tries" in status.stderr and "OperationalError" in status.stderr
        # Held: not one key of the job may expire before it is written. The worker counts the
        # failed try, then holds the keys: wait for the second step, not for a time.
        names = job_key_names(redis, job_id)
        assert len(names) > 18
        wait_for(lambda: all(redis.ttl(n) == -1 for n in names), 60, "the job's keys held")

        private_postgres.start()
        wait_archived(redis, job_id, timeout_s=120)
        # Written, then the held keys given their expiry again, a step after the write's record.
        wait_for(
            lambda: all(redis.ttl(n) > 0 for n in job_key_names(redis, job_id)),
            60,
            "the job's keys expiring again",
        )
        rows_total = 18
        counts = record_counts(url, job_id)
        assert counts == {
            "archive_jobs": 1,
            "archive_rows": rows_total,
            "archive_verdicts": verdicts_in_redis(redis, job_id),
        }
        assert "pending" not in run_evalq(env, "status", job_id).stderr

        again = run_evalq(env, "archive", job_id)  # by hand, twice: still one record
        assert again.returncode == 0, again.stderr
        assert f"job {job_id} (finished, {rows_total} rows) archived to" in again.stderr
        assert run_evalq(env, "archive", job_id).returncode == 0
        assert record_counts(url, job_id) == counts


def _waiting_on_lock(admin: str) -> bool:
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'evalq' "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    return bool(found and found[0])


def test_a_worker_killed_while_writing_leaves_one_whole_record(
    postgres_url: str, tmp_path: Path
) -> None:
    dataset = example(tmp_path / "data")
    archive = Archive.at(postgres_url)
    assert archive is not None
    archive.open()  # the schema, so the test can lock one of its tables
    admin = libpq_url(postgres_url)
    with stack(tmp_path / "stack", EVALQ_ARCHIVE_URL=postgres_url, **QUICK) as s:
        env, redis = s.env(), s.redis_client()
        blocker = psycopg.connect(admin)
        try:
            # The writer deletes and inserts the job's row, then stops at the question sets:
            # killed there, it has written half a record inside its transaction.
            blocker.execute("LOCK TABLE archive_question_sets IN ACCESS EXCLUSIVE MODE")
            done = run_evalq(env, "run", "gecko-image", str(dataset), "--wait", "--json")
            assert done.returncode == 0, done.stdout + done.stderr
            job_id = json.loads(done.stdout)["job_id"]
            wait_for(lambda: _waiting_on_lock(admin), 60, "the archive write to block mid-way")
            writer = s.pool.procs[0]
            writer.send_signal(signal.SIGKILL)
            writer.wait()
        finally:
            blocker.rollback()
            blocker.close()
        assert record_counts(postgres_url, job_id)["archive_jobs"] == 0  # rolled back whole
        s.pool.start(name="w-after-kill")
        wait_archived(redis, job_id, timeout_s=120)
        counts = record_counts(postgres_url, job_id)
        assert counts == {
            "archive_jobs": 1,
            "archive_rows": 18,
            "archive_verdicts": verdicts_in_redis(redis, job_id),
        }
        stored = archive.job(job_id)
        assert stored is not None
        live = s.client(archive_url=postgres_url)
        assert [r.model_dump() for r in stored.results] == [
            r.model_dump() for r in live.results(job_id)
        ]
        assert archive.question_sets(job_id)  # the questions asked are kept with the job


def test_workers_writing_to_different_archives_are_told_of(tmp_path: Path) -> None:
    """Two hosts each on its own SQLite file (the default) share one Redis: `evalq status` and
    the workers' logs say so, naming each archive and its workers."""
    first = f"sqlite:///{tmp_path / 'host-a.sqlite'}"
    second = f"sqlite:///{tmp_path / 'host-b.sqlite'}"
    dataset = example(tmp_path / "data")
    with stack(tmp_path / "stack", EVALQ_ARCHIVE_URL=first, **QUICK) as s:
        s.pool.start(name="host-b", EVALQ_ARCHIVE_URL=second)
        env = s.env()
        done = run_evalq(env, "run", "gecko-image", str(dataset), "--wait", "--json")
        assert done.returncode == 0, done.stderr
        job_id = json.loads(done.stdout)["job_id"]

        def flat(text: str) -> str:
            return " ".join(text.split())

        def warned() -> bool:
            return "write to different archives" in flat(run_evalq(env, "status", job_id).stderr)

        wait_for(warned, 60, "the warning in evalq status")
        status = "".join(run_evalq(env, "status", job_id).stderr.split())  # folds mid-path
        assert "host-a.sqlite(w0-" in status and "host-b.sqlite(host-b@" in status
        wait_for(lambda: "write to different archives" in s.pool.logs(), 60, "the worker log")
