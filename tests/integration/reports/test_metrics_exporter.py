"""The Prometheus endpoint: job figures read from Redis at scrape time, served over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import scrape_metrics
from tests.support.datasets import png, write_rows

pytestmark = pytest.mark.integration


def test_metrics_endpoint_reports_job_figures(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "green")
    fake.script([{"match": "Mq-y", "reply": "yes"}, {"match": "Mq-x", "reply": "Hmm."}])
    rows = [
        {
            "id": "a",
            "prompt": "p",
            "image": str(image),
            "questions": [
                {"question": "Mq-y?", "answer": "yes"},
                {"question": "Mq-x?", "answer": "yes"},
            ],
        }
    ]
    job = client.submit("gecko-image", write_rows(tmp_path / "d.jsonl", rows)).job_id
    client.wait(job, timeout_s=60)
    text = scrape_metrics(worker_env(redis_server.url, fake.url))
    labels = f'job_id="{job}",metric="gecko-image"'
    assert f"evalq_job_rows_total{{{labels}}} 1.0" in text
    assert f"evalq_job_rows_done{{{labels}}} 1.0" in text
    assert f"evalq_job_mean_score{{{labels}}} 1.0" in text
    assert f'evalq_job_unscored_questions{{{labels},reason="parse_error"}} 1.0' in text
    assert f'evalq_job_status{{{labels},status="finished"}} 1.0' in text
    assert f"evalq_job_judge_calls{{{labels}}} 2.0" in text
