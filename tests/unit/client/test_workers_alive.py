"""Saying that no worker is alive (evalq.client.workers_alive): not before the grace, once,
again when a worker appears; Redis asked at most every CHECK_EVERY_S; the Redis named and the
command that starts a worker, with no password."""

from __future__ import annotations

from typing import Any

from evalq.client.workers_alive import WorkerWatch, shown_redis_url, start_command
from evalq.worker.settings import Settings


class FakeStore:
    def __init__(self) -> None:
        self.alive = 0
        self.asked = 0

    def live_workers(self) -> int:
        self.asked += 1
        return self.alive

    def address(self) -> str:
        return "10.0.0.5:6380"


def watch(store: FakeStore, url: str, now: list[float]) -> WorkerWatch:
    settings = Settings(redis_url=url)
    return WorkerWatch(store, settings, grace_s=2.0, every_s=1.0, clock=lambda: now[0])  # type: ignore[arg-type]


def test_said_after_the_grace_once_and_again_when_a_worker_appears() -> None:
    store, now = FakeStore(), [100.0]
    w = watch(store, "redis://:pw@10.0.0.5:6380/2", now)
    seen: list[Any] = []
    for t in (100.0, 101.0, 101.9, 102.0, 102.5, 103.0, 104.0):
        now[0] = t
        seen.append(w.check())
    assert seen[:3] == [None, None, None]  # within the grace: nothing said, nothing asked
    assert store.asked == 3  # at 102, 103 and 104: not at 102.5
    alive, message = seen[3]
    assert alive == 0
    assert message == (
        "no worker is alive on Redis 10.0.0.5:6380: nothing runs the job until one starts "
        "there; start one with `EVALQ_REDIS_URL=redis://:<password>@10.0.0.5:6380/2 evalq worker`"
    )
    assert seen[4:] == [None, None, None]  # once
    store.alive = 2
    now[0] = 104.5
    assert w.check() is None  # asked at most every second
    now[0] = 105.0
    assert w.check() == (2, "2 workers are alive on Redis 10.0.0.5:6380 now: the job goes on")
    store.alive = 0
    now[0] = 106.0
    assert w.check() is not None  # gone again: said again


def test_a_worker_alive_from_the_start_is_never_mentioned() -> None:
    store, now = FakeStore(), [0.0]
    store.alive = 1
    w = watch(store, "redis://127.0.0.1:6379/0", now)
    for t in range(10):
        now[0] = float(t)
        assert w.check() is None


def test_the_default_redis_needs_no_url_and_a_password_is_never_shown() -> None:
    assert start_command(Settings(redis_url="redis://127.0.0.1:6379/0")) == "evalq worker"
    assert shown_redis_url("redis://evalq-producer:s3cret@h:6379/0") == (
        "redis://evalq-producer:<password>@h:6379/0"
    )
    assert "s3cret" not in shown_redis_url("rediss://h:6379/0?password=s3cret")
    assert shown_redis_url("redis://h:6379/1") == "redis://h:6379/1"
