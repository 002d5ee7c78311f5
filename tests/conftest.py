"""Fixtures that start real processes: a private redis-server, the fake Gemini server over HTTP,
and evalq worker processes, and a scratch Redis database no worker watches (`scratch_url`,
`store`); a real PostgreSQL with an empty database per test (`postgres_url`) and a private
server a test may stop (`private_postgres`). Nothing is mocked but the judge's network peer."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import urllib.request
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from devtools.local import (
    EVALQ,
    ROOT,
    GcsEmulator,
    PostgresServer,
    RedisServer,
    WorkerPool,
    libpq_url,
    postgres_answers,
    start_fake_gemini,
    start_gcs_emulator,
    start_postgres,
    start_redis,
    stop,
)
from evalq.worker.store import Store
from tests.support.scratch import scratch_db, store_on
from tests.support.stack import kill_workers, worker_env

__all__ = ["EVALQ", "ROOT", "FakeGemini", "RedisServer", "WorkerPool", "worker_env"]


def pytest_configure(config: pytest.Config) -> None:
    """Every process the tests start (workers, commands) keeps its default archive in a folder
    of this test process, never in the user's ~/.local/share/evalq (evalq.worker.archive.place)."""
    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="evalq-test-data-")


@pytest.fixture(autouse=True)
def _evalq_environment_kept() -> Iterator[None]:
    """A command run in this process with --archive-url or --redis-url sets EVALQ_* for the
    rest of the process, as it must in a process of its own; after each test they are put
    back (and the cached settings dropped), so no later test meets an archive an earlier one
    dropped."""
    before = {k: v for k, v in os.environ.items() if k.startswith("EVALQ_")}
    yield
    now = {k: v for k, v in os.environ.items() if k.startswith("EVALQ_")}
    if now == before:
        return
    for name in now.keys() - before.keys():
        del os.environ[name]
    os.environ.update(before)
    from evalq.worker.settings import get_settings

    get_settings.cache_clear()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server, so tests may flush and scan it; EVALQ_TEST_REDIS_URL overrides."""
    if url := os.environ.get("EVALQ_TEST_REDIS_URL"):
        yield RedisServer(url)
        return
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    assert server.proc is not None
    stop(server.proc)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, that no worker has served and no other test sees;
    stopped after the test (its files in the test's tmp_path/redis)."""
    server = start_redis(tmp_path / "redis")
    yield server
    if server.proc is not None:
        stop(server.proc)


@dataclass
class FakeGemini:
    url: str

    def _call(self, path: str, body: Any | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def stats(self) -> dict[str, Any]:
        return dict(self._call("/stats"))

    def script(self, rules: list[dict[str, Any]]) -> None:
        self._call("/script", rules)

    def reset(self) -> None:
        self._call("/reset", {})


@pytest.fixture(scope="session")
def fake_gemini() -> Iterator[FakeGemini]:
    server = start_fake_gemini()
    yield FakeGemini(server.url)
    stop(server.proc)


@pytest.fixture
def fake(fake_gemini: FakeGemini) -> Iterator[FakeGemini]:
    """The shared fake server with its script and counters cleared for this test."""
    fake_gemini.script([])
    fake_gemini.reset()
    yield fake_gemini
    fake_gemini.script([])


@pytest.fixture(scope="session")
def workers(
    redis_server: RedisServer, fake_gemini: FakeGemini, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerPool]:
    """One shared worker process for the integration tests."""
    pool = WorkerPool(
        worker_env(redis_server.url, fake_gemini.url), tmp_path_factory.mktemp("worker-logs")
    )
    pool.start()
    yield pool
    kill_workers(pool)


@pytest.fixture(scope="session")
def workers_env(
    redis_server: RedisServer, fake_gemini: FakeGemini, workers: WorkerPool
) -> dict[str, str]:
    """The environment of an `evalq` command that submits to the shared workers."""
    return worker_env(redis_server.url, fake_gemini.url)


@pytest.fixture(scope="session")
def settings(redis_server: RedisServer, fake_gemini: FakeGemini) -> Any:
    from evalq.worker.settings import Settings

    return Settings(redis_url=redis_server.url, gemini_base_url=fake_gemini.url, api_key=None)


@pytest.fixture
def client(settings: Any, workers: WorkerPool) -> Any:
    from evalq.client import Client

    return Client(settings)


@pytest.fixture
def scratch_url(redis_server: RedisServer) -> Iterator[str]:
    """A database of the test Redis that no worker watches, empty before and after the test
    (tests/support/scratch.py)."""
    with scratch_db(redis_server.url) as url:
        yield url


@pytest.fixture
def store(scratch_url: str) -> Store:
    """A Store on the scratch database, for tests that plant jobs by hand (plant_job)."""
    return store_on(scratch_url)


# The machine's own PostgreSQL, when one runs with Debian's defaults (trust for local TCP).
SYSTEM_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """The PostgreSQL the archive tests use: EVALQ_TEST_POSTGRES_URL, else the machine's own
    server, else a private one. Tests only create and drop databases of their own on it
    (postgres_url), so sharing a running server is safe and saves each test process an initdb;
    it is never stopped (private_postgres is for that)."""
    if url := os.environ.get("EVALQ_TEST_POSTGRES_URL"):
        if not postgres_answers(url):
            shown = make_url(url).render_as_string(hide_password=True)
            raise RuntimeError(f"EVALQ_TEST_POSTGRES_URL={shown} does not answer")
        yield PostgresServer(url, port=make_url(url).port or 5432)
        return
    if postgres_answers(SYSTEM_POSTGRES_URL):
        yield PostgresServer(SYSTEM_POSTGRES_URL, port=5432)
        return
    server = start_postgres(tmp_path_factory.mktemp("postgres"))
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database of this test's own on the shared server (its SQLAlchemy URL), so
    tests and test processes never see each other's tables. Made from template0, which no one
    connects to (CREATE DATABASE fails while the template has sessions); dropped WITH (FORCE),
    so a connection the code under test left open can't keep it alive."""
    name = f"evalq_test_{secrets.token_hex(8)}"
    admin = libpq_url(postgres_server.url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    yield make_url(postgres_server.url).set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def private_postgres(tmp_path: Path) -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, for tests that stop and restart it mid-job:
    the shared server is never stopped. Its log is in the test's tmp_path/postgres."""
    server = start_postgres(tmp_path / "postgres")
    yield server
    server.close()


@pytest.fixture(scope="session")
def gcs_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsEmulator]:
    """A private Cloud Storage emulator (gcp-storage-emulator, in memory) with the bucket
    `evalq-batches`, started as Redis is: a real process on a free port, for the session.
    This process's google-cloud-storage clients reach it through STORAGE_EMULATOR_HOST, set
    for the session (the fake server and the workers get it in their environment)."""
    folder = tmp_path_factory.mktemp("gcs")
    emulator = start_gcs_emulator(folder / "gcs-emulator.log", buckets=["evalq-batches"])
    before = os.environ.get("STORAGE_EMULATOR_HOST")
    os.environ["STORAGE_EMULATOR_HOST"] = emulator.url
    yield emulator
    if before is None:
        os.environ.pop("STORAGE_EMULATOR_HOST", None)
    else:
        os.environ["STORAGE_EMULATOR_HOST"] = before
    stop(emulator.proc)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    """Longest first (tests.support.ordering), a module's tests that share a module-scoped
    fixture kept on one process: ordered and marked before xdist reads the marks, and each
    grouped test's id checked for its group once every other hook has run (_group_in_node_id)."""
    from tests.support.ordering import load_durations, longest_first

    units = longest_first(items, lambda i: i.nodeid, _shared_module, load_durations())
    for unit in units:
        if len(unit.members) > 1:
            for index in unit.members:
                items[index].add_marker(pytest.mark.xdist_group(unit.name))
    items[:] = [items[index] for unit in units for index in unit.members]
    yield
    if getattr(config.option, "loadgroup", False):  # set on xdist's worker processes only
        for item in items:
            _group_in_node_id(item)


def _group_in_node_id(item: pytest.Item) -> None:
    """xdist's scheduler reads a test's group from its id (``ID@GROUP``), which its worker hook
    writes to ``item._nodeid``; pytest 9.2 keeps the id in ``item._id`` and ignores that field
    (pytest-xdist's issue #1386), so no group reached the scheduler and each process that drew a
    test of a shared module built the module's fixture again. Where xdist's suffix did not take,
    it is written here, the way xdist spells it."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    if not names:
        return
    suffix = "@" + "_".join(sorted(names))
    node_id = getattr(item, "_id", None)
    if item.nodeid.endswith(suffix) or node_id is None:
        return
    item._id = type(node_id).parse(item.nodeid + suffix)


# The group of the unit tests that need the session's worker pool (`workers`).
UNIT_WORKER_POOL = "tests/unit/(workers)"


def _shared_module(item: pytest.Item) -> str | None:
    """The module whose fixture of module scope (or wider, short of the session) this test
    uses: its tests run on one process. The few unit tests that need the worker pool run on one
    process too, so `./scripts/test --fast` starts one pool, not one per test process."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for defs in info.name2fixturedefs.values():
        if defs and defs[-1].scope in ("module", "package", "class"):
            return item.nodeid.split("::", 1)[0]
    if item.nodeid.startswith("tests/unit/") and "workers" in info.name2fixturedefs:
        return UNIT_WORKER_POOL
    return None
