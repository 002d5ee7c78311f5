"""The fake server's Batch API, driven over HTTP by the real google-genai client
(client.batches.create/get/list/cancel/delete, client.files.upload/download)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from google import genai
from google.genai import errors, types

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.support.fake_calls import wait_until_done
from tests.support.fake_http import UpperBrain, http, serve_module, user_request

MODEL = "gemini-2.5-flash"


base_url = serve_module(UpperBrain())


def test_inline_batch_runs_through_its_states_and_answers_each_request(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    job = genai_client.batches.create(
        model=MODEL, src=[user_request("one"), user_request("two")], config={"display_name": "t"}
    )
    assert job.name is not None and job.name.startswith("batches/")
    assert job.state == types.JobState.JOB_STATE_PENDING
    assert job.display_name == "t"
    assert genai_client.batches.get(name=job.name).state == types.JobState.JOB_STATE_PENDING
    http(base_url, "/batch-delay", {"delay_s": 0})
    done = wait_until_done(genai_client, job.name)
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
    genai_client: genai.Client, tmp_path: Path
) -> None:
    source = tmp_path / "requests.jsonl"
    lines = [{"key": f"k{i}", "request": user_request(f"row {i}")} for i in range(5)]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    uploaded = genai_client.files.upload(file=source, config={"mime_type": "application/jsonl"})
    assert uploaded.name is not None
    job = genai_client.batches.create(model=MODEL, src=uploaded.name)
    assert job.name is not None
    done = wait_until_done(genai_client, job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert done.dest is not None and done.dest.file_name is not None
    assert done.dest.inlined_responses is None
    out = tmp_path / "out.jsonl"
    genai_client.files.download(file=done.dest.file_name, destination=str(out))
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["key"] for r in results] == [f"k{i}" for i in range(5)]
    texts = [r["response"]["candidates"][0]["content"]["parts"][0]["text"] for r in results]
    assert texts == [f"ROW {i}" for i in range(5)]
    # Uploaded files stay undownloadable, as on Gemini.
    with pytest.raises(errors.ClientError):
        genai_client.files.download(file=uploaded.name)


def test_list_cancel_and_delete(genai_client: genai.Client, base_url: str) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    first = genai_client.batches.create(model=MODEL, src=[user_request("a")])
    second = genai_client.batches.create(model=MODEL, src=[user_request("b")])
    assert first.name is not None and second.name is not None
    listed = [job.name for job in genai_client.batches.list(config={"page_size": 1})]
    assert listed == [second.name, first.name]  # newest first, across pages
    genai_client.batches.cancel(name=first.name)
    cancelled = genai_client.batches.get(name=first.name)
    assert cancelled.state == types.JobState.JOB_STATE_CANCELLED
    assert cancelled.dest is None
    genai_client.batches.delete(name=second.name)
    with pytest.raises(errors.ClientError) as caught:
        genai_client.batches.get(name=second.name)
    assert caught.value.code == 404


def test_a_scripted_error_fails_one_request_and_the_rest_succeed(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/script", [{"match": "poison", "status": 400}])
    job = genai_client.batches.create(
        model=MODEL, src=[user_request("fine"), user_request("poison pill")]
    )
    assert job.name is not None
    done = wait_until_done(genai_client, job.name)
    assert done.state == types.JobState.JOB_STATE_SUCCEEDED
    assert done.dest is not None and done.dest.inlined_responses is not None
    ok, failed = done.dest.inlined_responses
    assert ok.response is not None and ok.response.text == "FINE"
    assert failed.response is None and failed.error is not None
    assert failed.error.code == 400


def test_a_batch_state_rule_ends_the_batch_expired_once(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/script", [{"match": "slow", "batch_state": "EXPIRED", "times": 1}])
    job = genai_client.batches.create(model=MODEL, src=[user_request("slow one")])
    assert job.name is not None
    expired = wait_until_done(genai_client, job.name)
    assert expired.state == types.JobState.JOB_STATE_EXPIRED
    assert expired.dest is None
    again = genai_client.batches.create(model=MODEL, src=[user_request("slow one")])
    assert again.name is not None
    assert wait_until_done(genai_client, again.name).state == types.JobState.JOB_STATE_SUCCEEDED
    assert http(base_url, "/stats")[1]["batches"]["ended"] == {"EXPIRED": 1, "SUCCEEDED": 1}


def test_a_batch_state_rule_never_touches_online_calls(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/script", [{"match": "slow", "batch_state": "FAILED"}])
    reply = genai_client.models.generate_content(model=MODEL, contents="slow one")
    assert reply.text == "SLOW ONE"


def test_inline_batches_over_the_documented_limit_are_refused(
    genai_client: genai.Client, base_url: str
) -> None:
    big = "x" * (21 * 1024 * 1024)
    status, body = http(
        base_url,
        f"/v1beta/models/{MODEL}:batchGenerateContent",
        {"batch": {"inputConfig": {"requests": {"requests": [{"request": user_request(big)}]}}}},
    )
    assert status == 400 and "JSONL file" in body["error"]["message"]
    assert http(base_url, "/stats")[1]["batches"]["created"] == 0


def test_unknown_batches_are_not_found(genai_client: genai.Client) -> None:
    with pytest.raises(errors.ClientError) as caught:
        genai_client.batches.get(name="batches/nope")
    assert caught.value.code == 404


def test_a_batch_can_be_held_running_and_released(
    genai_client: genai.Client, base_url: str
) -> None:
    assert http(base_url, "/batch-delay", {"pending_s": 0, "running_s": 3600})[0] == 200
    job = genai_client.batches.create(model=MODEL, src=[user_request("held")])
    assert job.name is not None
    deadline = time.monotonic() + 60
    while genai_client.batches.get(name=job.name).state != types.JobState.JOB_STATE_RUNNING:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert http(base_url, "/batch-delay", {"running_s": 0})[1] == {"pending_s": 0, "running_s": 0}
    assert wait_until_done(genai_client, job.name).state == types.JobState.JOB_STATE_SUCCEEDED
    assert http(base_url, "/batch-delay", {"running_s": -1})[0] == 400
