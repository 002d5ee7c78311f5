"""The Prometheus endpoint: job figures read from Redis at scrape time, served over HTTP."""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EVALQ, ROOT, FakeGemini, RedisServer, worker_env
from tests.integration.test_pipeline_gecko import png, write_rows
from worker.local import free_port, stop, wait_for

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
    port = free_port()
    proc = subprocess.Popen(
        [*EVALQ, "metrics", "--port", str(port)],
        cwd=ROOT,
        env=worker_env(redis_server.url, fake.url),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:

        def scrape() -> str:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/metrics", timeout=5
                ) as response:
                    return str(response.read().decode())
            except OSError:
                return ""

        wait_for(lambda: bool(scrape()), 30, "the metrics endpoint")
        text = scrape()
    finally:
        stop(proc)
    labels = f'job_id="{job}",metric="gecko-image"'
    assert f"evalq_job_rows_total{{{labels}}} 1.0" in text
    assert f"evalq_job_rows_done{{{labels}}} 1.0" in text
    assert f"evalq_job_mean_score{{{labels}}} 1.0" in text
    assert f'evalq_job_unscored_questions{{{labels},reason="parse_error"}} 1.0' in text
    assert f'evalq_job_status{{{labels},status="finished"}} 1.0' in text
    assert f"evalq_job_judge_calls{{{labels}}} 2.0" in text
