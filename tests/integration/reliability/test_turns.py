"""Turns between jobs on shared workers (evalq.worker.dispatch.turns), with a real worker and the
fake server: a small job is not stuck behind a large one, a high priority job overtakes a normal
one, a job's own cap on rows in flight holds (seen from the fake server's side), and the broker
holds the window, not the job. Every wait is on a condition; latencies only make rows take a
while."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.local import start_redis, stop, wait_for
from evalq.client import Client
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from evalq.worker.settings import Settings
from tests.support.datasets import uncached_gecko_rows, write_rows
from tests.support.stack import Stack, stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", name="shared")
def turns_stack_for_the_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One worker with 4 slots for the module: each test's jobs are its own (uncached rows,
    its own job ids), and none reads the fake's counters but through its own reset."""
    with stack(tmp_path_factory.mktemp("turns"), concurrency=4) as s:
        yield s


@pytest.fixture(name="s")
def turns_stack_for_this_test(shared: Stack) -> Iterator[Stack]:
    """The shared stack with nothing of an earlier test's still at work: no call open at the
    fake and no message in the queues, so a test's jobs meet only each other."""
    yield shared
    r = shared.redis_client()

    def settled() -> bool:
        queued = r.llen(QUEUE_ROWS) + r.llen(QUEUE_QUESTIONS)
        return queued == 0 and shared.stats()["in_flight"] == 0

    wait_for(settled, 120, "the test's calls and messages to end")


def job_under_way(s: Stack, dataset: Path, rows_done: int, latency_ms: int) -> tuple[Client, str]:
    """An uncached job of `dataset` with `rows_done` rows done, the fake replying after
    `latency_ms`: what a second job meets, or what a cancel stops."""
    s.set_latency(latency_ms)
    client = s.client()
    job = client.submit("gecko-image", dataset, use_cache=False).job_id
    wait_for(lambda: client.summary(job).rows_done >= rows_done, 120, "the job under way")
    return client, job


def test_a_small_job_finishes_while_a_large_one_still_runs(s: Stack, tmp_path: Path) -> None:
    big = uncached_gecko_rows(tmp_path / "big", 120, 2)
    small = uncached_gecko_rows(tmp_path / "small", 3, 1, color="blue")
    client, large = job_under_way(s, big, 4, latency_ms=300)
    # The broker holds the window (1.5 x 4 slots), never the large job's 120 rows.
    assert s.redis_client().llen(QUEUE_ROWS) <= 6
    quick = client.submit("gecko-image", small, use_cache=False).job_id
    done = client.wait(quick, timeout_s=120)
    behind = client.summary(large)
    assert done.status == "finished" and done.rows_scored == 3
    assert behind.status == "running" and behind.rows_done < 120
    assert behind.rows_in_flight <= 6 and behind.rows_waiting > 0
    # Proven: the rest of the large job's rows would only take time.
    client.cancel(large)
    assert client.summary(large).status == "cancelled"


def test_a_high_priority_job_overtakes_a_normal_one(s: Stack, tmp_path: Path) -> None:
    first = uncached_gecko_rows(tmp_path / "normal", 40, 1)
    second = uncached_gecko_rows(tmp_path / "high", 20, 1, color="green")
    client, normal = job_under_way(s, first, 1, latency_ms=300)
    high = client.submit("gecko-image", second, use_cache=False, priority="high").job_id
    assert client.summary(high).priority == "high"
    ahead = client.wait(high, timeout_s=120)
    assert ahead.rows_done == 20
    assert client.summary(normal).rows_done < 40  # overtaken: still running
    s.set_latency(0)  # what is left of it only has to finish
    assert client.wait(normal, timeout_s=300).rows_done == 40


def test_max_in_flight_holds_at_the_fake_server_and_changes_while_running(
    s: Stack, tmp_path: Path
) -> None:
    """Two questions a row: a job holding at most 1 row has at most 2 calls open, where the
    worker's 4 slots open up to 4 for a job without a cap."""
    s.set_latency(800)
    s.reset_stats()
    client = s.client()
    free = uncached_gecko_rows(tmp_path / "free", 12, 2)
    client.wait(client.submit("gecko-image", free, use_cache=False).job_id, timeout_s=120)
    assert s.stats()["in_flight_peak"] > 2  # without a cap the worker opens more
    s.reset_stats()
    capped = uncached_gecko_rows(tmp_path / "capped", 12, 2, color="green")
    job = client.submit("gecko-image", capped, use_cache=False, max_in_flight=1).job_id
    wait_for(lambda: client.summary(job).rows_done >= 4, 120, "4 rows of the capped job")
    assert s.stats()["in_flight_peak"] <= 2
    state = client.set_turns(job, max_in_flight=0)  # lifted while it runs
    assert state.max_in_flight is None
    s.set_latency(0)  # no more peaks to see: the rest only has to finish
    assert client.wait(job, timeout_s=120).rows_done == 12


def test_a_resumed_job_gets_its_rows_back_in_line(s: Stack, tmp_path: Path) -> None:
    data = uncached_gecko_rows(tmp_path / "d", 30, 1)
    client, job = job_under_way(s, data, 3, latency_ms=200)
    client.cancel(job)
    stopped = client.summary(job)
    assert stopped.status == "cancelled"
    back = client.resume(job)  # rows still in flight at the cancel may have ended since
    assert 0 < back <= 30 - stopped.rows_done
    summary = client.wait(job, timeout_s=120)
    assert (summary.status, summary.rows_done, summary.rows_scored) == ("finished", 30, 30)


def test_a_large_submit_puts_only_the_window_in_the_broker(tmp_path: Path) -> None:
    """The rows wait in Redis; the broker holds the window (here the least one: no worker has
    registered its slots). scripts/bench --submit measures a million rows the same way."""
    rows = 50_000
    data = write_rows(
        tmp_path / "d.jsonl",
        ({"id": f"r{i}", "prompt": f"q{i}", "response": f"a{i}"} for i in range(rows)),
    )
    server = start_redis(tmp_path / "redis")
    try:
        client = Client(Settings(redis_url=server.url, api_key=None, turn_window_min=4))
        r = server.client()
        before = int(r.info("memory")["used_memory"])
        job = client.submit("pointwise", data, options={"template": "fluency"}).job_id
        grown = int(r.info("memory")["used_memory"]) - before
        assert r.llen(QUEUE_ROWS) == 4
        state = store_of(client).turn_state(job)
        assert (state.holding, state.waiting) == (4, rows - 4)
        assert grown / rows < 1024  # bytes a tiny row takes in Redis, its broker message none
    finally:
        if server.proc is not None:
            stop(server.proc)
