"""Flower's view of a job: every task a worker takes shows up as received and then succeeded,
read the way Flower reads them (Celery's event receiver), while a gevent worker sends its task
events in batches ("task.multi" messages): far fewer publishes than events. Real worker, real
Redis, the fake server."""

from __future__ import annotations

import io
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from redis import Redis

from tests.conftest import FakeGemini
from tests.support.datasets import write_rows
from worker.local import RedisServer

pytestmark = pytest.mark.integration

ROWS, QUESTIONS = 4, 6


def dataset(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), "blue").save(buf, format="PNG")
    (folder / "blue.png").write_bytes(buf.getvalue())
    tag = uuid.uuid4().hex[:8]
    rows = [
        {
            "id": f"e{i}",
            "prompt": "a blue square",
            "image": "blue.png",
            "questions": [
                {"question": f"Is it blue? ({tag} {i} {q})", "answer": "yes"}
                for q in range(QUESTIONS)
            ],
        }
        for i in range(ROWS)
    ]
    return write_rows(folder / "data.jsonl", rows)


@contextmanager
def flower_view(redis_url: str) -> Iterator[list[dict[str, Any]]]:
    """Every task event on the broker while the block runs, as Celery's receiver hands them
    to Flower (a "task.multi" message arrives as its events, one by one)."""
    from celery import Celery

    app = Celery("flower-view", broker=redis_url)
    redis = Redis.from_url(redis_url)
    patterns = redis.pubsub_numpat()
    events: list[dict[str, Any]] = []
    with app.connection_for_read() as conn:
        receiver = app.events.Receiver(conn, handlers={"*": events.append})
        reader = threading.Thread(target=receiver.capture, kwargs={"wakeup": False}, daemon=True)
        reader.start()
        # Listening once its pattern subscription is in (kombu subscribes on its first poll).
        wait_for(
            lambda: redis.pubsub_numpat() > patterns,
            30,
            "the event receiver's subscription",
        )
        try:
            yield events
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
    data = dataset(tmp_path / "data")
    redis = redis_server.client()
    with flower_view(redis_server.url) as events:
        redis.config_resetstat()
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
        publishes = int(redis.info("commandstats").get("cmdstat_publish", {}).get("calls", 0))

    names = sorted(mine().values())
    assert names.count("evalq.run_unit") == ROWS * QUESTIONS
    assert names.count("evalq.prepare_row") == names.count("evalq.aggregate_row") == ROWS
    # Three events a task (received, started, succeeded) would be 3 publishes a task unbatched.
    assert publishes < tasks, f"{publishes} publishes for {3 * tasks} task events"
