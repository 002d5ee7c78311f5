"""Opening the archive: one SQLAlchemy engine per URL and process, its schema brought to the
newest migration on first use, and every database error turned into one clear line."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from evalq.core.secret_urls import scrub
from evalq.worker.archive.errors import ArchiveSchemaTooNew, ArchiveUnavailable
from evalq.worker.archive.place import ArchivePlace, missing_folder

if TYPE_CHECKING:
    from alembic.config import Config

# The newest revision in migrations/versions (a test checks it is Alembic's head): an archive
# already there is checked with one query, and Alembic is loaded only to migrate.
HEAD = "0002"
VERSION_TABLE = "archive_alembic_version"  # not alembic_version: a team's own may be there
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
CONNECT_TIMEOUT_S = 5
SQLITE_BUSY_TIMEOUT_S = 30  # several workers of one host write one file, one at a time
_SCHEMA_LOCK = 7_431_845_021  # pg_advisory_xact_lock key: one migrating process at a time


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    """Alembic's own reading of the newest revision (HEAD must equal it)."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


@contextmanager
def archive_errors(place: ArchivePlace) -> Iterator[None]:
    """Database errors as ArchiveUnavailable naming the archive (never its password)."""
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        first = scrub(first, place.url)  # a driver's message may quote a part of the URL
        raise ArchiveUnavailable(
            f"the archive at {place.shown} could not be used: {type(cause).__name__}: {first}"
        ) from exc


def open_archive(place: ArchivePlace) -> Engine:
    """The engine for `place`, its schema checked (and created or upgraded) once per process,
    and again for SQLite when the file at its path is no longer the one checked (removed, or
    replaced by a restored copy): the pool then opens the new file (_sqlite_same_file). A
    SQLite folder that is not there is refused before the first open makes it, unless it is
    the default place (evalq.worker.archive.place.missing_folder)."""
    if not opened(place) and (missing := missing_folder(place)):
        raise ArchiveUnavailable(missing)
    engine = _engine(place.url)
    with _checked_lock:
        now = _file_of(place)
        if place.url not in _checked or _checked[place.url] != now:
            with archive_errors(place):
                ensure_schema(engine, place)
            _checked[place.url] = _file_of(place)
    return engine


def _file_of(place: ArchivePlace) -> tuple[int, int] | None:
    return file_id(sqlite_path(place.url)) if place.backend == "sqlite" else None


# Each archive whose schema this process checked, with (SQLite) the file it checked.
_checked: dict[str, tuple[int, int] | None] = {}
_checked_lock = threading.Lock()


def reopen(place: ArchivePlace) -> None:
    """Drop every pooled connection of `place` and check its schema again on the next use:
    after a write that could not be confirmed (evalq.worker.archive.confirm), whatever the pool
    holds may be a file that is no longer at the archive's path."""
    with _checked_lock:
        _checked.pop(place.url, None)
    _engine(place.url).dispose()


_opened: set[str] = set()  # SQLite archives whose folder this process made, or found


def opened(place: ArchivePlace) -> bool:
    """Whether this process has opened the archive before (for SQLite: made its folder)."""
    return place.url in _opened


FILE_ID = "evalq_file"  # a SQLite connection's info: (device, inode) of the file it opened


def file_id(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at `path` now; None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


@cache
def _engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # The folder is made once, when this process first opens the archive: a folder that
        # goes away later is not made again (evalq.worker.archive.confirm says why).
        path = sqlite_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        _opened.add(url)
        engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
        sa.event.listen(engine, "connect", partial(_sqlite_connected, path))
        sa.event.listen(engine, "checkout", partial(_sqlite_same_file, path))
        sa.event.listen(engine, "begin", _sqlite_begin_immediate)
        return engine
    return sa.create_engine(
        url,
        pool_pre_ping=True,
        pool_size=2,
        max_overflow=4,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "evalq"},
    )


def _sqlite_connected(path: Path, dbapi_connection: Any, record: Any) -> None:
    _sqlite_pragmas(dbapi_connection)
    record.info[FILE_ID] = file_id(path)  # the pragmas wrote the file's header: it is there


def _sqlite_same_file(path: Path, _dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A pooled connection whose file is no longer the one at the path (removed, replaced,
    its folder gone) is dropped, never used: it would read and write a file no one else
    sees. SQLAlchemy then opens a fresh one, which fails if the folder is gone."""
    opened = record.info.get(FILE_ID)
    if opened is not None and file_id(path) != opened:
        raise sa.exc.DisconnectionError(f"{path} is no longer the file this connection opened")


def _sqlite_pragmas(dbapi_connection: Any) -> None:
    # WAL: readers (`evalq jobs`) never block the worker writing a job, nor it them. The
    # sqlite3 module's own transaction handling is off (isolation_level None): SQLAlchemy's
    # "begin" event below issues BEGIN, IMMEDIATE for a writer, so two writers queue on the
    # file's lock at the start instead of failing half way with "database is locked".
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin_immediate(connection: Connection) -> None:
    writes = connection.get_execution_options().get(WRITES, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


WRITES = "evalq_writes"  # execution option of a connection that will write (SQLite: IMMEDIATE)


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A transaction that writes, committed at the end (rolled back on an error)."""
    with engine.connect() as opened:
        connection = opened.execution_options(**{WRITES: True})
        with connection.begin():
            yield connection


def ensure_schema(engine: Engine, place: ArchivePlace) -> None:
    """Bring the archive to the newest revision, or refuse one newer than this code (an older
    evalq would drop what it does not know). A fresh archive is created at the newest revision;
    an older one is upgraded in place, under a lock, by whichever process opens it first."""
    if schema_revision(engine) == HEAD:
        return
    from alembic import command
    from alembic.script import ScriptDirectory

    config = alembic_config()
    known = {revision.revision for revision in ScriptDirectory.from_config(config).walk_revisions()}
    with writing(engine) as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
        current = _revision(connection)  # again, under the lock: another may have migrated
        if current == HEAD:
            return
        if current is not None and current not in known:
            raise ArchiveSchemaTooNew(
                f"the archive at {place.shown} has schema revision {current}, newer than this "
                f"evalq knows (its newest is {HEAD}): upgrade evalq on this host, or point "
                "EVALQ_ARCHIVE_URL at another archive"
            )
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def schema_revision(engine: Engine) -> str | None:
    """The archive's revision as recorded in it (None: no evalq schema yet)."""
    with engine.connect() as connection:
        return _revision(connection)


def _revision(connection: Connection) -> str | None:
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    found = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).first()
    return None if found is None else str(found[0])
