"""Job status changes against a real Redis: every change follows one transition table, checked
and written in one atomic step, so a cancel never overwrites `finished` and a late pause never
overwrites `cancelled`, whoever runs first.

The race tests put the competing change exactly between the moment a caller learns the status
and the moment its own change lands: a real Redis connection that runs the competitor right
after the first command that reads or changes a job's status. A check-then-write caller loses
that race; an atomic one has no gap to lose it in.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis

from evalq.client import Client
from evalq.core.models import RowResult
from evalq.worker.jobs.control import JobControl
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.support.cli import bare_env, run_evalq
from tests.support.scratch import plant_job

ROWS = 2


@pytest.fixture
def scratch_client(scratch_url: str) -> Client:
    return Client(Settings(redis_url=scratch_url))


def new_job(store: Store, *, complete: bool) -> str:
    """A running job; with `complete`, every row is counted but nobody finished it yet (the
    worker that counted the last row died, or its finalize is about to run)."""
    job_id = plant_job(store, ROWS)
    if complete:
        for i in range(ROWS):
            result = RowResult(id=f"r{i}", line=1 + i, prompt="p", status="scored", score=1.0)
            store.finish_row(job_id, result)
    assert store.status(job_id) == "running"
    return job_id


def job_in(store: Store, client: Client, status: str, *, complete: bool = True) -> str:
    """A job brought to `status` the way the system brings it there."""
    job = new_job(store, complete=complete)
    if status == "paused":
        assert store.pause(job, "daily quota exhausted")
    elif status == "cancelled":
        client.cancel(job)
    elif status == "finished":
        assert store.mark_finished(job, ROWS).marked
    assert store.status(job) == status
    return job


def change(store: Store, client: Client, job: str, target: str) -> None:
    """Ask for `target` through the public call that asks for it."""
    if target == "paused":
        store.pause(job, "a late refusal")
    elif target == "cancelled":
        client.cancel(job)
    elif target == "running":
        client.resume(job)
    elif target == "finished":
        store.mark_finished(job, ROWS)


# ---- the table, one forbidden transition at a time ----

FORBIDDEN = [
    ("finished", "paused"),
    ("finished", "cancelled"),
    ("finished", "running"),
    ("cancelled", "paused"),
    ("cancelled", "finished"),
    ("cancelled", "cancelled"),
    ("paused", "paused"),  # the first reason stays
]


@pytest.mark.parametrize(("before", "target"), FORBIDDEN)
def test_a_forbidden_transition_writes_nothing(
    store: Store, scratch_client: Client, before: str, target: str
) -> None:
    job = job_in(store, scratch_client, before)
    seen = store.job_hash(job)
    change(store, scratch_client, job, target)
    assert store.job_hash(job) == seen


@pytest.mark.parametrize("before", ["running", "paused"])
def test_finished_needs_every_row_counted(
    store: Store, scratch_client: Client, before: str
) -> None:
    job = job_in(store, scratch_client, before, complete=False)
    seen = store.job_hash(job)
    assert not store.mark_finished(job, ROWS).complete
    assert store.job_hash(job) == seen


ALLOWED = [
    ("running", "paused"),
    ("running", "cancelled"),
    ("running", "finished"),
    ("paused", "running"),
    ("paused", "cancelled"),
    ("paused", "finished"),
    ("cancelled", "running"),  # `evalq resume` continues a cancelled job
]


@pytest.mark.parametrize(("before", "target"), ALLOWED)
def test_an_allowed_transition_happens(
    store: Store, scratch_client: Client, before: str, target: str
) -> None:
    job = job_in(store, scratch_client, before, complete=target == "finished")
    change(store, scratch_client, job, target)
    assert store.status(job) == target


def test_the_table_states_every_status_and_finished_is_final() -> None:
    from evalq.worker.store import TRANSITIONS

    assert set(TRANSITIONS) == {"running", "paused", "cancelled", "finished"}
    assert TRANSITIONS["finished"] == frozenset()
    forbidden = {(b, t) for b, t in FORBIDDEN}
    for before, targets in TRANSITIONS.items():
        assert not {(before, t) for t in targets} & forbidden
    for before, target in ALLOWED:
        assert target in TRANSITIONS[before]


def test_the_transition_says_what_it_found(store: Store, scratch_client: Client) -> None:
    job = job_in(store, scratch_client, "finished")
    refused = store.transition(job, "cancelled")
    assert (refused.changed, refused.before) == (False, "finished")
    job = job_in(store, scratch_client, "running")
    done = store.transition(job, "cancelled")
    assert (done.changed, done.before) == (True, "running")
    assert job not in store.active_jobs()  # the watchdog no longer looks after it
    assert store.transition(job, "running").changed  # resume
    assert job in store.active_jobs()
    gone = store.transition(uuid.uuid4().hex[:12], "cancelled")
    assert (gone.changed, gone.before) == (False, "unknown")
    with pytest.raises(ValueError, match="no status 'done'"):
        store.transition(job, "done")


def test_a_resume_clears_the_pause_reason(store: Store, scratch_client: Client) -> None:
    job = job_in(store, scratch_client, "paused", complete=False)
    assert store.pause_reason(job) == "daily quota exhausted"
    scratch_client.resume(job)
    assert (store.status(job), store.pause_reason(job)) == ("running", None)


# ---- races: the competitor lands between a caller's look at the status and its change ----


class AfterStatusRead(redis.Redis):  # type: ignore[type-arg]
    """A real Redis connection that runs `then` once, right after the first command that reads
    a job's status or runs a script (the atomic way to change it)."""

    then: Callable[[], None] | None = None

    def execute_command(self, *args: Any, **options: Any) -> Any:
        result = super().execute_command(*args, **options)
        name = str(args[0]).upper()
        reads_status = name == "HGET" and len(args) > 2 and args[2] == "status"
        if self.then is not None and (reads_status or name in ("EVALSHA", "EVAL")):
            then, self.then = self.then, None
            then()
        return result


def racing_store(scratch_url: str, then: Callable[[], None]) -> Store:
    conn = AfterStatusRead.from_url(scratch_url, decode_responses=True)
    conn.then = then
    return Store(conn, Settings(redis_url=scratch_url))


def racing_control(scratch_url: str, then: Callable[[], None]) -> JobControl:
    """The client's steering on a racing_store."""
    return JobControl(racing_store(scratch_url, then), Settings(redis_url=scratch_url))


def test_a_cancel_never_overwrites_finished(scratch_url: str, store: Store) -> None:
    job = new_job(store, complete=True)
    client = Client(Settings(redis_url=scratch_url))
    client.job_control = racing_control(scratch_url, lambda: store.mark_finished(job, ROWS))
    client.cancel(job)
    # Cancelled first, so the finish is refused; a cancel that ran after the finish would
    # leave a job once finished no longer finished.
    h = store.job_hash(job)
    assert (h["status"], "finished_at" in h) == ("cancelled", False)


def test_a_late_pause_never_overwrites_cancelled(
    scratch_url: str, store: Store, scratch_client: Client
) -> None:
    job = new_job(store, complete=False)
    racing_store(scratch_url, lambda: scratch_client.cancel(job)).pause(
        job, "daily quota exhausted"
    )
    assert store.status(job) == "cancelled"


def test_a_late_pause_never_overwrites_finished(scratch_url: str, store: Store) -> None:
    job = new_job(store, complete=True)
    racing_store(scratch_url, lambda: store.mark_finished(job, ROWS)).pause(job, "late")
    assert store.status(job) == "finished"


def test_a_resume_never_reopens_a_finished_job(scratch_url: str, store: Store) -> None:
    job = new_job(store, complete=True)
    assert store.pause(job, "daily quota exhausted")
    finished_at: list[str] = []

    def finish() -> None:
        store.mark_finished(job, ROWS)
        finished_at.append(store.job_hash(job)["finished_at"])

    client = Client(Settings(redis_url=scratch_url))
    client.job_control = racing_control(scratch_url, finish)
    assert client.resume(job) == 0
    # finished once: a resume that reopened it would have it finished a second time
    assert (store.status(job), store.job_hash(job)["finished_at"]) == ("finished", *finished_at)


def test_racing_threads_never_end_in_a_forbidden_state(store: Store, scratch_url: str) -> None:
    """Cancel, finish and pause released together on many jobs, each on its own connection."""
    jobs = [new_job(store, complete=True) for _ in range(60)]
    canceller = Client(Settings(redis_url=scratch_url))
    finisher, pauser = (Store.from_settings(Settings(redis_url=scratch_url)) for _ in range(2))
    for job in jobs:
        start = threading.Barrier(3)
        steps: list[Callable[[], object]] = [
            lambda j=job: canceller.cancel(j),
            lambda j=job: finisher.mark_finished(j, ROWS),
            lambda j=job: pauser.pause(j, "late"),
        ]

        def run(step: Callable[[], object], start: threading.Barrier = start) -> None:
            start.wait()
            step()

        threads = [threading.Thread(target=run, args=(step,)) for step in steps]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for job in jobs:
        h = store.job_hash(job)
        status = h["status"]
        if "finished_at" in h:
            assert status == "finished", (job, h)
        if status == "paused":
            assert "cancelled_at" not in h and "finished_at" not in h, (job, h)
        if status == "cancelled":
            assert "finished_at" not in h, (job, h)


# ---- what the CLI says ----


def test_cancel_on_a_finished_job_says_so(
    scratch_url: str, store: Store, scratch_client: Client
) -> None:
    job = job_in(store, scratch_client, "finished")
    done = run_evalq(bare_env(), "cancel", job, "--redis-url", scratch_url)
    assert done.returncode == 0, done.stderr
    assert f"job {job} already finished: nothing to cancel" in done.stderr
    assert store.status(job) == "finished"
