"""The batch realism switches: each reshapes the fake's Batch API the way the real service has
been seen to answer (docs/architecture/gemini-facts.md), read through the real google-genai client where
the point is what the client makes of it, and from the raw JSON where the point is the wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pydantic
import pytest
from google import genai
from google.genai import types

from devtools.local import ROOT
from evalq.fake_gemini.options import ServerOptions
from evalq.fake_gemini.realism import BatchRealism
from evalq.fake_gemini.serving import running_server
from tests.support.fake_calls import wait_until_done
from tests.support.fake_http import UpperBrain, http, serve_module, user_request

MODEL = "gemini-2.5-flash"
POLL_CAP_S = 60  # only so a broken server fails a test instead of hanging it


def realism(base_url: str, **switches: object) -> dict[str, Any]:
    status, body = http(base_url, "/batch-realism", switches)
    assert status == 200, body
    return dict(body)


base_url = serve_module(UpperBrain())


def inline(texts: list[str]) -> list[dict[str, Any]]:
    return [{**user_request(t), "metadata": {"row": t}} for t in texts]


def raw_batch(base_url: str, name: str) -> dict[str, Any]:
    """batches.get as the wire carries it, before the client reads it."""
    status, body = http(base_url, f"/v1beta/{name}")
    assert status == 200, body
    return dict(body)


def raw_until_done(base_url: str, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + POLL_CAP_S
    while time.monotonic() < deadline:
        body = raw_batch(base_url, name)
        if body["done"]:
            return body
        time.sleep(0.02)
    raise AssertionError(f"{name} never finished")


def create_batch(client: genai.Client, src: Any) -> str:
    job = client.batches.create(model=MODEL, src=src)
    assert job.name is not None
    return job.name


def file_batch(client: genai.Client, tmp_path: Path, texts: list[str]) -> str:
    source = tmp_path / "requests.jsonl"
    lines = [{"key": f"k-{t}", "request": user_request(t)} for t in texts]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    uploaded = client.files.upload(file=source, config={"mime_type": "application/jsonl"})
    assert uploaded.name is not None
    return create_batch(client, uploaded.name)


def results_lines(client: genai.Client, file_name: str, tmp_path: Path) -> list[str]:
    out = tmp_path / "results.jsonl"
    client.files.download(file=file_name, destination=str(out))
    return out.read_text().splitlines()


def inlined_texts(job: types.BatchJob) -> list[str | None]:
    assert job.dest is not None and job.dest.inlined_responses is not None
    return [r.response.text if r.response else None for r in job.dest.inlined_responses]


# ---- the switches as an API ------------------------------------------------------------------


def test_post_replaces_the_whole_set_and_answers_with_the_active_switches(base_url: str) -> None:
    assert realism(base_url, reorder=True, late_output=True) == {"reorder": True, "late_output": 2}
    assert realism(base_url, no_metadata=True, late_output=-1) == {
        "no_metadata": True,
        "late_output": -1,
    }
    assert http(base_url, "/batch-realism") == (200, {"no_metadata": True, "late_output": -1})
    assert http(base_url, "/stats")[1]["batches"]["realism"] == {
        "no_metadata": True,
        "late_output": -1,
    }
    assert realism(base_url, reorder=False, late_output=0) == {}
    every = {name: True for name in BatchRealism().__dataclass_fields__}
    assert realism(base_url, **every) == {**every, "late_output": 2}
    assert realism(base_url) == {}


@pytest.mark.parametrize(
    ("payload", "complaint"),
    [
        ({"reordr": True}, "unknown batch realism switch"),
        ({"reorder": 1}, "true or false"),
        ({"late_output": -2}, "late_output"),
        ({"late_output": "3"}, "late_output"),
        (["reorder"], "JSON object"),
    ],
)
def test_bad_switches_are_refused_and_change_nothing(
    base_url: str, payload: object, complaint: str
) -> None:
    realism(base_url, reorder=True)
    status, body = http(base_url, "/batch-realism", payload)
    assert status == 400 and complaint in body["error"]["message"]
    assert http(base_url, "/batch-realism")[1] == {"reorder": True}
    realism(base_url)


def test_startup_switches_come_back_on_reset_and_bad_ones_fail_at_startup() -> None:
    with running_server(brain=UpperBrain(), batch_realism={"reorder": True}) as url:
        assert http(url, "/batch-realism")[1] == {"reorder": True}
        assert realism(url) == {}
        assert http(url, "/reset", {})[0] == 200
        assert http(url, "/batch-realism")[1] == {"reorder": True}
    with pytest.raises(ValueError, match="unknown batch realism"):
        ServerOptions(batch_realism={"shuffle": True})


def test_the_cli_flag_sets_the_startup_switches() -> None:
    command = [
        sys.executable,
        "-m",
        "evalq.fake_gemini",
        "--port",
        "0",
        "--batch-realism",
        "reorder,grpc_errors,late_output=3",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            base = line.removeprefix("fake-gemini listening on ").split(" ")[0]
            assert http(base, "/batch-realism")[1] == {
                "reorder": True,
                "grpc_errors": True,
                "late_output": 3,
            }
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_the_command_line_form_reads_names_values_and_json() -> None:
    assert BatchRealism.from_cli("reorder, late_output=true,bad_line=false").active() == {
        "reorder": True,
        "late_output": 2,
    }
    assert BatchRealism.from_cli('{"late_output": -1}') == BatchRealism(late_output=-1)
    assert BatchRealism.from_cli("") == BatchRealism()
    with pytest.raises(ValueError):
        BatchRealism.from_cli("late_output=soon")


def test_a_batch_keeps_the_switches_it_was_created_under(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    realism(base_url, reorder=True)
    name = create_batch(genai_client, inline(["a", "b"]))
    realism(base_url)
    http(base_url, "/batch-delay", {"delay_s": 0})
    assert inlined_texts(wait_until_done(genai_client, name)) == ["B", "A"]


# ---- reorder, no_metadata --------------------------------------------------------------------


def test_reorder_answers_inline_requests_in_another_order(
    genai_client: genai.Client, base_url: str
) -> None:
    realism(base_url, reorder=True)
    job = wait_until_done(genai_client, create_batch(genai_client, inline(["one", "two", "three"])))
    assert inlined_texts(job) == ["THREE", "TWO", "ONE"]
    assert job.dest is not None and job.dest.inlined_responses is not None
    # The metadata still travels with its own response: it is how a caller matches them.
    assert [r.metadata for r in job.dest.inlined_responses] == [
        {"row": "three"},
        {"row": "two"},
        {"row": "one"},
    ]


def test_reorder_reaches_the_results_file_too(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, reorder=True)
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["a", "b", "c"]))
    assert job.dest is not None and job.dest.file_name is not None
    lines = [json.loads(line) for line in results_lines(genai_client, job.dest.file_name, tmp_path)]
    assert [line["key"] for line in lines] == ["k-c", "k-b", "k-a"]


def test_no_metadata_leaves_the_key_out(genai_client: genai.Client, base_url: str) -> None:
    realism(base_url, no_metadata=True)
    name = create_batch(genai_client, inline(["x", "y"]))
    job = wait_until_done(genai_client, name)
    assert inlined_texts(job) == ["X", "Y"]
    assert job.dest is not None and job.dest.inlined_responses is not None
    assert all(r.metadata is None for r in job.dest.inlined_responses)
    items = raw_batch(base_url, name)["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    assert all("metadata" not in item for item in items)


# ---- errors inside a batch -------------------------------------------------------------------

HTTP_TO_GRPC = {400: 3, 403: 7, 404: 5, 429: 8, 500: 13, 503: 14, 504: 4}


def scripted_failures(base_url: str) -> list[dict[str, Any]]:
    rules = [{"match": f"fail-{code}$", "status": code} for code in HTTP_TO_GRPC]
    assert http(base_url, "/script", rules)[0] == 200
    return inline([f"fail-{code}" for code in HTTP_TO_GRPC])


def test_by_default_a_failed_request_keeps_its_http_error_without_details(
    genai_client: genai.Client, base_url: str
) -> None:
    name = create_batch(genai_client, scripted_failures(base_url))
    job = wait_until_done(genai_client, name)  # a 429's quota details would break the client
    assert job.dest is not None and job.dest.inlined_responses is not None
    errors = [r.error for r in job.dest.inlined_responses]
    assert [e.code for e in errors if e is not None] == list(HTTP_TO_GRPC)
    items = raw_batch(base_url, name)["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    assert items[0]["error"] == {
        "code": 400,
        "message": "Request contains an invalid argument.",
        "status": "INVALID_ARGUMENT",
    }


def test_grpc_errors_give_each_failure_its_grpc_code_and_no_status(
    genai_client: genai.Client, base_url: str
) -> None:
    realism(base_url, grpc_errors=True)
    name = create_batch(genai_client, scripted_failures(base_url))
    job = wait_until_done(genai_client, name)
    assert job.dest is not None and job.dest.inlined_responses is not None
    codes = [r.error.code for r in job.dest.inlined_responses if r.error is not None]
    assert codes == list(HTTP_TO_GRPC.values())
    items = raw_batch(base_url, name)["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    assert items[4]["error"] == {
        "code": 13,
        "message": "An internal error has occurred. Please retry later.",
    }


def test_grpc_errors_in_a_results_file_and_on_a_failed_batch(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, grpc_errors=True)
    http(base_url, "/script", [{"match": "bad", "status": 400}])
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["fine", "bad"]))
    assert job.dest is not None and job.dest.file_name is not None
    lines = [json.loads(line) for line in results_lines(genai_client, job.dest.file_name, tmp_path)]
    assert lines[1] == {
        "key": "k-bad",
        "error": {"code": 3, "message": "Request contains an invalid argument."},
    }
    http(base_url, "/script", [{"match": "late", "batch_state": "EXPIRED"}])
    expired = raw_until_done(base_url, create_batch(genai_client, inline(["late"])))
    assert expired["error"] == {
        "code": 4,
        "message": "The batch expired before all requests were run.",
    }


def test_rpc_details_make_the_real_client_fail_to_read_the_batch(
    genai_client: genai.Client, base_url: str
) -> None:
    """The Batch API types an error's details as google.rpc objects; google-genai 3.4.0's
    JobError wants strings, so batches.get itself raises: what evalq must survive."""
    realism(base_url, rpc_details=True)
    http(base_url, "/script", [{"match": "bad", "status": 500}])
    name = create_batch(genai_client, inline(["fine", "bad"]))
    body = raw_until_done(base_url, name)
    items = body["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    (info,) = items[1]["error"]["details"]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["domain"] == "googleapis.com" and info["reason"] and info["metadata"]
    assert items[1]["error"]["code"] == 500 and "error" not in items[0]
    with pytest.raises(pydantic.ValidationError, match="details"):
        genai_client.batches.get(name=name)


def test_rpc_details_with_grpc_errors_in_a_results_file(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, rpc_details=True, grpc_errors=True)
    http(base_url, "/script", [{"match": "busy", "status": 429}])
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["busy"]))
    assert job.dest is not None and job.dest.file_name is not None
    (line,) = [
        json.loads(line) for line in results_lines(genai_client, job.dest.file_name, tmp_path)
    ]
    error = line["error"]
    assert error["code"] == 8 and "status" not in error
    types_seen = [detail["@type"].rsplit(".", 1)[-1] for detail in error["details"]]
    assert types_seen == ["QuotaFailure", "Help", "RetryInfo", "ErrorInfo"]


# ---- recorded per-request errors -------------------------------------------------------------


def test_a_recorded_error_body_fails_its_request_with_that_error_as_it_is(
    genai_client: genai.Client, base_url: str
) -> None:
    recorded = {"code": 13, "message": "An internal error has occurred. Please retry."}
    rules = [
        {"match": "wrapped", "status": 500, "body": {"error": recorded}},
        {"match": "bare", "status": 400, "body": {"code": 3, "message": "bad row"}},
        {"match": "listed", "status": 503, "body": [{"error": {"code": 14, "message": "x"}}]},
    ]
    http(base_url, "/script", rules)
    realism(base_url, rpc_details=False, grpc_errors=False)
    name = create_batch(genai_client, inline(["wrapped", "bare", "listed"]))
    job = wait_until_done(genai_client, name)
    assert job.dest is not None and job.dest.inlined_responses is not None
    assert [r.error.code for r in job.dest.inlined_responses if r.error] == [13, 3, 14]
    items = raw_batch(base_url, name)["metadata"]["output"]["inlinedResponses"]["inlinedResponses"]
    assert [item["error"] for item in items] == [
        recorded,
        {"code": 3, "message": "bad row"},
        {"code": 14, "message": "x"},
    ]


def test_recorded_bodies_are_not_reshaped_by_the_switches(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    recorded_error = {"code": 400, "message": "as recorded", "status": "INVALID_ARGUMENT"}
    recorded_reply = {"candidates": [{"finishReason": "STOP", "index": 0}], "modelVersion": "m"}
    rules = [
        {"match": "err", "status": 400, "body": {"error": recorded_error}},
        {"match": "ok", "status": 200, "body": recorded_reply},
    ]
    http(base_url, "/script", rules)
    realism(base_url, grpc_errors=True, unknown_fields=True)
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["err", "ok"]))
    assert job.dest is not None and job.dest.file_name is not None
    lines = [json.loads(line) for line in results_lines(genai_client, job.dest.file_name, tmp_path)]
    assert lines[0]["error"] == recorded_error
    assert lines[1]["response"] == recorded_reply


# ---- batchStats, late output -----------------------------------------------------------------


def test_omit_zero_counts_leaves_zero_counts_out_of_batch_stats(
    genai_client: genai.Client, base_url: str
) -> None:
    http(base_url, "/batch-delay", {"delay_s": 3600})
    plain = create_batch(genai_client, inline(["a", "b"]))
    realism(base_url, omit_zero_counts=True)
    omitted = create_batch(genai_client, inline(["a", "b"]))
    assert raw_batch(base_url, plain)["metadata"]["batchStats"] == {
        "requestCount": "2",
        "successfulRequestCount": "0",
        "failedRequestCount": "0",
        "pendingRequestCount": "2",
    }
    assert raw_batch(base_url, omitted)["metadata"]["batchStats"] == {
        "requestCount": "2",
        "pendingRequestCount": "2",
    }
    http(base_url, "/batch-delay", {"delay_s": 0})
    done = raw_until_done(base_url, omitted)["metadata"]["batchStats"]
    assert done == {"requestCount": "2", "successfulRequestCount": "2"}
    job = wait_until_done(genai_client, omitted)
    assert inlined_texts(job) == ["A", "B"]


def test_late_output_reports_success_before_the_output_is_attached(
    genai_client: genai.Client, base_url: str
) -> None:
    realism(base_url, late_output=2)
    http(base_url, "/batch-delay", {"pending_s": 0, "running_s": 3600})
    name = create_batch(genai_client, inline(["late"]))
    deadline = time.monotonic() + POLL_CAP_S
    while genai_client.batches.get(name=name).state != types.JobState.JOB_STATE_RUNNING:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    http(base_url, "/batch-delay", {"running_s": 0})
    first = wait_until_done(genai_client, name)  # the first GET that sees it finished
    assert first.state == types.JobState.JOB_STATE_SUCCEEDED and first.dest is None
    second = raw_batch(base_url, name)
    assert second["done"] is True and second["metadata"]["state"] == "BATCH_STATE_SUCCEEDED"
    assert "output" not in second["metadata"] and "response" not in second
    assert http(base_url, "/stats")[1]["batches"]["output_missing_gets"] == 2
    third = genai_client.batches.get(name=name)
    assert inlined_texts(third) == ["LATE"]
    assert http(base_url, "/stats")[1]["batches"]["output_missing_gets"] == 2


def test_late_output_minus_one_never_attaches_it(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, late_output=-1)
    name = file_batch(genai_client, tmp_path, ["never"])
    job = wait_until_done(genai_client, name)
    assert job.state == types.JobState.JOB_STATE_SUCCEEDED and job.dest is None
    for _ in range(5):
        assert genai_client.batches.get(name=name).dest is None
    assert http(base_url, "/stats")[1]["batches"]["output_missing_gets"] == 6


# ---- file answered inline, unknown fields, a bad line ----------------------------------------


def test_a_file_batch_can_be_answered_inline_keyed_by_its_lines(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, file_answered_inline=True)
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["p", "q"]))
    assert job.dest is not None and job.dest.file_name is None
    assert inlined_texts(job) == ["P", "Q"]
    assert job.dest.inlined_responses is not None
    assert [r.metadata for r in job.dest.inlined_responses] == [{"key": "k-p"}, {"key": "k-q"}]
    realism(base_url, file_answered_inline=True, no_metadata=True)
    bare = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["p"]))
    assert bare.dest is not None and bare.dest.inlined_responses is not None
    assert bare.dest.inlined_responses[0].metadata is None


def test_unknown_fields_ride_along_and_only_a_strict_reader_trips_on_them(
    genai_client: genai.Client, base_url: str, tmp_path: Path
) -> None:
    realism(base_url, unknown_fields=True)
    name = create_batch(genai_client, inline(["u"]))
    (item,) = raw_until_done(base_url, name)["metadata"]["output"]["inlinedResponses"][
        "inlinedResponses"
    ]
    assert "requestStats" in item and "responseMetadata" in item["response"]
    assert inlined_texts(genai_client.batches.get(name=name)) == [
        "U"
    ]  # the client drops what it lacks

    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, ["v"]))
    assert job.dest is not None and job.dest.file_name is not None
    (line,) = [
        json.loads(line) for line in results_lines(genai_client, job.dest.file_name, tmp_path)
    ]
    assert set(line) == {"key", "response", "requestStats"}
    with pytest.raises(pydantic.ValidationError, match="responseMetadata"):
        types.GenerateContentResponse.model_validate(line["response"])
    tolerant = types.GenerateContentResponse._from_response(response=line["response"], kwargs={})
    assert tolerant.text == "V"


@pytest.mark.parametrize(("rows", "broken"), [(["a", "b", "c"], 1), (["only"], 0)])
def test_bad_line_breaks_one_line_of_the_results_file(
    genai_client: genai.Client, base_url: str, tmp_path: Path, rows: list[str], broken: int
) -> None:
    realism(base_url, bad_line=True)
    job = wait_until_done(genai_client, file_batch(genai_client, tmp_path, rows))
    assert job.dest is not None and job.dest.file_name is not None
    lines = results_lines(genai_client, job.dest.file_name, tmp_path)
    assert len(lines) == len(rows)
    for number, line in enumerate(lines):
        if number == broken:
            with pytest.raises(ValueError):
                json.loads(line)
            assert line.startswith('{"key":')
        else:
            assert json.loads(line)["key"] == f"k-{rows[number]}"
