"""In-process task runners (tests/support/task_runner.py) on a database of the session's Redis
chosen by each test file, so files that count what reaches Redis don't share one: a file names
its database in RUNNER_DB, and the settings its `runner` gets in RUNNER_ENV."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import FakeGemini, RedisServer
from tests.support.scratch import db_url
from tests.support.task_runner import TaskRunner

RunnerOn = Callable[..., TaskRunner]


@pytest.fixture
def runner_on(redis_server: RedisServer, fake: FakeGemini, tmp_path: Path) -> Iterator[RunnerOn]:
    """runner_on(db, **env): a runner on that database with these EVALQ_ settings."""
    runners: list[TaskRunner] = []

    def make(db: int, **env: str) -> TaskRunner:
        runner = TaskRunner(db_url(redis_server.url, db), fake.url, tmp_path, **env)
        runners.append(runner.__enter__())
        return runner

    yield make
    for runner in reversed(runners):
        runner.__exit__(None, None, None)


@pytest.fixture
def runner(request: pytest.FixtureRequest, runner_on: RunnerOn) -> TaskRunner:
    """A runner on the test file's RUNNER_DB with the EVALQ_ settings of its RUNNER_ENV (none
    if it has none)."""
    return runner_on(request.module.RUNNER_DB, **getattr(request.module, "RUNNER_ENV", {}))
