"""Fixtures that start real processes: a private redis-server, the fake Gemini server over HTTP,
and evalq worker processes, and a scratch Redis database no worker watches (`scratch_url`,
`store`). Nothing is mocked but the judge's network peer."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from devtools.local import (
    EVALQ,
    ROOT,
    RedisServer,
    WorkerPool,
    start_fake_gemini,
    start_redis,
    stop,
)
from tests.support.scratch import scratch_db, store_on
from tests.support.stack import kill_workers, worker_env
from worker.store import Store

__all__ = ["EVALQ", "ROOT", "FakeGemini", "RedisServer", "WorkerPool", "worker_env"]


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
def settings(redis_server: RedisServer, fake_gemini: FakeGemini) -> Any:
    from worker.settings import Settings

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
