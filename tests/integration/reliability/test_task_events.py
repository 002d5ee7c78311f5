"""Flower's view of a job: every task a worker takes shows up as received and then succeeded,
read the way Flower reads them (Celery's event receiver), while a gevent worker sends its task
events in batches ("task.multi" messages): far fewer publishes than events. Real worker, real
Redis, the fake server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from devtools.local import RedisServer
from tests.conftest import FakeGemini
from tests.support.datasets import uncached_gecko_rows

pytestmark = pytest.mark.integration

ROWS, QUESTIONS = 4, 6


@dataclass
class View:
    events: list[dict[str, Any]] = field(default_factory=list)  # as Flower gets them
    messages: list[int] = field(default_factory=list)  # task events in each message received


@contextmanager
def flower_view(redis_url: str) -> Iterator[View]:
    """Every event on the broker while the block runs, as Celery's receiver hands them to
    Flower (a "task.multi" message arrives as its events, one by one), and how many task
    events each message carried."""
    from celery import Celery

    app = Celery("flower-view", broker=redis_url)
    redis = Redis.from_url(redis_url)
    patterns = redis.pubsub_numpat()
    view = View()
    with app.connection_for_read() as conn:
        receiver = app.events.Receiver(conn, handlers={"*": view.events.append})
        receive = receiver._receive

        def counted(body: Any, message: Any) -> Any:
            batch = body if isinstance(body, list) else [body]
            view.messages.append(sum(str(e.get("type", "")).startswith("task-") for e in batch))
            return receive(body, message)

        receiver._receive = counted
        reader = threading.Thread(target=receiver.capture, kwargs={"wakeup": False}, daemon=True)
        reader.start()
        # Listening once its pattern subscription is in (kombu subscribes on its first poll).
        wait_for(
            lambda: redis.pubsub_numpat() > patterns,
            30,
            "the event receiver's subscription",
        )
        try:
            yield view
        finally:
            receiver.should_stop = True
            reader.join(timeout=10)


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_every_task_shows_received_and_succeeded_and_events_go_in_batches(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = uncached_gecko_rows(tmp_path / "data", ROWS, QUESTIONS, "blue")
    with flower_view(redis_server.url) as view:
        events = view.events
        job = client.submit("gecko-image", data).job_id
        assert client.wait(job, timeout_s=120).status == "finished"

        def mine() -> dict[str, str]:
            return {
                e["uuid"]: e["name"]
                for e in list(events)
                if e["type"] == "task-received" and job in str(e.get("args", ""))
            }

        tasks = ROWS * (QUESTIONS + 2)  # prepare_row, the units, aggregate_row
        wait_for(lambda: len(mine()) == tasks, 30, f"received events for {tasks} tasks")

        def done() -> set[str]:
            return {e["uuid"] for e in list(events) if e["type"] == "task-succeeded"}

        wait_for(lambda: set(mine()) <= done(), 30, "a succeeded event for each")

    names = sorted(mine().values())
    assert names.count("evalq.run_unit") == ROWS * QUESTIONS
    assert names.count("evalq.prepare_row") == names.count("evalq.aggregate_row") == ROWS
    # Unbatched, every message carries one task event; batched, several on average.
    carrying = [n for n in view.messages if n]
    assert sum(carrying) >= 3 * tasks
    assert 2 * len(carrying) <= sum(carrying), (
        f"{len(carrying)} messages for {sum(carrying)} task events"
    )
