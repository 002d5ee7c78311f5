"""Batch realism: switches that make the fake's Batch API answer the way the real service has
been seen to (docs/architecture/gemini-facts.md), each off by default because the documented
shape is what most tests want; a batch keeps the switches it was created under."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from evalq.fake_gemini.protocol import JsonObject

# google.rpc.Code: the numbers a google.rpc.Status carries in place of an HTTP code.
GRPC_CODES: dict[str, int] = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
# The HTTP mapping google.rpc.Code documents, for an error that names no status.
HTTP_TO_GRPC: dict[int, int] = {
    400: 3,
    401: 16,
    403: 7,
    404: 5,
    429: 8,
    500: 13,
    503: 14,
    504: 4,
}
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
# The fake's own ErrorInfo reasons (real ones are per-service constants it cannot know).
_REASONS = {
    "INVALID_ARGUMENT": "INVALID_REQUEST",
    "RESOURCE_EXHAUSTED": "RATE_LIMIT_EXCEEDED",
    "INTERNAL": "INTERNAL_ERROR",
    "UNAVAILABLE": "SERVICE_UNAVAILABLE",
}
# late_output: true means this many GETs without the output.
LATE_OUTPUT_DEFAULT = 2
# What unknown_fields adds; google-genai 3.4.0 models neither name.
UNKNOWN_LINE_FIELD = "requestStats"
UNKNOWN_RESPONSE_FIELD = "responseMetadata"


def grpc_code(error: Mapping[str, Any], http_status: int) -> int:
    """The google.rpc.Code of an HTTP-style error: its status name first (400 is three codes),
    then its HTTP code, UNKNOWN when neither says."""
    name = error.get("status")
    if isinstance(name, str) and name in GRPC_CODES:
        return GRPC_CODES[name]
    code = error.get("code")
    http = code if isinstance(code, int) and not isinstance(code, bool) else http_status
    return HTTP_TO_GRPC.get(http, GRPC_CODES["UNKNOWN"])


def error_info(error: Mapping[str, Any], http_status: int) -> JsonObject:
    name = error.get("status")
    if not isinstance(name, str):
        name = next((n for n, c in GRPC_CODES.items() if c == grpc_code(error, http_status)), "")
    return {
        "@type": ERROR_INFO_TYPE,
        "reason": _REASONS.get(name, name or "UNKNOWN"),
        "domain": "googleapis.com",
        "metadata": {
            "service": "generativelanguage.googleapis.com",
            "method": "google.ai.generativelanguage.v1beta.GenerativeService.GenerateContent",
        },
    }


def _late_output(value: object) -> int:
    if value is True:
        return LATE_OUTPUT_DEFAULT
    if value is False or value is None:
        return 0
    if isinstance(value, int) and (value >= 0 or value == -1):
        return value
    raise ValueError(f"late_output must be true, false, an integer >= 0 or -1, got {value!r}")


@dataclass(frozen=True)
class BatchRealism:
    """The switches; names and meanings are an interface other tests are written against."""

    reorder: bool = False
    no_metadata: bool = False
    grpc_errors: bool = False
    rpc_details: bool = False
    omit_zero_counts: bool = False
    late_output: int = 0  # GETs that see SUCCEEDED without output; -1: never attached
    file_answered_inline: bool = False
    unknown_fields: bool = False
    bad_line: bool = False
    # Vertex AI: the results spread over several predictions*.jsonl files, as a job's output
    # may be; the Gemini API's batches have one file and ignore it.
    split_output: bool = False

    @classmethod
    def parse(cls, given: object) -> BatchRealism:
        """A JSON object of switches; a missing key is off. Unknown names are refused, so a
        typo fails loudly instead of leaving a test that checks nothing."""
        if isinstance(given, BatchRealism):
            return given
        if given is None:
            return cls()
        if not isinstance(given, Mapping):
            raise ValueError("batch realism must be a JSON object of switches")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValueError(f"unknown batch realism switch(es) {unknown}; known: {sorted(known)}")
        values: dict[str, Any] = {}
        for name, value in given.items():
            if name == "late_output":
                values[name] = _late_output(value)
            elif isinstance(value, bool):
                values[name] = value
            else:
                raise ValueError(f"{name} must be true or false, got {value!r}")
        return cls(**values)

    @classmethod
    def from_cli(cls, text: str) -> BatchRealism:
        """``reorder,late_output=3`` or a JSON object, for a command line."""
        text = text.strip()
        if text.startswith("{"):
            return cls.parse(json.loads(text))
        given: dict[str, object] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, equals, value = item.partition("=")
            value = value.strip().lower()
            words = {"true": True, "false": False}
            given[name.strip()] = (
                (words[value] if value in words else int(value)) if equals else True
            )
        return cls.parse(given)

    def active(self) -> JsonObject:
        """The switches that are on, in the form POST /batch-realism takes back."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) not in (False, 0)
        }

    def request_error(self, error: Mapping[str, Any], http_status: int) -> JsonObject:
        """A failed request's error inside a batch: by default the HTTP-style error without
        its details (per-request errors seen in the field carry none); a google.rpc.Status
        with grpc_errors; ErrorInfo details with rpc_details."""
        message = error.get("message")
        out: JsonObject
        if self.grpc_errors:
            out = {"code": grpc_code(error, http_status), "message": message}
        else:
            out = {key: error[key] for key in ("code", "message", "status") if key in error}
        if self.rpc_details:
            kept = error.get("details")
            out["details"] = [
                *(kept if isinstance(kept, list) else []),
                error_info(error, http_status),
            ]
        return out

    def batch_error(self, code: int, status: str, message: str) -> JsonObject:
        """The Operation's own error when a whole batch ends FAILED or EXPIRED."""
        if self.grpc_errors:
            return {"code": GRPC_CODES[status], "message": message}
        return {"code": code, "status": status, "message": message}


__all__ = [
    "GRPC_CODES",
    "HTTP_TO_GRPC",
    "LATE_OUTPUT_DEFAULT",
    "UNKNOWN_LINE_FIELD",
    "UNKNOWN_RESPONSE_FIELD",
    "BatchRealism",
    "error_info",
    "grpc_code",
]
