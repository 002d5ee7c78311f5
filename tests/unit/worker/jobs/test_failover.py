"""A Redis failover noticed and recovered from, against a real Redis: the detection logic (which
answers of INFO mean writes may be lost), a job's lost spend restored from the writing process's
own tallies (the failover simulated by putting back the job's keys as they were before the
last writes, which is what a replica promoted behind its master holds), and the first worker to
record a failover re-driving the rows of a running job at once."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from evalq.core.models import FailoverNote, Verdict
from evalq.core.pricing import Usage
from evalq.worker.jobs.failover import FailoverWatch, lost_writes
from evalq.worker.jobs.watchdog import Watchdog
from evalq.worker.lifecycle.job_end import current_summary
from evalq.worker.settings import Settings
from evalq.worker.store import RedisIdentity, RowRef, Store, keys
from evalq.worker.store.tallies import Tallies
from evalq.worker.store.unit_writes import UnitWrites
from tests.support.scratch import plant_job

A = RedisIdentity("run-a", "repl-a")
F, T = False, True


def test_only_another_server_or_another_replication_history_means_lost_writes() -> None:
    assert not lost_writes(None, A)  # the first answer is what later ones are compared with
    assert not lost_writes(A, RedisIdentity("run-a", "repl-a"))
    assert lost_writes(A, RedisIdentity("run-b", "repl-a"))  # restarted, or another server
    assert lost_writes(A, RedisIdentity("run-a", "repl-b"))  # a replica promoted


def test_the_watch_calls_once_per_change_and_again_after_a_failed_handling() -> None:
    answers = [A, A, RedisIdentity("run-b", "repl-b"), RedisIdentity("run-b", "repl-b")]
    answers += [RedisIdentity("run-c", "repl-c")] * 2
    seen: list[tuple[RedisIdentity, float]] = []
    fail = [False]

    def handle(identity: RedisIdentity, at: float) -> None:
        if fail[0]:
            fail[0] = False
            raise redis.exceptions.ConnectionError("Redis away again")
        seen.append((identity, at))

    watch = FailoverWatch(lambda: answers.pop(0), handle, clock=lambda: 7.0)
    assert [watch.check(), watch.check(), watch.check(), watch.check()] == [F, F, T, F]
    assert seen == [(RedisIdentity("run-b", "repl-b"), 7.0)]
    fail[0] = True
    with pytest.raises(redis.exceptions.ConnectionError):
        watch.check()
    assert watch.check()  # not handled yet: the same change is handled on the next check
    assert seen[-1] == (RedisIdentity("run-c", "repl-c"), 7.0)


def test_a_redis_user_that_may_not_run_info_notices_nothing() -> None:
    seen: list[RedisIdentity] = []
    watch = FailoverWatch(lambda: None, lambda identity, _: seen.append(identity))
    assert not watch.check() and not watch.check()
    assert seen == [] and watch.seen is None


def test_the_identity_is_what_info_says(store: Store) -> None:
    info = store.r.info("server", "replication")
    assert store.redis_identity() == RedisIdentity(info["run_id"], info["master_replid"])


def _spend(calls: int) -> UnitWrites:
    writes = UnitWrites()
    usage = Usage(role="judge", model="gemini-2.5-flash", calls=calls, prompt=10 * calls)
    usage.cost_nanos = 1000 * calls
    writes.spend({"judge_calls": calls, "prompt_tokens": 10 * calls}, usage)
    return writes


def _yes_verdict(index: int) -> Verdict:
    return Verdict(index=index, status="ok", answer="yes", result=1)


def test_spend_lost_with_redis_writes_is_restored_once_and_the_job_says_so(store: Store) -> None:
    job = plant_job(store, 3)
    store.record_unit(RowRef(job, "1"), _yes_verdict(0), _spend(2))
    store.account(job, {"judge_calls": 1, "prompt_tokens": 10})  # a rubric call, written at once
    # What a replica promoted behind its master holds: the job as it was before the last writes.
    kept = {key: store.r.dump(key) for key in (keys.job(job), keys.spent_by(job))}
    store.record_unit(RowRef(job, "2"), _yes_verdict(0), _spend(3))
    store.record_unit(RowRef(job, "3"), _yes_verdict(0), _spend(1))
    for key, value in kept.items():
        store.r.restore(key, 0, cast(bytes, value), replace=True)
    assert store.counters(job).judge_calls == 3  # 4 calls' spend lost

    at = time.time()
    assert store.reconcile_spend(job, at, active=True) == 4
    counters = store.counters(job)
    assert (counters.judge_calls, counters.prompt_tokens, counters.spent_nanos) == (7, 70, 6000)
    assert counters.failover == FailoverNote(at=at, calls_restored=4, calls_unconfirmed=0)
    # Done twice (two failovers, or a handling tried again): nothing is counted twice.
    assert store.reconcile_spend(job, at + 1, active=True) == 0
    assert store.counters(job).judge_calls == 7
    assert store.counters(job).failover == counters.failover  # the first failover's time kept
    said = current_summary(store, job).failover
    assert said is not None and "4 calls' lost spend restored" in said.says()
    assert "no call is known to be missing" in said.says()


def test_a_write_cut_off_with_its_connection_is_said_to_be_maybe_missing(store: Store) -> None:
    job = plant_job(store, 1)
    away = Store(store.r, Settings())  # a worker's store, which has read the job's expiry
    away.job_ttl(job)
    with _nothing_listens() as down:
        away.r, away._scripts = down, {}
        with pytest.raises(redis.exceptions.ConnectionError):
            away.record_unit(RowRef(job, "1"), _yes_verdict(0), _spend(2))
        with pytest.raises(redis.exceptions.ConnectionError):
            away.account(job, {"judge_calls": 1})
    assert away.tallies.of(job) == ({}, 3)
    away.r, away._scripts = store.r, {}  # Redis is back (a promoted replica behind the proxy)
    assert away.reconcile_spend(job, 5.0, active=True) == 0
    note = store.counters(job).failover
    assert note == FailoverNote(at=5.0, calls_restored=0, calls_unconfirmed=3)
    assert "up to 3 calls made before it may be missing from the cost" in note.says()
    away.reconcile_spend(job, 6.0, active=True)  # reported once
    assert store.counters(job).failover == note


@contextmanager
def _nothing_listens() -> Iterator[redis.Redis]:
    """A client of a port held bound and never listening, which gives up at the first refusal:
    no other process can answer on it, as one may on any fixed port of a shared machine."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield redis.Redis(port=held.getsockname()[1], retry=Retry(NoBackoff(), 0))


def test_a_job_that_ended_before_and_lost_nothing_is_not_marked(store: Store) -> None:
    job = plant_job(store, 1)
    store.record_unit(RowRef(job, "1"), _yes_verdict(0), _spend(1))
    assert store.reconcile_spend(job, 5.0, active=False) == 0
    assert store.counters(job).failover is None
    assert store.reconcile_spend("no-such-job", 5.0, active=True) is None


def test_the_first_worker_to_record_a_failover_re_drives_running_rows_at_once(
    store: Store,
) -> None:
    """An hour's stall timeout: the re-drive is the failover's, not the stall's, and it counts
    toward no cap."""
    job = plant_job(store, 3)
    store.record_unit(RowRef(job, "1"), _yes_verdict(0), _spend(1))
    sent: list[tuple[str, str]] = []
    dogs = [
        Watchdog(
            store, lambda j, r: sent.append((j, r)), interval_s=1, stall_timeout_s=3600, name=n
        )
        for n in ("w1", "w2")
    ]
    assert dogs[0].sweep() == {}  # nothing stalled within the hour
    identity = RedisIdentity("promoted", "its-own-history")
    assert dogs[0].after_failover(identity, time.time()) == {job: 3}
    assert sorted(sent) == [(job, "1"), (job, "2"), (job, "3")]
    assert dogs[1].after_failover(identity, time.time()) == {}  # the second only restores
    assert len(sent) == 3
    # The first, tried again (its handling failed on the way), re-drives again.
    assert dogs[0].after_failover(identity, time.time()) == {job: 3}
    summary = current_summary(store, job)
    assert summary.failover is not None and summary.redrive_capped == 0
    assert summary.redriven == 6


def test_a_process_keeps_the_tallies_of_its_latest_jobs_only() -> None:
    tallies = Tallies(jobs=2)
    tallies.add("a", {"judge_calls": 1})
    tallies.unconfirmed("a", {"judge_calls": 2, "prompt_tokens": 9})
    tallies.add("b", {"judge_calls": 1})
    tallies.add("a", {"judge_calls": 1})  # a is the latest again
    tallies.add("c", {"judge_calls": 1})
    assert sorted(tallies.jobs()) == ["a", "c"]
    assert tallies.of("a") == ({"judge_calls": 2}, 2)
    assert tallies.of("b") == ({}, 0)
    tallies.reported("a", 2)
    assert tallies.of("a") == ({"judge_calls": 2}, 0)


def test_spend_with_no_trace_in_redis_is_said_to_be_maybe_missing_not_added(store: Store) -> None:
    """The job's spent_by gone altogether (every write of spend lost, or the hash expired: no
    one can say which): adding the tallies could count them twice, so they are reported."""
    job = plant_job(store, 1)
    store.record_unit(RowRef(job, "1"), _yes_verdict(0), _spend(2))
    store.r.delete(keys.spent_by(job))
    assert store.reconcile_spend(job, 5.0, active=True) == 0
    counters = store.counters(job)
    assert counters.judge_calls == 2
    assert counters.failover == FailoverNote(at=5.0, calls_restored=0, calls_unconfirmed=2)
    store.reconcile_spend(job, 6.0, active=True)  # reported once
    assert store.counters(job) == counters
