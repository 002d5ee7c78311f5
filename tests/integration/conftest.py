"""A test marked `both_pools` runs once per worker pool: the same test, unchanged, against gevent
workers and against thread workers. The pool reaches the workers the way it reaches a deployed
one, through EVALQ_WORKER_POOL in their environment (devtools.local copies this process's).

The mark goes only where the pool changes the behaviour under test: how many messages a worker
holds reserved (gevent prefetches four per slot, threads one: evalq.worker.celery_app.app), and how
its consumer meets a Redis that stops, restarts or freezes (gevent's blocking loop reads with socket
timeouts; the threads pool's event loop has none and relies on kombu's health checks). Every
other test runs once, in the pool the environment names, else evalq's default (gevent): a
second run would repeat the same code for no new property."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import FakeGemini
from tests.support.held import hold, release

POOLS = ("gevent", "threads")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("both_pools") is not None:
        metafunc.parametrize("worker_pool", POOLS, indirect=True)


@pytest.fixture(autouse=True)
def worker_pool(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The pool the workers a test starts use: the parameter of a `both_pools` test, else
    whatever the environment (or evalq's default) says."""
    pool = getattr(request, "param", None)
    if pool is not None:
        monkeypatch.setenv("EVALQ_WORKER_POOL", pool)
    yield pool or ""


@pytest.fixture
def held(fake: FakeGemini) -> Iterator[FakeGemini]:
    """The fake server holds every call open until the test releases it or ends."""
    hold(fake)
    try:
        yield fake
    finally:
        release(fake)
