"""The fake server's Batch API, driven over HTTP by the real google-genai client
(client.batches.create/get/list/cancel/delete, client.files.upload/download)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.support.fake_http import http

MODEL = "gemini-2.5-flash"
TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}


def request(text: str) -> dict[str, Any]:
    return {"contents": [{"parts": [{"text": text}], "role": "user"}]}


def wait_until_done(client: genai.Client, name: str) -> types.BatchJob:
    """Poll as a caller would, until the batch reaches a terminal state (a condition, with
    a generous cap only so a broken server fails the test instead of hanging it)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.batches.get(name=name)
        if job.state is not None and job.state.value in TERMINAL:
            return job
        time.sleep(0.02)
    raise AssertionError(f"{name} never finished")


def test_inline_batch_runs_through_its_states_and_answers_each_request(
    client: genai.Client, base_url: str
) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    job = client.batches.create(
        model=MODEL, src=[request("one"), request("two")], config={"display_name": "t"}
    )
    assert job.name is not None and job.name.startswith("batches/")
    assert job.state == types.JobState.JOB_STATE_PENDING
    assert job.display_name == "t"
    assert client.batches.get(name=job.name).state == types.JobState.JOB_STATE_PENDING
    http(base_url, "/batch-delay", {"delay_s": 0})
    done = wait_until_done(client, job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert done.dest is not None and done.dest.inlined_responses is not None
    replies = [r.response for r in done.dest.inlined_responses]
    assert [r.text for r in replies if r is not None] == ["ONE", "TWO"]
    assert all(r is not None and r.model_version == SIMULATED_MODEL_VERSION for r in replies)
    assert done.end_time is not None and done.create_time is not None
    stats = http(base_url, "/stats")[1]
    assert stats["batches"]["created"] == 1
    assert stats["batches"]["requests"] == 2
    assert stats["requests"] == 0  # batch requests are not generateContent calls


def test_file_batch_reads_a_jsonl_upload_and_writes_a_downloadable_jsonl(
    client: genai.Client, tmp_path: Path
) -> None:
    source = tmp_path / "requests.jsonl"
    lines = [{"key": f"k{i}", "request": request(f"row {i}")} for i in range(5)]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    uploaded = client.files.upload(file=source, config={"mime_type": "application/jsonl"})
    assert uploaded.name is not None
    job = client.batches.create(model=MODEL, src=uploaded.name)
    assert job.name is not None
    done = wait_until_done(client, job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert done.dest is not None and done.dest.file_name is not None
    assert done.dest.inlined_responses is None
    out = tmp_path / "out.jsonl"
    client.files.download(file=done.dest.file_name, destination=str(out))
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["key"] for r in results] == [f"k{i}" for i in range(5)]
    texts = [r["response"]["candidates"][0]["content"]["parts"][0]["text"] for r in results]
    assert texts == [f"ROW {i}" for i in range(5)]
    # Uploaded files stay undownloadable, as on Gemini.
    with pytest.raises(errors.ClientError):
        client.files.download(file=uploaded.name)


def test_list_cancel_and_delete(client: genai.Client, base_url: str) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    first = client.batches.create(model=MODEL, src=[request("a")])
    second = client.batches.create(model=MODEL, src=[request("b")])
    assert first.name is not None and second.name is not None
    listed = [job.name for job in client.batches.list(config={"page_size": 1})]
    assert listed == [second.name, first.name]  # newest first, across pages
    client.batches.cancel(name=first.name)
    cancelled = client.batches.get(name=first.name)
    assert cancelled.state == types.JobState.JOB_STATE_CANCELLED
    assert cancelled.dest is None
    client.batches.delete(name=second.name)
    with pytest.raises(errors.ClientError) as caught:
        client.batches.get(name=second.name)
    assert caught.value.code == 404


def test_a_scripted_error_fails_one_request_and_the_rest_succeed(
    client: genai.Client, base_url: str
) -> None:
    http(base_url, "/script", [{"match": "poison", "status": 400}])
    job = client.batches.create(model=MODEL, src=[request("fine"), request("poison pill")])
    assert job.name is not None
    done = wait_until_done(client, job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert done.dest is not None and done.dest.inlined_responses is not None
    ok, failed = done.dest.inlined_responses
    assert ok.response is not None and ok.response.text == "FINE"
    assert failed.response is None and failed.error is not None
    assert failed.error.code == 400


def test_a_batch_state_rule_ends_the_batch_expired_once(
    client: genai.Client, base_url: str
) -> None:
    http(base_url, "/script", [{"match": "slow", "batch_state": "EXPIRED", "times": 1}])
    job = client.batches.create(model=MODEL, src=[request("slow one")])
    assert job.name is not None
    expired = wait_until_done(client, job.name)
    assert expired.state == types.JobState.JOB_STATE_EXPIRED
    assert expired.dest is None
    again = client.batches.create(model=MODEL, src=[request("slow one")])
    assert again.name is not None
    assert wait_until_done(client, again.name).state == types.JobState.JOB_STATE_SUCCEEDED
    assert http(base_url, "/stats")[1]["batches"]["ended"] == {"EXPIRED": 1, "SUCCEEDED": 1}


def test_a_batch_state_rule_never_touches_online_calls(client: genai.Client, base_url: str) -> None:
    http(base_url, "/script", [{"match": "slow", "batch_state": "FAILED"}])
    reply = client.models.generate_content(model=MODEL, contents="slow one")
    assert reply.text == "SLOW ONE"


def test_inline_batches_over_the_documented_limit_are_refused(
    client: genai.Client, base_url: str
) -> None:
    big = "x" * (21 * 1024 * 1024)
    status, body = http(
        base_url,
        f"/v1beta/models/{MODEL}:batchGenerateContent",
        {"batch": {"inputConfig": {"requests": {"requests": [{"request": request(big)}]}}}},
    )
    assert status == 400 and "JSONL file" in body["error"]["message"]
    assert http(base_url, "/stats")[1]["batches"]["created"] == 0


def test_unknown_batches_are_not_found(client: genai.Client) -> None:
    with pytest.raises(errors.ClientError) as caught:
        client.batches.get(name="batches/nope")
    assert caught.value.code == 404


def test_a_batch_can_be_held_running_and_released(client: genai.Client, base_url: str) -> None:
    assert http(base_url, "/batch-delay", {"pending_s": 0, "running_s": 3600})[0] == 200
    job = client.batches.create(model=MODEL, src=[request("held")])
    assert job.name is not None
    deadline = time.monotonic() + 60
    while client.batches.get(name=job.name).state != types.JobState.JOB_STATE_RUNNING:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert http(base_url, "/batch-delay", {"running_s": 0})[1] == {"pending_s": 0, "running_s": 0}
    assert wait_until_done(client, job.name).state == types.JobState.JOB_STATE_SUCCEEDED
    assert http(base_url, "/batch-delay", {"running_s": -1})[0] == 400
