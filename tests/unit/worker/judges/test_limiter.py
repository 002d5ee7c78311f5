"""The global rate limiter's arithmetic, against a real Redis (waits are computed by Redis,
from Redis time; nothing here measures wall-clock time)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from evalq.core.errors import LimiterBusy, policy_of
from evalq.worker.judges.limiter import Limit, RateLimiter
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.conftest import RedisServer


@pytest.fixture
def r(redis_server: RedisServer) -> Iterator[Store]:
    yield Store.from_settings(Settings(redis_url=redis_server.url))


def model() -> str:
    return f"m-{uuid.uuid4().hex[:8]}"


def reserve_all(limiter: RateLimiter, name: str, n: int, tokens: int = 1) -> list[float]:
    """Reserve n slots without sleeping (max wait large, sleep patched out)."""
    waits = []
    for _ in range(n):
        waits.append(limiter.acquire(name, tokens))
    return waits


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evalq.worker.judges.limiter.time.sleep", lambda _s: None)


def test_requests_are_spaced_evenly(r: Any) -> None:
    name = model()
    limiter = RateLimiter(r, {name: Limit(rpm=600)}, max_wait_s=60)
    waits = reserve_all(limiter, name, 5)
    assert waits[0] == pytest.approx(0, abs=0.02)
    for i, wait in enumerate(waits):
        assert wait == pytest.approx(0.1 * i, abs=0.03)  # 600 rpm: one slot every 100 ms


def test_far_slot_is_busy_and_reserves_nothing(r: Any) -> None:
    name = model()
    limiter = RateLimiter(r, {name: Limit(rpm=60)}, max_wait_s=1.5)
    reserve_all(limiter, name, 2)  # slots at 0 s and 1 s
    with pytest.raises(LimiterBusy) as info:
        limiter.acquire(name, 1)
    assert info.value.retry_after_s == pytest.approx(2.0, abs=0.05)
    # One of evalq's errors: the task reschedules it like a 429, and it cost no request.
    assert (policy_of(info.value), info.value.cost.attempts) == ("countdown", 0)
    with pytest.raises(LimiterBusy):  # still 2 s away: the refused call took no slot
        limiter.acquire(name, 1)


def test_park_after_429_holds_everyone(r: Any) -> None:
    name = model()
    limiter = RateLimiter(r, {name: Limit(rpm=6000)}, max_wait_s=60)
    limiter.park(name, 5.0)
    assert limiter.acquire(name, 1) == pytest.approx(5.0, abs=0.05)


def test_tokens_per_minute_and_correction(r: Any) -> None:
    name = model()
    limiter = RateLimiter(r, {name: Limit(tpm=60_000, token_burst_s=0)}, max_wait_s=60)
    assert limiter.acquire(name, 1000) == pytest.approx(0, abs=0.02)  # 1000 tokens = 1 s of budget
    assert limiter.acquire(name, 1000) == pytest.approx(1.0, abs=0.03)
    limiter.correct(name, estimated=1000, actual=3000)  # the last call really used 3000
    assert limiter.acquire(name, 1) == pytest.approx(4.0, abs=0.05)


def test_unlisted_model_is_unlimited_unless_default(r: Any) -> None:
    assert RateLimiter(r, {}).acquire(model(), 10**9) == 0.0
    name = model()
    limiter = RateLimiter(r, {"*": Limit(rpm=60)}, max_wait_s=60)
    assert reserve_all(limiter, name, 2)[1] == pytest.approx(1.0, abs=0.03)
