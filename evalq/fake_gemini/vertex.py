"""Vertex AI's spelling of the bodies the fake writes, so a client on ``vertexai=True`` reads
what Vertex really sends (docs/architecture/gemini-facts.md, "Vertex AI"); the judge, scripts,
quotas, faults and thinking stay the Gemini API's. A recorded body is never reshaped."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from evalq.fake_gemini.logprobs import average_logprob
from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.rest import error_body

# The 429 message every recorded Vertex body carries, word for word.
VERTEX_429_MESSAGE = (
    "Resource exhausted. Please try again later. Please refer to "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
)
# Pay-as-you-go traffic; Provisioned Throughput would say PROVISIONED_THROUGHPUT.
TRAFFIC_TYPE = "ON_DEMAND"


def create_time(now: datetime.datetime | None = None) -> str:
    """A timestamp in the form Vertex writes it: UTC, microseconds, a ``Z``."""
    moment = now or datetime.datetime.now(datetime.UTC)
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def vertex_reply(body: JsonObject) -> JsonObject:
    """A 200 body the fake wrote for the Gemini API, as Vertex words it."""
    reply = copy.deepcopy(body)
    usage = reply.get("usageMetadata")
    if isinstance(usage, dict):
        output = usage.get("candidatesTokenCount")
        if isinstance(output, int) and "candidatesTokensDetails" not in usage:
            usage["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": output}]
        usage["trafficType"] = TRAFFIC_TYPE
    for candidate in reply.get("candidates") or []:
        text = _answer_text(candidate)
        # Recorded from gemini-2.0-flash to gemini-3-flash-preview, unasked; a functionCall-only
        # candidate was recorded without it.
        if text and "avgLogprobs" not in candidate:
            candidate["avgLogprobs"] = average_logprob(text)
    reply["createTime"] = create_time()
    return reply


def _answer_text(candidate: JsonObject) -> str:
    parts = (candidate.get("content") or {}).get("parts") or []
    return "".join(p.get("text") or "" for p in parts if not p.get("thought"))


def vertex_error(body: JsonObject) -> list[JsonObject]:
    """An error body the fake wrote for the Gemini API, list-wrapped as Vertex sends it."""
    return [body]


def vertex_quota_error() -> list[JsonObject]:
    """Vertex's 429, whatever quota ran out: no QuotaFailure, no RetryInfo, no delay in the
    message, so a client can only back off on its own."""
    body = error_body(429, VERTEX_429_MESSAGE)
    error: dict[str, Any] = body["error"]
    error["errors"] = [
        {"message": VERTEX_429_MESSAGE, "domain": "global", "reason": "rateLimitExceeded"}
    ]
    error["status"] = error.pop("status")  # last, where the recorded bodies have it
    return [body]
