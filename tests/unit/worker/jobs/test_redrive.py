"""Re-drives against a real Redis: a row whose task is alive is left alone (the heartbeat), and a
row driven again and again without progress fails instead of taking a thread each time."""

from __future__ import annotations

import time

from evalq.core.models import Verdict
from evalq.worker.celery_app.app import PREPARE_ROW
from evalq.worker.dispatch.heartbeat import Heartbeat, interval_for, row_of
from evalq.worker.jobs.watchdog import Watchdog
from evalq.worker.lifecycle.job_end import current_summary
from evalq.worker.store import RowRef, Store
from evalq.worker.store.unit_writes import UnitWrites
from tests.support.scratch import plant_job


def watchdog(store: Store, sent: list[tuple[str, str]], max_redrives: int = 3) -> Watchdog:
    return Watchdog(
        store,
        lambda j, r: sent.append((j, r)),
        interval_s=1,
        stall_timeout_s=60,
        name="t",
        max_redrives=max_redrives,
    )


def test_rows_of_row_tasks() -> None:
    assert row_of(PREPARE_ROW, ["job", "r1"]) == ("job", "r1")
    assert row_of("evalq.run_unit", ["job", "r1", 3]) == ("job", "r1")
    assert row_of("evalq.aggregate_row", [[{}], "job", "r1"]) == ("job", "r1")
    assert row_of("celery.chord_unlock", ["x", "y"]) is None
    assert interval_for(120) == 30 and interval_for(2) == 0.5


def test_a_row_whose_task_is_alive_is_not_redriven(store: Store) -> None:
    """A download or judge call longer than the stall timeout: the task holds its row's lease,
    so the watchdog does not start a second copy of the same work."""
    job = plant_job(store, 2)
    sent: list[tuple[str, str]] = []
    dog = watchdog(store, sent)
    clock = [1000.0]
    beat = Heartbeat(store, interval_s=1, max_hold_s=540, clock=lambda: clock[0])
    store.touch(job, "1", "2", at=time.time() - 100)  # both started long ago
    beat.enter("task-a", job, "1")  # row 1's task runs on; row 2's worker died
    clock[0] += 100
    assert beat.beat() == 1
    assert dog.sweep(time.time()) == {job: 1}
    assert sent == [(job, "2")]
    # Past the task time limit the task is stuck: it is no longer vouched for.
    clock[0] += 600
    assert beat.beat() == 0
    beat.leave("task-a")
    assert dog.sweep(time.time() + 90) == {job: 2}


def test_redrives_are_capped_and_the_cap_is_reported(store: Store) -> None:
    job = plant_job(store, 2)
    sent: list[tuple[str, str]] = []
    dog = watchdog(store, sent, max_redrives=3)
    store.touch(job, "1", "2", at=time.time() - 100)
    for _ in range(3):  # every task that takes the rows dies: they stall again and again
        assert dog.sweep(time.time() + 100) == {job: 2}
    assert sent.count((job, "1")) == sent.count((job, "2")) == 3
    # row 2 makes progress meanwhile: one new verdict starts its count again.
    store.record_unit(
        RowRef(job, "2"), Verdict(index=0, status="ok", answer="yes", result=1), UnitWrites()
    )
    assert dog.sweep(time.time() + 100) == {job: 1}
    assert sent[-1] == (job, "2")
    summary = current_summary(store, job)
    assert (summary.rows_done, summary.rows_failed, summary.redrive_capped) == (1, 1, 1)
    (failed,) = [r for r in store.iter_results(job) if r.id == "r0"]
    assert (failed.status, failed.reason) == ("failed", "judge_error")
    assert "gave up after 3 re-drives" in (failed.error or "")
    assert "EVALQ_MAX_REDRIVES" in (failed.error or "")
    assert summary.redriven == 3 * 2 + 1


def test_strikes_count_while_the_queues_are_busy_when_tasks_take_the_row_and_die(
    store: Store,
) -> None:
    """Work waits in the queues throughout (a busy deployment whose queues never empty), and
    every task that takes the rows dies: each re-drive counts, and the rows fail at the cap."""
    job = plant_job(store, 2)
    sent: list[tuple[str, str]] = []
    dog = watchdog(store, sent, max_redrives=2)
    dog.queues_empty = lambda: False  # type: ignore[method-assign]  # work waiting throughout
    store.touch(job, "1", "2", at=time.time() - 100)  # started, then their worker died
    for _ in range(2):
        assert dog.sweep(time.time() + 100) == {job: 2}
        store.touch(job, "1", "2")  # the re-driven task took the rows (prepare_row), then died
    assert current_summary(store, job).rows_failed == 0
    assert dog.sweep(time.time() + 100) == {}  # the third strike is over the cap
    summary = current_summary(store, job)
    assert (summary.rows_failed, summary.redrive_capped, len(sent)) == (2, 2, 4)
    assert all("gave up after 2 re-drives" in (r.error or "") for r in store.iter_results(job))


def test_a_redrive_whose_message_waits_behind_other_work_is_not_counted(store: Store) -> None:
    """A backlog (or a loaded machine) leaves a re-driven row's message queued behind other
    work: driven again, but not failed for it, however long the wait. Once a task takes it
    (or the queues are empty) re-drives count again."""
    job = plant_job(store, 2)
    sent: list[tuple[str, str]] = []
    dog = watchdog(store, sent, max_redrives=2)
    store.touch(job, "1", "2", at=time.time() - 100)
    dog.queues_empty = lambda: False  # type: ignore[method-assign]  # work waiting throughout
    for _ in range(5):  # the first re-drive counts (a task had taken the rows); no other does
        assert dog.sweep(time.time() + 100) == {job: 2}
    assert current_summary(store, job).rows_failed == 0
    store.touch(job, "1")  # row 1's message is taken at last, and its task dies too
    assert dog.sweep(time.time() + 100) == {job: 2}  # row 1: two strikes
    assert current_summary(store, job).rows_failed == 0
    dog.queues_empty = lambda: True  # type: ignore[method-assign]  # now nothing is waiting
    assert dog.sweep(time.time() + 100) == {job: 1}  # every re-drive counts: row 1 fails
    assert current_summary(store, job).rows_failed == 1
    assert dog.sweep(time.time() + 100) == {}  # and row 2 on its third strike
    summary = current_summary(store, job)
    assert (summary.rows_failed, summary.redrive_capped, len(sent)) == (2, 2, 13)
