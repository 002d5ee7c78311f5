"""Real error bodies replayed by the fake server while real jobs run: a refusal every call
would get stops the job with one clear reason instead of burning through its rows, and a 429
that never says when to come back is given up on after a capped total time."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini
from tests.support.datasets import marked_rows, one_row, png, write_rows, yes_no
from tests.support.recorded import recorded_error
from tests.support.stack import stack

pytestmark = pytest.mark.integration


def body(name: str) -> Any:
    return recorded_error(name)["body"]


def test_the_same_refusal_on_every_call_stops_the_job_with_that_reason(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "yellow")
    rows = marked_rows(image, "Fx", 40, 3)
    units = 40 * 3
    fake.script([{"match": "Fx-", "status": 403, "body": body("403_leaked_key")}])
    job = client.submit("gecko-image", write_rows(tmp_path / "d.jsonl", rows)).job_id
    paused = client.wait(job, timeout_s=120)
    assert paused.status == "paused"
    assert paused.pause_reason is not None
    assert "5 identical refusals" in paused.pause_reason
    assert "403 PERMISSION_DENIED: Your API key was reported as leaked" in paused.pause_reason
    refused = fake.stats()["by_status"].get("403", 0)
    assert 5 <= refused < units // 2  # it did not burn through the rows
    # With the cause fixed, resume finishes it; only the refusals before the pause stay unscored.
    fake.script([{"match": "Fx-", "reply": "yes"}])
    client.resume(job)
    done = client.wait(job, timeout_s=120)
    assert done.status == "finished", done.pause_reason
    assert done.rows_done == 40
    assert done.unscored_by_reason.get("judge_error", 0) < refused


def test_a_429_that_never_says_when_is_given_up_after_the_total_cap(tmp_path: Path) -> None:
    env = {"EVALQ_RATE_LIMIT_MAX_TOTAL_S": "3", "EVALQ_MAX_RETRY_DELAY_S": "1"}
    with stack(tmp_path, **env) as s:
        client = s.client()
        rule = {"match": "Cap-", "status": 429, "body": body("429_no_details")}
        request = json.dumps([rule]).encode()
        urllib.request.urlopen(
            urllib.request.Request(
                s.gemini_url + "/script",
                data=request,
                headers={"Content-Type": "application/json"},
            ),
            timeout=10,
        ).close()
        image = png(tmp_path / "a.png")
        data = one_row(image, [yes_no("Cap-1?")])
        job = client.submit("gecko-image", data).job_id
        summary = client.wait(job, timeout_s=120)
        (row,) = client.results(job)
        assert summary.status == "finished"
        assert summary.unscored_by_reason == {"judge_error": 1}
        (question,) = row.questions
        assert question.reason == "judge_error"
        assert question.detail is not None
        assert "EVALQ_RATE_LIMIT_MAX_TOTAL_S=3" in question.detail
        assert "no retry delay given" in question.detail
        # far fewer attempts than EVALQ_RATE_LIMIT_MAX_RETRIES (30) would have allowed
        assert 2 <= s.stats()["by_status"]["429"] < 30


def test_a_200_reply_the_sdk_cannot_read_fails_the_row_at_once_with_one_paid_call(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    """The rubric call gets a 200 body google-genai raises on while reading it: the row fails
    as the reply's parse_error, at once, with the SDK's error, after exactly one call (not a
    dead task the watchdog re-drives five times, six paid calls, with the error only in a log)."""
    image = png(tmp_path / "a.png", "yellow")
    unreadable = {
        "candidates": [
            {"content": {"role": "model", "parts": "not a list"}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 77, "candidatesTokenCount": 5},
    }
    fake.script([{"match": "UNREADABLE-RUBRIC", "status": 200, "body": unreadable}])
    rows = [
        {"id": "odd", "prompt": "a yellow square UNREADABLE-RUBRIC", "image": str(image)},
        {"id": "control", "prompt": "a yellow square", "image": str(image)},
    ]
    job = client.submit("gecko-image", write_rows(tmp_path / "d.jsonl", rows)).job_id
    summary = client.wait(job, timeout_s=120)
    assert summary.status == "finished" and summary.redriven == 0
    results = {r.id: r for r in client.results(job)}
    assert results["odd"].status == "failed" and results["odd"].reason == "parse_error"
    assert "google-genai could not read the reply" in (results["odd"].error or "")
    assert results["control"].status == "scored"
    assert fake.stats()["script_rules_fired"] == {"0": 1}
