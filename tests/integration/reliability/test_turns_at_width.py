"""Turns at the width people run: one worker as `evalq worker` starts it (gevent, 200 slots),
whose share of the window its pace sizes from the wait it measures (evalq.worker.dispatch.pace). A
window of slots (1.5 x 200 rows) put a large job's first 300 rows, all their calls, ahead of any job
submitted after it; these check that what is queued ahead is a moment of work instead: a small
job and a high-priority one finish while most of a large job still waits in line, and after a
cancel no call passes the gate before the API. Every wait is on a condition."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from evalq.worker.settings import Settings
from tests.support.datasets import uncached_gecko_rows
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration

LATENCY_S = 0.3
LARGE_ROWS = 600


@contextmanager
def large_job_under_way(folder: Path, questions: int = 2) -> Iterator[tuple[Stack, Any, str]]:
    """A default-width worker running a large uncached job (a call per question; with none,
    the judge writes each row's questions first) that has rows done."""
    slots = Settings(worker_pool="gevent").concurrency
    with stack(folder, "--latency-ms", str(int(LATENCY_S * 1000)), concurrency=slots) as s:
        client = s.client()
        large = uncached_gecko_rows(folder / "large", LARGE_ROWS, questions)
        job = client.submit("gecko-image", large, use_cache=False).job_id
        wait_for(lambda: client.summary(job).rows_done >= 5, 120, "the large job under way")
        yield s, client, job


def cancel_and_drain(s: Stack, client: Any, job: str) -> tuple[float, float, int]:
    """Cancel `job` and wait until nothing of it is left anywhere: no call open at the fake
    server, no task in the broker, no row holding a turn. Returns when the cancel began and
    when it returned (the fake server's events are stamped by the same clock), and the calls
    the gate had let through when it returned."""
    r = s.redis_client()
    began = time.time()
    client.cancel(job)
    returned = time.time()
    admitted = s.store().counters(job).calls_admitted

    def drained() -> bool:
        idle = s.stats()["in_flight"] == 0 and r.llen(QUEUE_ROWS) + r.llen(QUEUE_QUESTIONS) == 0
        return idle and client.summary(job).status == "cancelled"

    wait_for(drained, 60, "the cancelled job's calls and tasks to drain")
    return began, returned, admitted


def test_a_small_job_finishes_while_most_of_a_large_one_waits_then_a_cancel_stops_it(
    tmp_path: Path,
) -> None:
    small = uncached_gecko_rows(tmp_path / "small", 3, 1, color="blue")
    # The large job's rows have their questions written first, so a row running at the cancel
    # has calls still to make after it: the gate must hold them back.
    with large_job_under_way(tmp_path, questions=0) as (s, client, large):
        quick = client.submit("gecko-image", small, use_cache=False).job_id
        done = client.wait(quick, timeout_s=120)
        behind = client.summary(large)
        assert done.status == "finished" and done.rows_scored == 3
        # What a window of slots would have sent ahead of the small job (300 rows) never
        # went: most of the large job is still in line, not in the broker or running.
        assert behind.status == "running"
        assert behind.rows_waiting > LARGE_ROWS // 2, behind
        small_calls = s.store().counters(quick).calls_admitted
        began, returned, admitted = cancel_and_drain(s, client, large)
        # No call passed the gate after the cancel: the count it froze stays, and every call
        # that ever reached the fake server is one counted before the cancel returned. (Calls
        # let through just before it may arrive later: a gevent worker busy with 200 slots
        # can take a while to send one; the gate, not a clock, is what stops them.)
        events = s.stats()["events"]
        assert s.store().counters(large).calls_admitted == admitted
        assert 0 < len(events) <= small_calls + admitted
        stopped = client.summary(large)
        assert stopped.rows_done < LARGE_ROWS // 2
        # The calls running all through the cancel (arrived before it began, answered after it
        # returned) are among those it counted as sent and not answered, which status shows.
        running = [e for e in events if e["arrived"] < began and e["t"] > returned]
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
