"""Confirming a write: a job counts as archived only once it reads back where the reading
commands look, never on the word of the connection that wrote it (a SQLite connection keeps
writing into a file removed under it, which no one else can open)."""

from __future__ import annotations

import sqlite3
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool

from evalq.worker.archive import schema
from evalq.worker.archive.engine import (
    CONNECT_TIMEOUT_S,
    SQLITE_BUSY_TIMEOUT_S,
    file_id,
    opened,
    reopen,
    sqlite_path,
)
from evalq.worker.archive.errors import ArchiveUnavailable
from evalq.worker.archive.place import ArchivePlace
from evalq.worker.archive.record import JobRecord
from evalq.worker.archive.writer import Written


class Unconfirmed(ArchiveUnavailable):
    """A write that did not land where the archive's readers look."""


def unconfirmed(place: ArchivePlace, reason: str) -> Unconfirmed:
    return Unconfirmed(f"the archive at {place.shown} could not be confirmed: {reason}")


def check_folder(place: ArchivePlace) -> None:
    """Before a SQLite write: refuse a folder that is gone, rather than write into a file
    removed with it or create an empty archive in its place, which would hide the loss of
    every job written before; the write waits until someone restores the folder (or makes it)."""
    if place.backend != "sqlite" or not opened(place):
        return  # a first open makes the folder: the archive the settings name, new
    folder = sqlite_path(place.url).parent
    if not folder.is_dir():
        reopen(place)
        raise unconfirmed(
            place,
            f"its folder {folder} is gone; the job is kept in Redis and written once the "
            "folder is back (restore it, or make it to start a new archive there)",
        )


def confirm(place: ArchivePlace, record: JobRecord, written: Written) -> None:
    """The job just written is in the file (or database) a fresh connection opens, as
    written; Unconfirmed (the pool dropped, so the next try opens the file anew) when it is
    not. For SQLite the file at the path must be the one the writer had open (device and
    inode); PostgreSQL is read back too: cheap, and it proves the commit reached the server the
    URL names. The caller keeps an unconfirmed job pending, its keys held, and tries again."""
    reason = _problem(place, record, written)
    if reason is not None:
        reopen(place)
        raise unconfirmed(place, reason)


def _problem(place: ArchivePlace, record: JobRecord, written: Written) -> str | None:
    if place.backend == "sqlite":
        path = sqlite_path(place.url)
        now = file_id(path)
        if now is None:
            return f"{path} was removed while the worker held it open"
        if written.file is not None and now != written.file:
            return f"{path} was replaced while the worker held it open"
    job_id = record.config.job_id
    try:
        with _fresh(place).connect() as connection:
            found = connection.execute(
                sa.select(schema.jobs.c.archived_at).where(schema.jobs.c.job_id == job_id)
            ).first()
            rows = connection.execute(
                sa.select(sa.func.count())
                .select_from(schema.rows)
                .where(schema.rows.c.job_id == job_id)
            ).scalar_one()
    except sa.exc.SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        return f"reading it back failed: {type(cause).__name__}: {_first_line(cause)}"
    if found is None:
        return f"job {job_id} does not read back through a new connection"
    if float(found[0]) < written.archived_at:
        return f"job {job_id} reads back as an older record"
    if float(found[0]) == written.archived_at and int(rows) != len(record.rows):
        return f"job {job_id} reads back with {rows} rows, not {len(record.rows)}"
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


_fresh_engines: dict[str, Engine] = {}


def _fresh(place: ArchivePlace) -> Engine:
    """An engine without a pool (each connect a new connection), for reading back. SQLite's
    opens the file read-write but never creates it (mode=rw)."""
    engine = _fresh_engines.get(place.url)
    if engine is None:
        if place.backend == "sqlite":
            uri = f"file:{quote(str(sqlite_path(place.url)))}?mode=rw"

            def connect() -> sqlite3.Connection:
                return sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_S)

            engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)
        else:
            engine = sa.create_engine(
                place.url,
                poolclass=NullPool,
                connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "evalq"},
            )
        _fresh_engines[place.url] = engine
    return engine
