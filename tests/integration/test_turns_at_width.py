"""Turns at the width people run: one worker as `evalq worker` starts it (gevent, 200 slots),
whose share of the window its pace sizes from the wait it measures (worker.pace). A window of
slots (1.5 x 200 rows) put a large job's first 300 rows, all their calls, ahead of any job
submitted after it; these check that what is queued ahead is a moment of work instead: a small
job and a high-priority one finish while most of a large job still waits in line, and a cancel
is followed by no new call at the fake server. Every wait is on a condition."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from tests.support.datasets import uncached_gecko_rows
from tests.support.stack import Stack, stack
from worker.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from worker.settings import Settings

pytestmark = pytest.mark.integration

LATENCY_S = 0.3
LARGE_ROWS = 600


@contextmanager
def large_job_under_way(folder: Path) -> Iterator[tuple[Stack, Any, str]]:
    """A default-width worker running a large uncached job (2 calls a row) that has rows done."""
    slots = Settings(worker_pool="gevent").concurrency
    with stack(folder, "--latency-ms", str(int(LATENCY_S * 1000)), concurrency=slots) as s:
        client = s.client()
        large = uncached_gecko_rows(folder / "large", LARGE_ROWS, 2)
        job = client.submit("gecko-image", large, use_cache=False).job_id
        wait_for(lambda: client.summary(job).rows_done >= 5, 120, "the large job under way")
        yield s, client, job


def cancel_and_drain(s: Stack, client: Any, job: str) -> float:
    """Cancel `job` and wait until nothing of it is left anywhere: no call open at the fake
    server, no task in the broker, no row holding a turn. Returns when the cancel was made."""
    before = s.stats()["started"]
    cancelled_at = time.time()  # the fake server's events are stamped by the same clock
    client.cancel(job)
    r = s.redis_client()

    def drained() -> bool:
        idle = s.stats()["in_flight"] == 0 and r.llen(QUEUE_ROWS) + r.llen(QUEUE_QUESTIONS) == 0
        return idle and client.summary(job).status == "cancelled"

    wait_for(drained, 60, "the cancelled job's calls and tasks to drain")
    assert s.stats()["started"] >= before
    return cancelled_at


def assert_no_call_began_after(s: Stack, moment: float) -> None:
    """The fake server's events (every call's arrival) show no call begun past `moment`."""
    late = [e["arrived"] for e in s.stats()["events"] if e["arrived"] > moment]
    assert not late, f"{len(late)} calls began after the cancel took effect"


def test_a_small_job_finishes_while_most_of_a_large_one_waits_then_a_cancel_stops_it(
    tmp_path: Path,
) -> None:
    small = uncached_gecko_rows(tmp_path / "small", 3, 1, color="blue")
    with large_job_under_way(tmp_path) as (s, client, large):
        quick = client.submit("gecko-image", small, use_cache=False).job_id
        done = client.wait(quick, timeout_s=120)
        behind = client.summary(large)
        assert done.status == "finished" and done.rows_scored == 3
        # What a window of slots would have sent ahead of the small job (300 rows) never
        # went: most of the large job is still in line, not in the broker or running.
        assert behind.status == "running"
        assert behind.rows_waiting > LARGE_ROWS // 2, behind
        cancelled_at = cancel_and_drain(s, client, large)
        # Calls already running at the cancel finish; none starts after one latency.
        assert_no_call_began_after(s, cancelled_at + LATENCY_S)
        stopped = client.summary(large)
        assert stopped.rows_done < LARGE_ROWS // 2
        # The calls running at the cancel (begun before it, answered after) are among those
        # the cancel counted as sent and not answered, which the status shows.
        events = s.stats()["events"]
        running = [e for e in events if e["arrived"] < cancelled_at < e["t"]]
        assert stopped.calls_open_at_cancel is not None
        assert len(running) <= stopped.calls_open_at_cancel < LARGE_ROWS


def test_a_high_priority_job_overtakes_a_large_one_at_the_default_width(tmp_path: Path) -> None:
    urgent = uncached_gecko_rows(tmp_path / "urgent", 20, 1, color="green")
    with large_job_under_way(tmp_path) as (s, client, large):
        high = client.submit("gecko-image", urgent, use_cache=False, priority="high").job_id
        ahead = client.wait(high, timeout_s=120)
        behind = client.summary(large)
        assert ahead.status == "finished" and ahead.rows_done == 20
        assert behind.status == "running" and behind.rows_waiting > LARGE_ROWS // 2, behind
        cancel_and_drain(s, client, large)
