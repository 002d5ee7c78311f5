"""Thinking per role, end to end: real Redis, real workers, the fake server over HTTP. What each
role sends, what the job records, the call cache keyed by it, and settings refused at submit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import DatasetError
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import run_evalq
from tests.support.datasets import one_question_row, one_row, png, write_rows, yes_no
from tests.support.stores import store_of

pytestmark = pytest.mark.integration


def events(fake: FakeGemini, model: str) -> list[dict[str, Any]]:
    return [e for e in fake.stats()["events"] if e["model"] == model]


def test_each_role_sends_its_own_thinking_and_the_job_records_it(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    """gemini-2.5-pro can't switch thinking off: the validator sends its minimum (128), the
    rubric writer a modest 1024, each with room for the answer after it."""
    rows = [
        {
            "id": color,
            "prompt": f"a {color} circle",
            "image": str(png(tmp_path / f"{color}.png", color)),
        }
        for color in ("red", "blue")
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    job = client.submit("gecko-image", data, judge_model="gemini-2.5-pro", use_cache=False).job_id
    summary = client.wait(job, timeout_s=120)
    assert summary.status == "finished"
    # Gecko's two roles only: the summary names no role the metric never calls.
    assert summary.thinking == {"rubric": "modest", "validator": "min"}
    sent = [(e["thinking_budget"], e["max_output_tokens"]) for e in events(fake, "gemini-2.5-pro")]
    rubric = [s for s in sent if s == (1024, 4096 + 1024)]
    validator = [s for s in sent if s == (128, 4096 + 128)]
    assert len(rubric) >= 2 and len(validator) >= 2
    assert len(rubric) + len(validator) == len(sent)  # nothing went without its role's thinking
    # Thoughts are counted apart from the answers: 128 per validator call at least.
    assert summary.thought_tokens >= 128 * len(validator)
    assert summary.output_tokens > 0


def test_per_job_thinking_is_part_of_the_call_cache_key(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "green")
    fake.script([{"match": "Tk-", "reply": "yes"}])
    questions = [yes_no("Tk-one?"), yes_no("Tk-two?")]
    data = one_row(image, questions)

    def run(**thinking: int | str) -> list[dict[str, Any]]:
        fake.reset()
        job = client.submit("gecko-image", data, judge_model="gemini-2.5-flash", thinking=thinking)
        summary = client.wait(job.job_id, timeout_s=60)
        assert summary.status == "finished" and summary.mean_score == 1.0
        return events(fake, "gemini-2.5-flash")

    first = run()
    assert {e["thinking_budget"] for e in first} <= {0}  # flash: validator thinking off
    changed = run(validator=256)
    assert len(changed) == 2  # a different budget is a different call: asked again
    assert {(e["thinking_budget"], e["max_output_tokens"]) for e in changed} == {(256, 4096 + 256)}
    assert run(validator=256) == []  # the same budget again: served from the cache


def test_a_budget_the_model_refuses_is_refused_at_submit(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = one_question_row(tmp_path)
    jobs_before = store_of(client).list_jobs()
    with pytest.raises(DatasetError) as caught:
        client.submit("gecko-image", data, judge_model="gemini-2.5-pro", thinking={"validator": 0})
    assert "gemini-2.5-pro" in str(caught.value)
    assert "128..32768" in str(caught.value)
    with pytest.raises(
        DatasetError, match=r"gemini-2\.5-flash takes a thinking budget, not a level"
    ):
        client.submit("gecko-image", data, thinking={"judge": "high"})
    assert store_of(client).list_jobs() == jobs_before  # nothing was stored or enqueued
    assert fake.stats()["requests"] == 0


def test_cli_thinking_flags(redis_server: RedisServer, fake: FakeGemini, tmp_path: Path) -> None:
    data = one_question_row(tmp_path)
    env = worker_env(redis_server.url, fake.url)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_evalq(env, "run", "gecko-image", str(data), *args)

    refused = cli("--judge-model", "gemini-2.5-flash-lite", "--thinking-budget", "validator=100")
    assert refused.returncode == 2
    assert "gemini-2.5-flash-lite" in refused.stderr and "512..24576" in refused.stderr
    bad_flag = cli("--thinking-level", "validator=512")
    assert bad_flag.returncode == 2 and "--thinking-level" in bad_flag.stderr
    accepted = cli(
        "--thinking-budget", "validator=64", "--thinking-budget", "rubric=2048", "--json"
    )
    assert accepted.returncode == 0, accepted.stderr
    summary = json.loads(accepted.stdout)
    assert summary["thinking"]["validator"] == 64 and summary["thinking"]["rubric"] == 2048
