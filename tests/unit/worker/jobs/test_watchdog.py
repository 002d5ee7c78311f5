"""The watchdog's decisions against a real Redis, with the sender recorded instead of sent."""

from __future__ import annotations

import time

import pytest

from evalq.core.models import MediaRef, RowInput, RowResult
from evalq.worker.batch.names import SUBMIT_BATCH
from evalq.worker.jobs.watchdog import BatchDriving, Watchdog
from evalq.worker.settings import Settings
from evalq.worker.store import Store, keys
from tests.support.scratch import plant_job


def test_a_row_given_a_field_it_does_not_have_is_refused() -> None:
    """`RowInput(image=...)` once stored rows without media, silently (the field is `media`)."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="image"):
        RowInput(id="r", line=1, prompt="p", image=MediaRef(kind="path", value="/x.png"))  # type: ignore[call-arg]


def test_stalled_and_lost_rows_are_redriven(store: Store) -> None:
    job = plant_job(store, 4, first_line=0)
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
    plant_job(store, 1, first_line=0)
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

    job = plant_job(store, 1, first_line=0)
    store.finish_row(job, RowResult(id="r0", line=0, prompt="p", status="scored", score=1.0))
    dog = Watchdog(store, lambda j, r: None, interval_s=1, stall_timeout_s=60, name="t")
    dog.sweep()
    assert store.status(job) == "finished"
    assert store.summary_json(job) is not None
    assert job not in store.active_jobs()


def test_a_batch_job_reattached_again_and_again_without_progress_pauses(store: Store) -> None:
    """Every submit the watchdog sends for a batch-mode job dies (nothing is swept, polled or
    ingested, no row finishes): each re-attach without progress counts, at most once per stall
    timeout and not while a submit holds the job's lock; past the cap the job pauses, saying
    why, and nothing more is sent. Progress, or a resume, starts the count again."""
    job = plant_job(store, 2, mode="batch")
    sent: list[str] = []
    dog = Watchdog(
        store,
        lambda j, r: None,
        interval_s=1,
        stall_timeout_s=60,
        name="t",
        max_redrives=2,
        batches=BatchDriving(Settings(stall_timeout_s=60), lambda n, a, c: sent.append(n)),
    )
    now = time.time()
    assert dog.sweep(now) == {}  # its rows are never re-driven: its sweep is sent again
    assert sent == [SUBMIT_BATCH]
    store.finish_row(job, RowResult(id="r0", line=1, prompt="p", status="scored", score=1.0))
    dog.sweep(now + 100)  # a row finished meanwhile: progress, the count starts again
    dog.sweep(now + 130)  # sent again, but counted at most once per stall timeout
    assert store.claim_batch_lock(job, "a-submit", 60)
    dog.sweep(now + 200)  # a submit holds the lock: it is being worked on
    store.r.delete(keys.batch_lock(job))
    dog.sweep(now + 300)  # second re-attach in a row without progress
    assert store.status(job) == "running" and len(sent) == 5
    dog.sweep(now + 400)  # third: over the cap
    assert store.status(job) == "paused" and len(sent) == 5  # nothing sent this time
    reason = store.pause_reason(job) or ""
    assert "re-attached by the watchdog 2 times without progress" in reason
    assert "EVALQ_MAX_REDRIVES=2" in reason and f"evalq resume {job}" in reason
    assert store.transition(job, "running").changed  # `evalq resume`
    dog.sweep(now + 500)
    assert store.status(job) == "running" and len(sent) == 6
