"""No job stuck in silence, with real worker processes. The fault: a row's stored plan that does
not fit its metric (as an older evalq's would be), planted before the job's first task runs, so
reading it raises StoredPlanError, which no task handler names. `evalq status` and the
Prometheus endpoint show it while the task retries; then the row fails with it (online) or the
job pauses with it and `evalq resume` finishes the job once the plan is gone (batch mode). A
batch whose job is gone from Redis is cancelled on the server. Nothing here waits a fixed time
or asserts on how long anything took.

One stack for the module, its workers retrying a task error twice and polling batches often:
each test starts from the fake's counters at zero, its datasets share no cached reply with
another's (each its own rows or question tag), and what it changes on the fake it puts back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.worker.store import keys
from tests.support.batches import FAST_POLLS, shapes
from tests.support.cli import evalq_stdout, scrape_metrics
from tests.support.shapes import shapes_dataset
from tests.support.stack import Stack, stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration
RETRIES = {"EVALQ_TASK_ERROR_RETRIES": "2", "EVALQ_TASK_ERROR_BACKOFF_S": "0.2"}
FOREIGN_PLAN = json.dumps({"units": "not a list"})  # what no metric's plan model reads


class _Holding:
    """Stands in for a client's Celery app while it submits: what it would publish is held."""

    def __init__(self) -> None:
        self.held: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def producer_or_acquire(self, producer: Any = None) -> AbstractContextManager[Any]:
        return nullcontext(producer)

    def send_task(self, name: str, args: Any = (), **options: Any) -> None:
        options.pop("producer", None)
        self.held.append((name, tuple(args), options))


@contextmanager
def held_until_planted(client: Any) -> Iterator[None]:
    """The job's first messages go out when the block ends, so what it plants is there first."""
    real, holding = client.app, _Holding()
    client.app = holding
    try:
        yield
    finally:
        client.app = real
    for name, args, options in holding.held:
        real.send_task(name, args, **options)


@pytest.fixture(scope="module")
def task_errors_stack_started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("stack"), **FAST_POLLS, **RETRIES) as started:
        yield started


@pytest.fixture
def task_errors_stack(task_errors_stack_started: Stack) -> Stack:
    """The module's stack, the fake's counters and batches cleared for this test."""
    task_errors_stack_started.reset_stats()
    return task_errors_stack_started


def plant_foreign_plan(client: Any, job_id: str, line: str) -> None:
    store_of(client).r.set(keys.plan(job_id, line), FOREIGN_PLAN, ex=3600)


def status_json(env: dict[str, str], job_id: str) -> dict[str, Any]:
    return dict(json.loads(evalq_stdout(env, "status", job_id, "--json")))


def test_a_task_error_in_prepare_row_shows_in_status_then_fails_only_its_row(
    task_errors_stack: Stack, tmp_path: Path
) -> None:
    s = task_errors_stack
    dataset = shapes_dataset(tmp_path / "data", 3)
    env, client = s.env(), s.client()
    with held_until_planted(client):
        job_id = client.submit("gecko-image", dataset).job_id
        plant_foreign_plan(client, job_id, "1")
    wait_for(
        lambda: (status_json(env, job_id).get("task_errors") or {}).get("count", 0) >= 1,
        120,
        "the task error in `evalq status --json`",
    )
    shown = status_json(env, job_id)["task_errors"]
    assert shown["task"] == "prepare_row"
    assert shown["last_error"].startswith(f"StoredPlanError: job {job_id}, row on line 1")
    assert shown["at"] is not None
    summary = client.wait(job_id, timeout_s=300)
    assert (summary.status, summary.rows_scored, summary.rows_failed) == ("finished", 2, 1)
    assert summary.task_errors is not None and summary.task_errors.count == 3  # 1 + 2 retries
    (failed,) = [r for r in client.results(job_id) if r.status == "failed"]
    assert (failed.line, failed.reason) == (1, "judge_error")
    assert (failed.error or "").startswith("internal error in prepare_row: StoredPlanError")
    assert summary.redrive_capped == 0  # failed by its own error, not by the watchdog's cap
    table = evalq_stdout(env, "status", job_id)
    assert "task errors" in table and "3 · last in prepare_row" in table
    labels = f'job_id="{job_id}",metric="gecko-image"'
    assert f"evalq_job_task_errors{{{labels}}} 3.0" in scrape_metrics(env)


def test_a_task_error_in_a_batch_sweep_pauses_the_job_and_resume_finishes_it(
    task_errors_stack: Stack, tmp_path: Path
) -> None:
    s = task_errors_stack
    dataset = shapes(tmp_path / "data", 3, tag="sweep")
    env, client = s.env(), s.client()
    with held_until_planted(client):
        job_id = client.submit("gecko-image", dataset, mode="batch").job_id
        plant_foreign_plan(client, job_id, "2")
    summary = client.wait(job_id, timeout_s=300)
    assert summary.status == "paused"
    reason = summary.pause_reason or ""
    assert reason.startswith("internal error in submit_batch: StoredPlanError")
    assert f"evalq resume {job_id}" in reason
    shown = status_json(env, job_id)["task_errors"]
    assert (shown["count"], shown["task"]) == (3, "submit_batch")
    assert "task errors" in evalq_stdout(env, "status", job_id)
    assert client.batches(job_id) == []  # nothing was sent
    store_of(client).r.delete(keys.plan(job_id, "2"))  # the cause is fixed
    evalq_stdout(env, "resume", job_id)
    summary = client.wait(job_id, timeout_s=300)
    assert (summary.status, summary.rows_scored) == ("finished", 3)
    assert s.stats()["batches"]["created"] == 1


def test_a_batch_whose_job_is_gone_is_cancelled_on_the_server(
    task_errors_stack: Stack, tmp_path: Path
) -> None:
    s = task_errors_stack
    dataset = shapes(tmp_path / "data", 3, tag="gone")
    s.post("/batch-delay", {"delay_s": 3600})  # the batch runs until cancelled
    try:
        client = s.client()
        job_id = client.submit("gecko-image", dataset, mode="batch").job_id
        wait_for(lambda: any(r.name for r in client.batches(job_id)), 120, "a batch created")
        redis = s.redis_client()
        for key in redis.scan_iter(keys.job(job_id) + "*"):  # Redis lost the job's data
            redis.delete(key)
        wait_for(
            lambda: s.stats()["batches"]["ended"] == {"CANCELLED": 1},
            120,
            "the gone job's batch cancelled on the server",
        )
        assert s.stats()["batches"]["created"] == 1
    finally:
        s.post("/batch-delay", {"delay_s": 0})  # as the stack started
