"""No job stuck in silence, with real worker processes: an exception nobody names (google-genai
failing to read a reply the fake server sends malformed, as an SDK's TypeError would) is shown
by `evalq status` and the Prometheus endpoint while the task retries, then fails its row
(online) or pauses the job (batch mode); a batch whose job is gone is cancelled on the server.
Nothing here waits a fixed time or asserts on how long anything took."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_batch_mode import FAST_POLLS, post, shapes
from tests.integration.test_reliability import shapes_dataset
from tests.support.cli import evalq_stdout, scrape_metrics
from tests.support.stack import stack
from worker import keys
from worker.local import wait_for

pytestmark = pytest.mark.integration
RETRIES = {"EVALQ_TASK_ERROR_RETRIES": "2", "EVALQ_TASK_ERROR_BACKOFF_S": "0.2"}
# A 200 reply google-genai can not read (its parts are not a list): a pydantic ValidationError
# escapes the SDK, which no handler names.
MALFORMED = {"candidates": [{"content": {"parts": "not a list"}}]}


def status_json(env: dict[str, str], job_id: str) -> dict[str, Any]:
    return dict(json.loads(evalq_stdout(env, "status", job_id, "--json")))


def test_a_task_error_in_prepare_row_shows_in_status_then_fails_only_its_row(
    tmp_path: Path,
) -> None:
    dataset = shapes_dataset(tmp_path / "data", 3)  # rubrics are generated in prepare_row
    with stack(tmp_path / "stack", **RETRIES) as s:
        env = s.env()
        post(s, "/script", [{"match": "circle #0", "status": 200, "body": MALFORMED}])
        job_id = json.loads(evalq_stdout(env, "run", "gecko-image", str(dataset), "--json"))[
            "job_id"
        ]
        wait_for(
            lambda: (status_json(env, job_id).get("task_errors") or {}).get("count", 0) >= 1,
            120,
            "the task error in `evalq status --json`",
        )
        shown = status_json(env, job_id)["task_errors"]
        assert shown["task"] == "prepare_row"
        assert shown["last_error"].startswith("ValidationError: 1 validation error")
        assert shown["at"] is not None
        summary = s.client().wait(job_id, timeout_s=300)
        assert (summary.status, summary.rows_scored, summary.rows_failed) == ("finished", 2, 1)
        assert summary.task_errors is not None and summary.task_errors.count == 3  # 1 + 2 retries
        (failed,) = [r for r in s.client().results(job_id) if r.status == "failed"]
        assert failed.reason == "judge_error"
        assert (failed.error or "").startswith("internal error in prepare_row: ValidationError")
        assert summary.redrive_capped == 0  # failed by its own error, not by the watchdog's cap
        table = evalq_stdout(env, "status", job_id)
        assert "task errors" in table and "3 · last in prepare_row" in table
        labels = f'job_id="{job_id}",metric="gecko-image"'
        assert f"evalq_job_task_errors{{{labels}}} 3.0" in scrape_metrics(env)


def test_a_task_error_in_poll_batch_pauses_the_job_and_shows_on_its_batch(tmp_path: Path) -> None:
    dataset = shapes(tmp_path / "data", 3)
    with stack(tmp_path / "stack", **FAST_POLLS, **RETRIES) as s:
        env = s.env()
        # The batch's answer to one request is malformed: reading the batch raises.
        post(s, "/script", [{"match": "star\\? \\(check 1\\)", "status": 200, "body": MALFORMED}])
        client = s.client()
        job_id = client.submit("gecko-image", dataset, mode="batch").job_id
        summary = client.wait(job_id, timeout_s=300)
        assert summary.status == "paused"
        reason = summary.pause_reason or ""
        assert reason.startswith("internal error in poll_batch: ValidationError")
        assert f"evalq resume {job_id}" in reason
        assert summary.task_errors is not None
        assert (summary.task_errors.count, summary.task_errors.task) == (3, "poll_batch")
        shown = status_json(env, job_id)
        (batch,) = shown["batches"]
        assert batch["last_error"].startswith("ValidationError")
        assert batch["last_error_at"] is not None
        assert shown["task_errors"]["count"] == 3
        table = evalq_stdout(env, "status", job_id)
        assert "last error" in table and "ValidationError" in table


def test_a_batch_whose_job_is_gone_is_cancelled_on_the_server(tmp_path: Path) -> None:
    dataset = shapes(tmp_path / "data", 3)
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        client = s.client()
        post(s, "/batch-delay", {"delay_s": 3600})  # the batch runs until cancelled
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
