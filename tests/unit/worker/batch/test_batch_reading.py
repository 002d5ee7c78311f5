"""Reading batches and their results as the real Batch API returns them (evalq.worker.batch.reading):
pure functions over recorded shapes, no Redis, no server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.worker.batch.reading import (
    BoundedSink,
    TooLarge,
    file_results,
    inline_results,
    view_from_body,
)

RPC_DETAILS = [
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "BACKEND",
        "domain": "googleapis.com",
    }
]


def operation(state: str, **metadata: object) -> dict[str, object]:
    return {
        "name": "batches/abc",
        "metadata": {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "displayName": "evalq-j-r1-0",
            "state": f"BATCH_STATE_{state}",
            **metadata,
        },
        "done": state in ("SUCCEEDED", "FAILED"),
    }


def test_a_running_batch_with_zero_counts_left_out() -> None:
    """proto3 JSON omits int64 zeros: batchStats may hold only the counts that are not zero."""
    view = view_from_body(
        operation("RUNNING", batchStats={"requestCount": "3", "pendingRequestCount": "3"})
    )
    assert (view.state, view.succeeded, view.failed, view.has_output) == ("RUNNING", 0, 0, False)
    assert view.display_name == "evalq-j-r1-0"


def test_succeeded_without_output_is_not_yet_readable() -> None:
    view = view_from_body(operation("SUCCEEDED", batchStats={"successfulRequestCount": "2"}))
    assert view.state == "SUCCEEDED" and not view.has_output


def test_output_is_found_in_metadata_or_in_the_operation_response() -> None:
    in_meta = view_from_body(operation("SUCCEEDED", output={"responsesFile": "files/batch-1"}))
    body = operation("SUCCEEDED")
    body["response"] = {"@type": "x", "inlinedResponses": {"inlinedResponses": [{"response": {}}]}}
    in_response = view_from_body(body)
    assert in_meta.responses_file == "files/batch-1"
    assert in_response.inlined == [{"response": {}}]


def test_inlined_errors_with_rpc_details_do_not_stop_the_reading() -> None:
    """google-genai 3.4's JobError types details as strings; the API sends google.rpc objects."""
    inlined = [
        {"error": {"code": 13, "message": "Internal error", "details": RPC_DETAILS}},
        {"response": {"candidates": []}, "metadata": {"key": "d2"}},
    ]
    view = view_from_body(
        operation("SUCCEEDED", output={"inlinedResponses": {"inlinedResponses": inlined}})
    )
    entries = list(inline_results(view.inlined or []))
    assert [e.key for e in entries] == [None, "d2"]
    assert entries[0].result is not None and entries[0].result["error"]["status"] == "INTERNAL"
    assert "ErrorInfo" in entries[0].result["error"]["details"]


def test_results_lines_are_keyed_and_a_bad_line_names_its_number_and_key() -> None:
    lines = [
        json.dumps({"key": "d1", "response": {"candidates": []}, "requestStats": {"x": 1}}),
        '{"key": "d2", "response": {"candidates": [{"content": {"parts": [{"te',
        "",
        json.dumps({"key": "d3", "error": {"code": 14, "message": "busy"}}),
        "not json and no key",
        json.dumps(["a", "list"]),
    ]
    entries = list(file_results(lines))
    assert [(e.number, e.key) for e in entries] == [
        (1, "d1"),
        (2, "d2"),
        (4, "d3"),
        (5, None),
        (6, None),
    ]
    assert entries[0].result == {"response": {"candidates": []}}
    assert entries[1].result is None and entries[1].problem is not None
    assert entries[1].problem.startswith("results line 2 is not JSON")
    assert entries[2].result is not None and entries[2].result["error"]["status"] == "UNAVAILABLE"
    assert entries[3].problem is not None and entries[4].problem is not None


def test_a_download_stops_at_its_bound(tmp_path: Path) -> None:
    sink = BoundedSink(tmp_path / "r.jsonl", max_bytes=10)
    sink.write(b"12345")
    with pytest.raises(TooLarge):
        sink.write(b"123456")
    sink.close()
    assert (tmp_path / "r.jsonl").read_bytes() == b"12345"
