"""A write counts only where readers look: a SQLite archive whose folder is removed under a
live worker keeps the next job pending in Redis (its keys held, `evalq status` saying why),
never written into the removed file; once the folder is back the job is written into a new
file there, and later jobs archive there too, with no worker restarted."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from redis import Redis

from devtools.local import wait_for
from evalq.worker.archive.archive import Archive
from evalq.worker.store import keys
from tests.integration.archive.test_archive_store import record
from tests.support.archive import forget_in_redis, job_key_names, wait_archived
from tests.support.cli import run_evalq
from tests.support.stack import stack

pytestmark = pytest.mark.integration


def finished_job(env: dict[str, str], dataset: Path) -> str:
    done = run_evalq(env, "run", "gecko-image", str(dataset), "--wait", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "finished"
    return str(json.loads(done.stdout)["job_id"])


def read_from_the_archive(env: dict[str, str], redis: Redis, job_id: str) -> None:
    """As a week later: the job's keys expired, `evalq status` and `evalq jobs` read it from
    the archive."""
    assert forget_in_redis(redis, job_id) > 0
    status = run_evalq(env, "status", job_id)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "read from the archive at sqlite:///" in status.stderr
    listed = run_evalq(env, "jobs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert job_id in listed.stdout


def test_a_removed_sqlite_folder_keeps_the_job_pending_until_it_is_back(tmp_path: Path) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "data")
    folder = tmp_path / "archive"
    folder.mkdir()  # a folder that is not there is refused, not made (but the default one)
    url = f"sqlite:///{folder / 'archive.sqlite'}"
    with stack(
        tmp_path / "stack",
        EVALQ_ARCHIVE_URL=url,
        EVALQ_ARCHIVE_RETRY_S="1",
        EVALQ_ARCHIVE_RETRY_MAX_S="2",
        EVALQ_WATCHDOG_INTERVAL_S="1",
    ) as s:
        env, redis = s.env(), s.redis_client()
        first = finished_job(env, dataset)
        wait_archived(redis, first)

        shutil.rmtree(folder)  # under the live worker, its connection's file open
        second = finished_job(env, dataset)

        def failed_twice() -> bool:
            return int(redis.hget(keys.job(second), keys.ARCHIVE_TRIES) or 0) >= 2

        wait_for(failed_twice, 120, "two failed archive writes")
        assert redis.zscore(keys.ARCHIVE_PENDING, second) is not None
        assert not redis.hget(keys.job(second), keys.ARCHIVED_AT)
        names = job_key_names(redis, second)
        assert len(names) > 18  # held, no expiry: the step after the first failed try
        wait_for(lambda: all(redis.ttl(n) == -1 for n in names), 60, "the job's keys held")
        status = run_evalq(env, "status", second)
        assert status.returncode == 0, status.stderr
        notes = [line for line in status.stderr.splitlines() if "archive: write pending" in line]
        assert len(notes) == 1, status.stderr
        gone = f"the archive at {url} could not be confirmed: its folder {folder} is gone"
        assert gone in notes[0]
        assert "next try" in notes[0]
        assert not folder.exists()  # not made again behind anyone's back

        folder.mkdir()
        wait_archived(redis, second, timeout_s=120)
        assert (folder / "archive.sqlite").is_file()
        read_from_the_archive(env, redis, second)

        third = finished_job(env, dataset)  # the same worker, never restarted
        wait_archived(redis, third)
        read_from_the_archive(env, redis, third)


def test_a_sqlite_file_removed_under_an_open_archive_is_made_anew_and_written_in_one_try(
    tmp_path: Path,
) -> None:
    path = tmp_path / "archive" / "archive.sqlite"
    path.parent.mkdir()
    archive = Archive.at(f"sqlite:///{path}")
    assert archive is not None
    archive.write(record("aaaaaaaaaaa1"))  # its pool now holds a connection to the file
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    archive.write(record("aaaaaaaaaaa2"))  # into a new file at the path, its schema made
    assert archive.job("aaaaaaaaaaa2") is not None
    assert archive.job("aaaaaaaaaaa1") is None  # went with the removed file


def test_a_write_that_does_not_read_back_as_written_is_unconfirmed(tmp_path: Path) -> None:
    """What a write races with: the file removed or replaced between the write and its
    check, or another record read back."""
    from evalq.worker.archive.confirm import Unconfirmed, confirm
    from evalq.worker.archive.writer import write_record

    path = tmp_path / "archive.sqlite"
    archive = Archive.at(f"sqlite:///{path}")
    assert archive is not None
    job = record("aaaaaaaaaaa1")
    written = write_record(archive.engine, job)
    confirm(archive.place, job, written)  # as written: confirmed
    shown = f"the archive at {archive.place.shown} could not be confirmed: "
    with pytest.raises(Unconfirmed, match=re.escape(shown + f"{path} was replaced")):
        confirm(archive.place, job, replace(written, file=(0, 0)))
    with pytest.raises(Unconfirmed, match="reads back as an older record"):
        confirm(archive.place, job, replace(written, archived_at=written.archived_at + 1))
    with pytest.raises(Unconfirmed, match="does not read back"):
        confirm(archive.place, record("aaaaaaaaaaa2"), written)
    path.unlink()
    with pytest.raises(Unconfirmed, match=re.escape(f"{path} was removed")):
        confirm(archive.place, job, written)
