"""A real worker runs only evalq's own tasks: a Celery built-in (`celery.backend_cleanup`,
`celery.accumulate`, which returns what it is given) anyone can push to its queue is logged and
dropped (not requeued, not held unacked), NotRegistered its result; the next job runs through."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.local import wait_for
from evalq.worker.celery_app.app import create_app
from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
from evalq.worker.settings import Settings
from tests.support.cli import TIMEOUT_S
from tests.support.stack import stack

pytestmark = pytest.mark.integration


def test_a_worker_refuses_celerys_built_in_tasks_and_runs_the_next_job(tmp_path: Path) -> None:
    from evalq.examples.ratings import write_pairwise_example

    data = write_pairwise_example(tmp_path / "data")
    with stack(tmp_path / "stack", concurrency=2) as s:
        app = create_app(Settings(redis_url=s.redis.url))
        cleanup = app.send_task("celery.backend_cleanup", queue=QUEUE_QUESTIONS)
        accumulate = app.send_task("celery.accumulate", args=(7,), queue=QUEUE_ROWS)
        for sent in (cleanup, accumulate):
            sent.get(timeout=TIMEOUT_S, propagate=False)  # a cap, not an expectation
            assert sent.state == "FAILURE", (sent.task_id, sent.state, sent.result)
            assert type(sent.result).__name__ == "NotRegistered", sent.result
        redis = s.redis_client()
        assert redis.llen(QUEUE_QUESTIONS) == redis.llen(QUEUE_ROWS) == 0
        assert redis.hlen("unacked") == 0  # rejected for good, never to be redelivered
        for name, sent in (("celery.backend_cleanup", cleanup), ("celery.accumulate", accumulate)):
            line = f"refused task {name!r} (id {sent.task_id})"
            wait_for(lambda line=line: line in s.pool.logs(), TIMEOUT_S, line)

        client = s.client()
        job = client.submit("pairwise", data).job_id
        summary = client.wait(job, timeout_s=TIMEOUT_S)
        assert summary.status == "finished" and summary.rows_done == summary.rows_total > 0
