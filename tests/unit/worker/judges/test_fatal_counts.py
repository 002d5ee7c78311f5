"""Identical refusals pause a job (evalq.worker.judges.fatal_errors), counted in Redis. After `evalq
resume`, calls sent before it may still come back with the old cause's refusal: with 200 greenlets
that is enough to pause the fixed job again. A refusal counts only if its call was sent after the
job's last resume, by Redis's clock less the call's own duration (no host clocks compared)."""

from __future__ import annotations

import pytest

from evalq.core.errors import BadRequest, JobHalted
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.worker.judges import fatal_errors
from evalq.worker.judges.fatal_errors import FatalErrorGuard
from evalq.worker.store import Store
from tests.support.scratch import plant_job

REFUSAL = "403 PERMISSION_DENIED: Your API key was reported as leaked"


def test_refusals_count_per_signature_and_restart_on_resume(store: Store) -> None:
    job = plant_job(store, 1)
    assert [store.count_fatal(job, "m: a") for _ in range(3)] == [1, 2, 3]
    assert store.count_fatal(job, "m: b") == 1
    store.clear_fatal(job)
    assert store.count_fatal(job, "m: a") == 1


def test_a_refusal_of_a_call_sent_before_the_resume_is_not_counted(store: Store) -> None:
    job = plant_job(store, 1)
    assert store.count_fatal(job, "m: a", call_s=3600.0) == 1  # never resumed: every one counts
    store.clear_fatal(job)
    assert store.count_fatal(job, "m: a", call_s=3600.0) == 0  # sent an hour before the resume
    assert store.count_fatal(job, "m: a", call_s=0.0) == 1


class Refusing:
    """A judge whose every call is refused; `during` runs while the call is in flight."""

    model = "gemini-test"

    def __init__(self, during: object = None) -> None:
        self.during = during

    def generate(self, request: JudgeRequest) -> JudgeReply:
        if callable(self.during):
            self.during()
        raise BadRequest(REFUSAL)


def _call(guard: FatalErrorGuard) -> None:
    guard.generate(JudgeRequest(prompt="p"))


def test_the_guard_pauses_at_its_limit(store: Store) -> None:
    job = plant_job(store, 1)
    guard = FatalErrorGuard(Refusing(), store, job, limit=2)
    with pytest.raises(BadRequest):
        _call(guard)
    with pytest.raises(JobHalted):
        _call(guard)
    assert store.status(job) == "paused"
    assert REFUSAL in (store.pause_reason(job) or "")


def test_a_refusal_in_flight_across_a_resume_does_not_pause_the_resumed_job(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = plant_job(store, 1)
    for _ in range(3):  # the old cause's refusals, counted before the "fix"
        store.count_fatal(job, f"gemini-test: {REFUSAL}")
    # The call is sent; the job is resumed (counts restart) while it is in flight; the refusal
    # comes back 2 s after it was sent (the guard's clock, as a slow call would read it).
    ticks = iter([100.0, 102.0])
    monkeypatch.setattr(fatal_errors, "monotonic", lambda: next(ticks), raising=False)
    guard = FatalErrorGuard(Refusing(during=lambda: store.clear_fatal(job)), store, job, limit=1)
    with pytest.raises(BadRequest):  # unscored like any failed call, not a pause
        _call(guard)
    assert store.status(job) == "running"
    # A call sent after the resume and refused counts, and pauses at the limit of 1.
    ticks = iter([200.0, 200.0])  # an instant call, sent after the resume
    with pytest.raises(JobHalted):
        _call(FatalErrorGuard(Refusing(), store, job, limit=1))
    assert store.status(job) == "paused"
