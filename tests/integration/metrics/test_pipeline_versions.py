"""The model version the API reports reaches every verdict: a real job against the fake
server, read back as a user reads it (`evalq results --format jsonl`, `evalq status --json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_stdout

pytestmark = pytest.mark.integration

JUDGE = "versions-test-judge"  # a judge of its own: no other test's cached reply answers it


def test_every_verdict_of_a_gecko_job_names_the_version_that_answered(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "example")
    job = client.submit("gecko-image", dataset, judge_model=JUDGE).job_id
    assert client.wait(job, timeout_s=240).status == "finished"
    env = worker_env(redis_server.url, fake.url)

    lines = evalq_stdout(env, "results", job, "--format", "jsonl").splitlines()
    rows = [json.loads(line) for line in lines]
    assert rows and all(row["status"] == "scored" for row in rows)
    assert all(row["model_versions"] == {JUDGE: SIMULATED_MODEL_VERSION} for row in rows)
    questions = [q for row in rows for q in row["questions"]]
    assert questions and {q["model_version"] for q in questions} == {SIMULATED_MODEL_VERSION}

    summary = json.loads(evalq_stdout(env, "status", job, "--json"))
    setup = summary["judge_setup"]
    assert setup["judge_models"] == [JUDGE]
    assert setup["model_versions"] == {JUDGE: SIMULATED_MODEL_VERSION}
    assert setup["validator"] == "per-question" and setup["rubric_model"] == JUDGE
    assert set(setup["templates"]) >= {"rubric", "validator"}
    assert setup["thinking"] == {
        role: value for role, value in summary["thinking"].items() if role != "candidate"
    }
