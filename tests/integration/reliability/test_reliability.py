"""Reliability with real processes: killed workers, quota pacing, fault storms, cached reruns,
a Redis restart, secrets. Nothing here asserts on how long anything took."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from devtools.local import WorkerPool, start_redis, stop, wait_for
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from tests.support.cli import run_evalq
from tests.support.secrets import assert_not_in_redis
from tests.support.shapes import shapes_dataset
from tests.support.stack import stack, watched_stack
from tests.support.stores import store_of
from tests.support.summaries import comparable

pytestmark = pytest.mark.integration
KILL_ROWS = 200
# A SIGKILL once this share of the rows has landed: at fixed points, so how many kills a run
# makes does not depend on how fast a loaded machine starts the replacement workers.
KILL_AT = (0.15, 0.35, 0.55, 0.75)


def _has_worked(pool: WorkerPool, proc: subprocess.Popen[bytes]) -> bool:
    """Alive, ready and has finished a task since: a victim killed in the middle of its work,
    not a replacement that has not yet taken any."""
    if proc.poll() is not None:
        return False
    log = pool.log_of(proc)
    ready = log.rfind("ready.")
    return ready >= 0 and "succeeded in" in log[ready:]


@pytest.mark.both_pools  # a killed gevent worker loses four reserved messages per slot
def test_sigkilled_workers_lose_nothing_and_count_nothing_twice(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", KILL_ROWS)
    starting: list[threading.Thread] = []
    with watched_stack(tmp_path, latency_ms=60, stall_timeout_s=4, workers=3) as s:
        client = s.client()
        calm = client.wait(
            client.submit("gecko-image", data, use_cache=False).job_id, timeout_s=300
        )
        assert calm.rows_done == KILL_ROWS

        job = client.submit("gecko-image", data, use_cache=False).job_id

        def rows_done() -> int:
            return int(store_of(client).job_hash(job).get("rows_done", 0))

        rng = random.Random(1)
        killed_at: list[int] = []
        for share in KILL_AT:
            target = KILL_ROWS * share
            wait_for(lambda t=target: rows_done() >= t, 300, f"{share:.0%} of the rows")
            wait_for(
                lambda: any(_has_worked(s.pool, p) for p in list(s.pool.procs)),
                300,
                "a worker at work",
            )
            victim = rng.choice([p for p in list(s.pool.procs) if _has_worked(s.pool, p)])
            killed_at.append(rows_done())
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            # The replacement starts beside the job, which goes on meanwhile.
            name = f"r{len(killed_at)}-{os.getpid()}"
            starting.append(threading.Thread(target=s.pool.start, kwargs={"name": name}))
            starting[-1].start()
        stormy = client.wait(job, timeout_s=300)
        results = client.results(job)
        for thread in starting:
            thread.join()
    print(f"\nkill test: SIGKILLs at rows {killed_at}, {stormy.redriven} rows re-driven")
    assert len(killed_at) == len(KILL_AT)
    assert killed_at[-1] < KILL_ROWS  # the last kill came before the job ended
    assert len(results) == len({r.id for r in results}) == KILL_ROWS  # every row once
    assert stormy.rows_scored + stormy.rows_partial + stormy.rows_failed == KILL_ROWS
    assert comparable(stormy) == comparable(calm)


def test_limiter_paces_workers_under_a_quota(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 20, own_questions=True)  # 60 validator calls
    # Paced 5% under the server's quota, as the README advises: the server counts a sliding
    # window, and at exactly its rate one request sent late by a loaded machine (both test
    # processes share two cores) meets the next in the same window.
    limits = json.dumps({"*": {"rpm": 228}})
    with stack(
        tmp_path, "--rpm", "240", "--quota-window-s", "5", workers=2, EVALQ_RATE_LIMITS=limits
    ) as s:
        client = s.client()
        summary = client.wait(client.submit("gecko-image", data).job_id, timeout_s=240)
        stats = s.stats()
    share = stats["by_status"].get("429", 0) / stats["requests"]
    print(
        f"\nlimiter on: {stats['requests']} requests, 429 share {share:.1%}, limiter wait {summary.limiter_wait_s:.1f} s"
    )
    assert summary.rows_scored == 20
    assert summary.unscored_by_reason == {}
    assert summary.limiter_wait_s > 0  # the workers were held back by the limiter...
    assert share <= 0.05  # ...so the server rarely had to say no


def test_limiter_off_for_contrast_the_server_refuses_and_retries_still_finish(
    tmp_path: Path,
) -> None:
    data = shapes_dataset(tmp_path / "data", 20, own_questions=True)
    with stack(tmp_path, "--rpm", "240", "--quota-window-s", "5", workers=2) as s:
        client = s.client()
        summary = client.wait(client.submit("gecko-image", data).job_id, timeout_s=240)
        stats = s.stats()
    share = stats["by_status"].get("429", 0) / stats["requests"]
    print(f"\nlimiter off: {stats['requests']} requests, 429 share {share:.1%}")
    assert summary.rows_scored == 20  # countdown retries get there anyway, at a cost
    assert summary.rate_limited == stats["by_status"].get("429", 0) > 0


def test_fault_storm_unscored_counts_match_unretryable_faults(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 40, own_questions=True)  # 120 validator calls
    args = ("--fault-rate", "0.2", "--seed", "7", "--slow-fault-ms", "300")
    with stack(tmp_path, *args, workers=2) as s:
        client = s.client()
        summary = client.wait(client.submit("gecko-image", data).job_id, timeout_s=300)
        faults = s.stats()["faults"]
    print(
        f"\nfault storm: faults {faults}, unscored {summary.unscored_by_reason}, retries {summary.retries}"
    )
    assert summary.rows_done == 40
    assert sum(faults.values()) > 0
    # Malformed and truncated replies can't be retried away: each is one unscored question,
    # a parse_error when malformed, truncated when cut off at MAX_TOKENS.
    assert summary.unscored_by_reason.get("parse_error", 0) == faults.get("malformed", 0)
    assert summary.unscored_by_reason.get("truncated", 0) == faults.get("max_tokens", 0)
    # 503s were retried in-process and 429s by countdown: none of them became an unscored question.
    assert summary.unscored_by_reason.get("judge_error", 0) == 0
    assert summary.rate_limited == faults.get("429", 0)


def test_rerun_of_a_finished_job_makes_no_request(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 12)
    with stack(tmp_path) as s:
        client = s.client()
        first = client.wait(client.submit("gecko-image", data).job_id, timeout_s=120)
        assert s.stats()["requests"] == first.judge_calls > 0
        s.reset_stats()
        second = client.wait(client.submit("gecko-image", data).job_id, timeout_s=120)
        assert s.stats()["requests"] == 0
        assert second.judge_calls == 0
        assert second.rubric_cache_hits == 12
        assert second.cache_hits > 0
        assert comparable(second) == comparable(first)
        no_cache = client.wait(
            client.submit("gecko-image", data, use_cache=False).job_id, timeout_s=120
        )
        assert s.stats()["requests"] == no_cache.judge_calls > 0  # --no-cache really asks again


@pytest.mark.both_pools  # the killed workers' reserved messages survive in the AOF's unacked set
def test_redis_restarted_from_its_aof_then_resume(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 60)
    # The killed workers' rubric claims survive in the AOF: their rows wait for the claims'
    # lease to run out (three heartbeats, a quarter of the stall timeout each), 90 s with the
    # default timeout; a short one keeps that wait to seconds. Their rows in flight are left
    # to the watchdog by resume: a sweep a second re-drives them once the stall timeout is up.
    with watched_stack(
        tmp_path, latency_ms=150, stall_timeout_s=4, appendonly=True, concurrency=4
    ) as s:
        client = s.client()
        job = client.submit("gecko-image", data).job_id
        wait_for(
            lambda: int(store_of(client).job_hash(job).get("rows_done", 0)) >= 10,
            120,
            "10 rows done",
        )
        # Everything stops: workers die, Redis goes down (its AOF stays), the producer is gone.
        for proc in s.pool.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        s.pool.procs.clear()
        assert s.redis.proc is not None
        stop(s.redis.proc)
        done_before = None
        restarted = start_redis(tmp_path / "redis", appendonly=True, port=s.redis.port)
        s.redis.proc = restarted.proc
        done_before = int(store_of(client).job_hash(job)["rows_done"])
        assert 10 <= done_before < 60
        s.pool.start(concurrency=4)
        resumed = run_evalq(s.env(), "resume", job, "--wait", "--json", timeout_s=300)
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads(resumed.stdout)
        results = client.results(job)
    assert summary["status"] == "finished"
    assert summary["rows_done"] == 60
    assert len(results) == len({r.id for r in results}) == 60
    assert summary["rows_scored"] + summary["rows_partial"] + summary["rows_failed"] == 60


def test_cancel_stops_a_job_cleanly(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 40)
    with stack(tmp_path, "--latency-ms", "300", concurrency=2) as s:
        client = s.client()
        job = client.submit("gecko-image", data).job_id
        wait_for(lambda: s.stats()["requests"] >= 2, 60, "the job to start")
        cancelled = client.cancel(job)
        assert cancelled.status == "cancelled"
        # Tasks already inside a call finish it; every other message of the job is taken and
        # dropped without a call. Once no message is queued or unacked, nothing is left that
        # could make a request.
        r = s.redis_client()
        wait_for(
            lambda: (
                r.hlen("unacked") == 0 and store_of(client).queued(QUEUE_ROWS, QUEUE_QUESTIONS) == 0
            ),
            60,
            "every message of the cancelled job to be handled",
        )
        requests = s.stats()["requests"]
        final = client.wait(job, timeout_s=10)
        assert s.stats()["requests"] == requests
    assert final.status == "cancelled"
    assert final.rows_done < 40


def test_api_key_never_reaches_redis_or_logs(tmp_path: Path) -> None:
    secret = "AIzaTEST-evalq-secret-key-0123456789"
    data = shapes_dataset(tmp_path / "data", 6)
    with stack(tmp_path, GEMINI_API_KEY=secret) as s:
        client = s.client()
        summary = client.wait(client.submit("gecko-image", data).job_id, timeout_s=120)
        assert summary.rows_scored + summary.rows_partial == 6  # the key was sent and worked
        assert assert_not_in_redis(s.redis_client(), secret) > 10
        logs = s.pool.logs()
    assert "ready." in logs
    assert secret not in logs
