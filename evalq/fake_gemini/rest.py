"""The REST wire format of generateContent as the fake reads and writes it: a request body
parsed into a FakeRequest, and the reply, error, quota and safety bodies the real google-genai
client expects."""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalq.fake_gemini.logprobs import logprobs_fields
from evalq.fake_gemini.protocol import (
    SCRIPTED_MODEL_VERSION,
    FakeMedia,
    FakeRequest,
    JsonObject,
)
from evalq.fake_gemini.quotas import QUOTA_IDS, QuotaHit
from evalq.fake_gemini.script import (
    ERROR_STATUSES,
)
from evalq.fake_gemini.thinking import thought_signature, thought_tokens

# Gemini bills each image (and each sampled video frame) at a flat 258 prompt tokens.
VISUAL_PART_TOKENS = 258
_DEFAULT_MESSAGES = {
    400: "Request contains an invalid argument.",
    401: "API key not valid. Please pass a valid API key.",
    403: "The caller does not have permission.",
    404: "Requested entity was not found.",
    500: "An internal error has occurred. Please retry later.",
    503: "The model is overloaded. Please try again later.",
    504: "Deadline expired before operation could complete.",
}
_HARM_CATEGORIES = (
    "HARM_CATEGORY_HATE_SPEECH",
    "HARM_CATEGORY_DANGEROUS_CONTENT",
    "HARM_CATEGORY_HARASSMENT",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT",
)


class InvalidArgument(ValueError):
    """The request body is not a generateContent request we can read (HTTP 400)."""


@dataclass(frozen=True)
class ParsedRequest:
    request: FakeRequest
    wants_json: bool


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def rfc3339(t: float) -> str:
    """A Unix time as Google's resources stamp it (createTime, updateTime...): RFC 3339, UTC,
    in microseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def wire_field(data: Mapping[str, Any], camel: str) -> Any:
    """google-genai sends camelCase at the top but snake_case inside some parts; take either."""
    return data[camel] if camel in data else data.get(_snake(camel))


def wire_mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidArgument(f"{where} must be an object")
    return value


def _decode_base64(data: object, where: str) -> bytes:
    if not isinstance(data, str):
        raise InvalidArgument(f"{where}.data must be a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        try:  # the URL-safe alphabet, which some clients send
            return base64.b64decode(data, altchars=b"-_", validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidArgument(f"{where}.data is not valid base64") from exc


def _media(blob: Mapping[str, Any], where: str, inline: bool) -> FakeMedia:
    mime_type = wire_field(blob, "mimeType")
    if not isinstance(mime_type, str) or not mime_type:
        raise InvalidArgument(f"{where}.mimeType is required")
    if inline:
        return FakeMedia(mime_type=mime_type, data=_decode_base64(blob.get("data"), where))
    uri = wire_field(blob, "fileUri")
    if not isinstance(uri, str) or not uri:
        raise InvalidArgument(f"{where}.fileUri is required")
    return FakeMedia(mime_type=mime_type, uri=uri)


def collect_parts(content: object, where: str, texts: list[str], media: list[FakeMedia]) -> None:
    parts = wire_mapping(content, where).get("parts")
    if not isinstance(parts, list):
        raise InvalidArgument(f"{where}.parts must be a list")
    for index, part in enumerate(parts):
        here = f"{where}.parts[{index}]"
        part_map = wire_mapping(part, here)
        if isinstance(part_map.get("text"), str):
            texts.append(part_map["text"])
        elif (inline := wire_field(part_map, "inlineData")) is not None:
            media.append(_media(wire_mapping(inline, here), f"{here}.inlineData", inline=True))
        elif (ref := wire_field(part_map, "fileData")) is not None:
            media.append(_media(wire_mapping(ref, here), f"{here}.fileData", inline=False))
        else:
            raise InvalidArgument(f"{here} has no text, inlineData or fileData")


def _optional_number(config: Mapping[str, Any], name: str) -> float | None:
    value = wire_field(config, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(f"generationConfig.{name} must be a number")
    return float(value)


def parse_generate_request(model: str, payload: object) -> ParsedRequest:
    """Turn a generateContent body into the brain's view of it."""
    body = wire_mapping(payload, "request body")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise InvalidArgument("* GenerateContentRequest.contents: contents is not specified")
    texts: list[str] = []
    media: list[FakeMedia] = []
    system = wire_field(body, "systemInstruction")
    if system is not None:
        collect_parts(system, "systemInstruction", texts, media)
    system_text = "\n".join(texts)
    for index, content in enumerate(contents):
        collect_parts(content, f"contents[{index}]", texts, media)
    config = wire_mapping(wire_field(body, "generationConfig"), "generationConfig")
    schema = wire_field(config, "responseSchema") or wire_field(config, "responseJsonSchema")
    max_tokens = _optional_number(config, "maxOutputTokens")
    mime_type = wire_field(config, "responseMimeType")
    thinking = wire_mapping(wire_field(config, "thinkingConfig"), "generationConfig.thinkingConfig")
    budget = _optional_number(thinking, "thinkingBudget")
    level = wire_field(thinking, "thinkingLevel")
    if level is not None and not isinstance(level, str):
        raise InvalidArgument("generationConfig.thinkingConfig.thinkingLevel must be a string")
    include_thoughts = wire_field(thinking, "includeThoughts")
    if include_thoughts is not None and not isinstance(include_thoughts, bool):
        raise InvalidArgument("generationConfig.thinkingConfig.includeThoughts must be a boolean")
    wants_logprobs = wire_field(config, "responseLogprobs")
    if wants_logprobs is not None and not isinstance(wants_logprobs, bool):
        raise InvalidArgument("generationConfig.responseLogprobs must be a boolean")
    top_n = _optional_number(config, "logprobs")
    seed = _optional_number(config, "seed")
    request = FakeRequest(
        model=model,
        text="\n".join(texts),
        media=media,
        response_schema=schema if isinstance(schema, dict) else None,
        temperature=_optional_number(config, "temperature"),
        max_output_tokens=None if max_tokens is None else int(max_tokens),
        system=system_text,
        thinking_budget=None if budget is None else int(budget),
        thinking_level=level,
        include_thoughts=bool(include_thoughts),
        response_logprobs=bool(wants_logprobs),
        logprobs=None if top_n is None else int(top_n),
        seed=None if seed is None else int(seed),
    )
    wants_json = isinstance(mime_type, str) and "json" in mime_type.lower()
    return ParsedRequest(request, wants_json)


# ---- reply bodies --------------------------------------------------------------------------


def error_body(
    code: int, message: str | None = None, details: list[JsonObject] | None = None
) -> JsonObject:
    status = ERROR_STATUSES.get(code, "UNKNOWN")
    error: JsonObject = {"code": code, "message": message or _DEFAULT_MESSAGES.get(code, status)}
    error["status"] = status
    if details:
        error["details"] = details
    return {"error": error}


def _duration(seconds: float) -> str:
    """google.protobuf.Duration in its JSON form, as RetryInfo.retryDelay uses it."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds:.3f}".rstrip("0") + "s"


def quota_error_body(model: str, hit: QuotaHit) -> JsonObject:
    quota_id = QUOTA_IDS[hit.kind]
    message = (
        "You exceeded your current quota, please check your plan and billing details. "
        f"Quota exceeded for {quota_id}, limit: {hit.limit}, model: {model}. "
        f"Please retry in {_duration(hit.retry_s)}. (fake-gemini)"
    )
    violation = {
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
        "quotaId": quota_id,
        "quotaDimensions": {"model": model, "location": "global"},
        "quotaValue": str(hit.limit),
    }
    details: list[JsonObject] = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        {
            "@type": "type.googleapis.com/google.rpc.Help",
            "links": [
                {
                    "description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits",
                }
            ],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": _duration(hit.retry_s)},
    ]
    return error_body(429, message, details)


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def prompt_details(request: FakeRequest) -> list[JsonObject]:
    """promptTokensDetails: the prompt's tokens per modality, media first as recorded bodies
    list them; every image or video part is billed its flat rate."""
    images = sum(1 for m in request.media if m.mime_type.startswith("image/"))
    videos = sum(1 for m in request.media if m.mime_type.startswith("video/"))
    details: list[JsonObject] = []
    if images:
        details.append({"modality": "IMAGE", "tokenCount": VISUAL_PART_TOKENS * images})
    if videos:
        details.append({"modality": "VIDEO", "tokenCount": VISUAL_PART_TOKENS * videos})
    details.append({"modality": "TEXT", "tokenCount": estimate_tokens(request.text)})
    return details


def prompt_tokens(request: FakeRequest) -> int:
    return sum(int(d["tokenCount"]) for d in prompt_details(request))


def _usage(
    request: FakeRequest, reply: str | None, thoughts: int = 0, cached: int = 0
) -> JsonObject:
    """What a reply bills: the prompt (cached tokens included in it, as the API counts
    them), the answer and the thinking, with the prompt broken down by modality."""
    prompt = prompt_tokens(request)
    usage: JsonObject = {"promptTokenCount": prompt}
    total = prompt
    if reply is not None:
        output = estimate_tokens(reply)
        usage["candidatesTokenCount"] = output
        total += output
    if thoughts > 0:  # billed as output; absent when the model did not think
        total += thoughts
    usage["totalTokenCount"] = total
    cached = min(cached, prompt)
    if cached > 0:
        usage["cachedContentTokenCount"] = cached
    usage["promptTokensDetails"] = prompt_details(request)
    if cached > 0:
        usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached}]
    if thoughts > 0:
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _safety_ratings(reason: str) -> list[JsonObject]:
    """NEGLIGIBLE everywhere, except a blocked dangerous-content rating for SAFETY."""
    ratings: list[JsonObject] = []
    for category in _HARM_CATEGORIES:
        rating: JsonObject = {"category": category, "probability": "NEGLIGIBLE"}
        if reason == "SAFETY" and category == "HARM_CATEGORY_DANGEROUS_CONTENT":
            rating = {"category": category, "probability": "HIGH", "blocked": True}
        ratings.append(rating)
    return ratings


def _envelope(model_version: str, usage: JsonObject) -> JsonObject:
    return {
        "usageMetadata": usage,
        "modelVersion": model_version,
        "responseId": uuid.uuid4().hex[:22],
    }


# The thought summary a request with includeThoughts gets, labelled like every fake reply.
THOUGHT_SUMMARY = (
    "**Weighing the request**\n\nI read the request and its material before answering. "
    "[simulated thought summary]"
)


def text_reply_body(
    request: FakeRequest,
    text: str,
    finish_reason: str,
    model_version: str,
    *,
    cached_tokens: int = 0,
) -> JsonObject:
    """A reply after the model's thinking: thoughts are billed, and thinking that eats
    maxOutputTokens leaves no answer at all (finishReason MAX_TOKENS, no answer part). A
    thought summary, when asked for, is a part of its own before the answer; a Gemini 3
    model signs its thinking on the last answer part."""
    thoughts = thought_tokens(request)
    answer: str | None = text
    limit = request.max_output_tokens
    if limit is not None and finish_reason == "STOP":
        if thoughts >= limit:
            thoughts, answer, finish_reason = limit, None, "MAX_TOKENS"
        elif estimate_tokens(text) > limit - thoughts:
            answer, finish_reason = text[: (limit - thoughts) * 4], "MAX_TOKENS"
    elif limit is not None:
        thoughts = min(thoughts, limit)
    parts: list[JsonObject] = []
    if thoughts > 0 and request.include_thoughts:
        parts.append({"text": THOUGHT_SUMMARY, "thought": True})
    if answer is not None:
        part: JsonObject = {"text": answer}
        signature = thought_signature(request) if thoughts > 0 else None
        if signature is not None:
            part["thoughtSignature"] = signature
        parts.append(part)
    content: JsonObject = {"role": "model"}
    if parts:
        content["parts"] = parts
    candidate = {"content": content, "finishReason": finish_reason, "index": 0}
    if request.response_logprobs and answer is not None:
        candidate.update(logprobs_fields(request, answer))
    usage = _usage(request, answer, thoughts, cached_tokens)
    return {"candidates": [candidate], **_envelope(model_version, usage)}


def withheld_reply_body(
    request: FakeRequest, finish_reason: str, *, cached_tokens: int = 0
) -> JsonObject:
    """A candidate stopped for a reason that sends no text (SAFETY, RECITATION, MODEL_ARMOR,
    ...): no content at all, safety ratings only when a harm category stopped it, and the
    prompt still billed."""
    candidate: JsonObject = {"finishReason": finish_reason, "index": 0}
    if finish_reason == "SAFETY":
        candidate["safetyRatings"] = _safety_ratings(finish_reason)
    usage = _usage(request, None, cached=cached_tokens)
    return {"candidates": [candidate], **_envelope(SCRIPTED_MODEL_VERSION, usage)}


def blocked_prompt_body(request: FakeRequest, block_reason: str) -> JsonObject:
    """A prompt blocked before any candidate, as recorded: promptFeedback and the prompt's
    tokens, safety ratings only for a SAFETY block."""
    feedback: JsonObject = {"blockReason": block_reason}
    if block_reason == "SAFETY":
        feedback["safetyRatings"] = _safety_ratings(block_reason)
    prompt = prompt_tokens(request)
    return {
        "promptFeedback": feedback,
        "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
        "modelVersion": SCRIPTED_MODEL_VERSION,
    }


def truncate(text: str) -> str:
    """What running out of output tokens looks like: the first half of the reply."""
    return text[: len(text) // 2]


def break_json(text: str) -> str:
    """Cut JSON so it no longer parses, as a reply that stopped mid-object would."""
    broken = text[: len(text) // 2]
    try:
        json.loads(broken)
    except ValueError:
        return broken
    return broken + '"'
