"""The reliability tests run once per worker pool: the same test, unchanged, against gevent
workers and against thread workers. The pool reaches the workers the way it reaches a deployed
one, through EVALQ_WORKER_POOL in their environment (devtools.local copies this process's)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import FakeGemini
from tests.support.held import hold, release

POOLS = ("gevent", "threads")
# The modules whose every test runs in each pool: killed workers, quotas, Redis restarts and
# outages, the many-calls-in-flight check.
BOTH_POOLS = {"test_reliability", "test_redis_outage"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rsplit(".", 1)[-1] in BOTH_POOLS:
        metafunc.parametrize("worker_pool", POOLS, indirect=True)


@pytest.fixture(autouse=True)
def worker_pool(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The pool the workers a test starts use: the parameter where a module runs in both, else
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
