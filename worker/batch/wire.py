"""Batch requests and results on the wire, as google-genai builds and reads them.

A request goes out exactly as online: the same contents and config (worker.gemini's
request_parts). Inline, the SDK converts it; in a JSONL file, each line must hold the REST form
the SDK would have sent, so the line is built with the SDK's own converter for inlined requests
(private in google-genai 3.x: tests/unit/test_batch_wire.py pins the shape)."""

from __future__ import annotations

import json
from typing import Any

from google import genai
from google.genai import _common, types
from google.genai import batches as genai_batches

from evalq.core.judge import JudgeRequest
from worker.gemini import request_parts

# google.rpc codes and names a request inside a batch may fail with that are worth one more
# try in the next batch (quota, overload, internal, deadline); any other error is final.
RETRYABLE_CODES = frozenset({429, 500, 503, 504})
RETRYABLE_STATUSES = frozenset(
    {"RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED"}
)


def inlined_request(
    model: str, request: JudgeRequest, max_output_tokens: int, key: str
) -> types.InlinedRequest:
    contents, config = request_parts(request, max_output_tokens)
    return types.InlinedRequest(
        model=model, contents=contents, config=config, metadata={"key": key}
    )


def file_line(client: genai.Client, inlined: types.InlinedRequest) -> str:
    """One JSONL line, ``{"key": ..., "request": GenerateContentRequest}``, as documented."""
    wire = genai_batches._InlinedRequest_to_mldev(client._api_client, inlined)
    wire = _common.encode_unserializable_types(_common.convert_to_dict(wire))
    key = (inlined.metadata or {}).get("key")
    return json.dumps({"key": key, "request": wire["request"]}, separators=(",", ":"))


def error_result(error: Any) -> dict[str, Any]:
    """A failed request's google.rpc.Status as stored: code, status, message."""
    if isinstance(error, dict):
        return {
            "code": error.get("code"),
            "status": error.get("status"),
            "message": error.get("message") or "",
        }
    return {
        "code": getattr(error, "code", None),
        "status": getattr(error, "status", None),
        "message": getattr(error, "message", None) or "",
    }


def retryable(error: dict[str, Any]) -> bool:
    return error.get("code") in RETRYABLE_CODES or error.get("status") in RETRYABLE_STATUSES


def describe(error: dict[str, Any]) -> str:
    code = error.get("code")
    status = error.get("status") or ""
    return f"{code} {status}: {error.get('message') or 'no message'}".strip()
