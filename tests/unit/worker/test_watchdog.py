"""The watchdog's decisions against a real Redis, with the sender recorded instead of sent."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from evalq.core.models import JobConfig, MediaRef, RowInput
from tests.conftest import RedisServer
from worker.settings import Settings
from worker.store import Store
from worker.watchdog import Watchdog


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[Store]:
    """Database 1 of the test Redis: no worker consumes its queues or sweeps its jobs."""
    url = redis_server.url.rsplit("/", 1)[0] + "/1"
    store = Store.from_settings(Settings(redis_url=url))
    store.r.flushdb()
    yield store
    store.r.flushdb()


def make_job(store: Store, rows: int) -> str:
    job_id = f"wd-{uuid.uuid4().hex[:8]}"
    config = JobConfig(
        job_id=job_id,
        metric="gecko-image",
        judge_model="m",
        dataset="d",
        rows_total=rows,
        created_at=time.time(),
    )
    ref = MediaRef(kind="path", value="/x.png")
    store.create_job(
        config,
        [RowInput(id=f"r{i}", line=i, prompt="p", media={"image": ref}) for i in range(rows)],
    )
    return job_id


def test_a_row_given_a_field_it_does_not_have_is_refused() -> None:
    """`RowInput(image=...)` once stored rows without media, silently (the field is `media`)."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="image"):
        RowInput(id="r", line=1, prompt="p", image=MediaRef(kind="path", value="/x.png"))  # type: ignore[call-arg]


def test_stalled_and_lost_rows_are_redriven(store: Store) -> None:
    job = make_job(store, 4)
    sent: list[tuple[str, str]] = []
    dog = Watchdog(
        store, lambda j, r: sent.append((j, r)), interval_s=1, stall_timeout_s=60, name="t"
    )
    now = time.time()
    store.touch(job, "0", at=now - 120)  # started, then silence: stalled
    store.touch(job, "1", at=now - 5)  # alive
    store.touch(job, "2", at=now + 300)  # waiting on a countdown
    # line 3 never started.
    assert dog.sweep(now) == {job: 1}
    assert sent == [(job, "0")]  # rows are named by line
    sent.clear()
    # Queues empty on two sweeps in a row: line 3's message is gone, drive it too.
    assert dog.sweep(now) == {job: 1}
    assert sent == [(job, "3")]
    assert int(store.job_hash(job)["redriven"]) == 2


def test_lost_rows_wait_while_queues_hold_messages(store: Store) -> None:
    make_job(store, 1)
    store.r.rpush("evalq.rows", "pending-message")
    sent: list[tuple[str, str]] = []
    dog = Watchdog(
        store, lambda j, r: sent.append((j, r)), interval_s=1, stall_timeout_s=60, name="t"
    )
    dog.sweep()
    dog.sweep()
    assert sent == []


def test_job_whose_last_row_landed_without_summary_is_finalised(store: Store) -> None:
    from evalq.core.models import RowResult

    job = make_job(store, 1)
    store.finish_row(job, RowResult(id="r0", line=0, prompt="p", status="scored", score=1.0))
    dog = Watchdog(store, lambda j, r: None, interval_s=1, stall_timeout_s=60, name="t")
    dog.sweep()
    assert store.status(job) == "finished"
    assert store.summary_json(job) is not None
    assert job not in store.active_jobs()
