"""What Celery's machinery costs Redis per task stays bounded: a worker keeps one result backend
(one connection pool) per process, not one per task (or per gevent greenlet), and subscribes to
no unit's result channel. A real worker (the environment's pool), real Redis, the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devtools.local import RedisServer
from tests.conftest import FakeGemini
from tests.support.datasets import uncached_gecko_rows

pytestmark = pytest.mark.integration

ROWS, QUESTIONS = 6, 8


def command_calls(stats: dict[str, Any], command: str) -> int:
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def test_tasks_reuse_connections_and_subscribe_to_nothing(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = uncached_gecko_rows(tmp_path / "data", ROWS, QUESTIONS, "red")
    redis = redis_server.client()
    redis.config_resetstat()
    opened_before = int(redis.info("stats")["total_connections_received"])

    status = client.wait(client.submit("gecko-image", data).job_id, timeout_s=120)

    assert (status.status, status.rows_done, status.unit_tasks) == ("finished", ROWS, 48)
    tasks = ROWS * (QUESTIONS + 2)  # prepare_row, a run_unit per question, aggregate_row
    commands = redis.info("commandstats")
    assert command_calls(commands, "subscribe") == command_calls(commands, "unsubscribe") == 0
    opened = int(redis.info("stats")["total_connections_received"]) - opened_before
    # Pools fill up to the worker's concurrency at most, never one connection per task.
    assert opened < tasks // 2, f"{opened} connections opened for {tasks} tasks"
