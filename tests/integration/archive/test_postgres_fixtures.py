"""The PostgreSQL fixtures the archive tests stand on: a real server, an empty database of
each test's own, and a private server a test may take away and bring back."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from devtools.local import PostgresServer, libpq_url, postgres_answers

# The databases earlier tests of this process got, to check the next one gets another.
_SEEN: list[str] = []


def _tables(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


def _databases(url: str) -> set[str]:
    with psycopg.connect(libpq_url(url)) as conn:
        return {row[0] for row in conn.execute("SELECT datname FROM pg_database")}


def test_postgres_url_is_an_empty_database_a_test_can_write(postgres_url: str) -> None:
    assert (make_url(postgres_url).database or "").startswith("evalq_test_")
    assert _tables(postgres_url) == []
    engine = create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE runs (id integer PRIMARY KEY, name text NOT NULL)"))
            conn.execute(text("INSERT INTO runs VALUES (1, 'first')"))
        with engine.connect() as conn:
            assert conn.execute(text("SELECT name FROM runs")).scalar_one() == "first"
    finally:
        engine.dispose()
    assert _tables(postgres_url) == ["runs"]


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_gets_a_database_of_its_own(postgres_url: str, turn: int) -> None:
    name = make_url(postgres_url).database
    assert name is not None
    # Nothing another test made, whichever of the two runs first.
    assert _tables(postgres_url) == []
    engine = create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"CREATE TABLE made_by_turn_{turn} (id integer)"))
    finally:
        engine.dispose()
    databases = _databases(postgres_url)
    assert name in databases
    # The earlier tests of this process had other databases, and theirs are dropped.
    assert name not in _SEEN
    assert not databases & set(_SEEN)
    _SEEN.append(name)


def test_a_server_given_by_url_is_never_stopped_or_restarted(
    postgres_server: PostgresServer,
) -> None:
    shared = PostgresServer(postgres_server.url, port=postgres_server.port)
    with pytest.raises(RuntimeError, match="start_postgres did not start it"):
        shared.stop()
    with pytest.raises(RuntimeError, match="start_postgres did not start it"):
        shared.start()
    assert postgres_answers(postgres_server.url)


def test_private_postgres_stops_and_comes_back_with_its_data(
    private_postgres: PostgresServer,
) -> None:
    url, port = private_postgres.url, private_postgres.port
    assert private_postgres.data_dir is not None
    assert port != 5432
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE kept (id integer PRIMARY KEY, note text)"))
            conn.execute(text("INSERT INTO kept VALUES (1, 'before the stop')"))
    finally:
        engine.dispose()
    held = psycopg.connect(libpq_url(url), autocommit=True)

    private_postgres.stop()

    assert private_postgres.proc is not None
    assert private_postgres.proc.poll() is not None
    assert not postgres_answers(url)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(libpq_url(url), connect_timeout=2)
    # A connection open across the stop was cut off, as a worker's would be mid-job.
    with pytest.raises(psycopg.OperationalError):
        held.execute("SELECT 1")
    held.close()

    private_postgres.start()

    assert private_postgres.port == port
    assert postgres_answers(url)
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT id, note FROM kept")).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in rows] == [(1, "before the stop")]
