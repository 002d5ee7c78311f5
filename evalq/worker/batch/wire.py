"""Batch requests and results on the wire, as google-genai builds and reads them: a request
goes out exactly as online (evalq.worker.judges.gemini's request_parts)."""

from __future__ import annotations

import json
from typing import Any

from google import genai
from google.genai import _common, types
from google.genai import batches as genai_batches

from evalq.core.judge import JudgeRequest
from evalq.worker.judges.gemini import request_parts

# google.rpc.Code: a request inside a batch fails with a Status whose `code` is this number and
# often no `status` name (python-genai #1341, #2693); an HTTP code where a client or the API
# gives one instead. Both mean the same: a code under 100 is gRPC's, one above is HTTP's.
GRPC_NAMES = {
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}
HTTP_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# Worth another try in the next batch: quota, overload, an internal error, a deadline. Every
# other error is the request's answer (judge_error with the server's message).
TRANSIENT = frozenset({"RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED"})
# Ours, for a request the batch returned nothing for (or whose results line was unreadable
# and named no key): like a transient error, it may go into the next batch, a bounded number
# of times, since a finished batch will answer nothing more.
NO_RESULT = "NO_RESULT"
_DETAILS_MAX = 600


def inlined_request(
    model: str, request: JudgeRequest, max_output_tokens: int, key: str
) -> types.InlinedRequest:
    contents, config = request_parts(request, max_output_tokens)
    return types.InlinedRequest(
        model=model, contents=contents, config=config, metadata={"key": key}
    )


def file_line(client: genai.Client, inlined: types.InlinedRequest) -> str:
    """One JSONL line, ``{"key": ..., "request": GenerateContentRequest}``, as documented, in
    the REST form the SDK would have sent: built with its own converter for inlined requests
    (private in google-genai 3.x: tests/unit/test_batch_wire.py pins the shape)."""
    wire = genai_batches._InlinedRequest_to_mldev(client._api_client, inlined)
    wire = _common.encode_unserializable_types(_common.convert_to_dict(wire))
    key = (inlined.metadata or {}).get("key")
    return json.dumps({"key": key, "request": wire["request"]}, separators=(",", ":"))


def _field(error: Any, name: str) -> Any:
    return error.get(name) if isinstance(error, dict) else getattr(error, name, None)


def error_result(error: Any) -> dict[str, Any]:
    """A failed request's google.rpc.Status as stored: code, status name, message and any
    `details` as text (google.rpc objects, strings, whatever shape they come in)."""
    code = _field(error, "code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    status = _field(error, "status")
    found: dict[str, Any] = {
        "code": code,
        "status": status if isinstance(status, str) and status else status_name(code),
        "message": str(_field(error, "message") or ""),
    }
    details = _field(error, "details")
    if details:
        text = details if isinstance(details, str) else json.dumps(details, default=str)
        found["details"] = text[:_DETAILS_MAX]
    return found


def status_name(code: int | None) -> str | None:
    if code is None:
        return None
    return GRPC_NAMES.get(code) if code < 100 else HTTP_NAMES.get(code)


def no_result(message: str) -> dict[str, Any]:
    return {"code": None, "status": NO_RESULT, "message": message}


def retryable(error: dict[str, Any]) -> bool:
    name = error.get("status") or status_name(error.get("code"))
    return name in TRANSIENT or name == NO_RESULT


def describe(error: dict[str, Any]) -> str:
    code = error.get("code")
    status = error.get("status") or status_name(code) or ""
    head = " ".join(str(x) for x in (code, status) if x not in (None, ""))
    return f"{head}: {error.get('message') or 'no message'}".strip(": ")
