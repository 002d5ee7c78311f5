"""A fake Gemini REST server, so evalq runs and is tested end to end without network or keys.

It answers ``POST /{v1|v1beta}/models/{model}:generateContent`` with the shapes the real API
uses (including quota errors the real google-genai client turns into ``ClientError``), and
adds knobs real Gemini does not have: latency, per-model quotas, seeded random faults, a
script of canned answers, and ``/stats`` to check what a run actually sent. Every reply the
brain writes is labelled with ``SIMULATED_MODEL_VERSION`` so it can never pass as real.

The API key is accepted (header or ``?key=``) and deliberately never read: it must not end
up in logs or stats, and aiohttp's access log (which would print the query) is disabled.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import logging
import math
import random
import re
import signal
import threading
import time
import uuid
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from aiohttp import web

from evalq.core.judge import SIMULATED_MODEL_VERSION
from fake_gemini.protocol import (
    SCRIPTED_MODEL_VERSION,
    Brain,
    FakeMedia,
    FakeRequest,
)
from fake_gemini.script import (
    ERROR_STATUSES,
    TEXT_FINISH_REASONS,
    QuotaKind,
    Script,
    ScriptRule,
    load_script,
    parse_rules,
)
from fake_gemini.thinking import ThinkingRefused, thought_tokens
from fake_gemini.thinking import check as check_thinking

logger = logging.getLogger(__name__)

JsonObject = dict[str, Any]
Fault = Literal["429", "503", "slow", "malformed", "max_tokens"]
FAULTS: tuple[Fault, ...] = ("429", "503", "slow", "malformed", "max_tokens")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_EVENTS = 10_000
# Gemini bills each image (and each sampled video frame) at a flat 258 prompt tokens.
VISUAL_PART_TOKENS = 258
# Inline media is sent base64 in the JSON body; real Gemini accepts up to 20 MB of it.
MAX_BODY_BYTES = 64 * 1024 * 1024
# quotaValue reported by scripted or fault 429s when no matching --rpm/--rpd is set.
NOMINAL_QUOTA_VALUE = 10

_QUOTA_IDS: dict[QuotaKind, str] = {
    "minute": "GenerateRequestsPerMinutePerProjectPerModel",
    "day": "GenerateRequestsPerDayPerProjectPerModel",
}
_QUOTA_PERIOD_S: dict[QuotaKind, float] = {"minute": 60.0, "day": 86_400.0}
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
_GENERATE_PATH = re.compile(r"/(?:v1|v1beta)/models/(?P<tail>[^/]+)")


# ---- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerOptions:
    """Behaviour knobs; the CLI flags and ``run_server`` keywords carry the same names."""

    latency_ms: float = 0.0
    rpm: int | None = None
    rpd: int | None = None
    fault_rate: float = 0.0
    seed: int = 0
    script: str | Path | None = None
    slow_fault_ms: float = 2000.0
    # The per-minute quota is enforced over this sliding window, scaled (rpm * window / 60
    # requests per window): tests exceed a quota in seconds instead of minutes.
    quota_window_s: float = 60.0

    def __post_init__(self) -> None:
        if self.quota_window_s <= 0:
            raise ValueError("quota_window_s must be > 0")
        if self.latency_ms < 0 or self.slow_fault_ms < 0:
            raise ValueError("latency_ms and slow_fault_ms must be >= 0")
        for name in ("rpm", "rpd"):
            limit = getattr(self, name)
            if limit is not None and limit < 1:
                raise ValueError(f"{name} must be a positive integer, got {limit}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be within 0..1, got {self.fault_rate}")


class ServerOptionsArgs(TypedDict, total=False):
    """``ServerOptions`` as keyword arguments, so callers never build the dataclass by hand."""

    latency_ms: float
    rpm: int | None
    rpd: int | None
    fault_rate: float
    seed: int
    script: str | Path | None
    slow_fault_ms: float
    quota_window_s: float


def default_brain() -> Brain:
    """The simulated judge, imported late so the server module loads without it."""
    from fake_gemini.brain import SimulatedJudge

    return SimulatedJudge()


# ---- quotas, faults, stats -----------------------------------------------------------------


@dataclass(frozen=True)
class QuotaHit:
    """Which quota a request ran into, and when a retry could succeed."""

    kind: QuotaKind
    limit: int
    retry_s: float


class SlidingWindow:
    """Admits at most ``limit`` hits in any ``period_s`` span, like Gemini's quotas."""

    def __init__(self, limit: int, period_s: float) -> None:
        self.limit = limit
        self.period_s = period_s
        self._hits: deque[float] = deque()

    def wait_s(self, now: float) -> float | None:
        """Seconds until a slot frees (at least 1, whole seconds), or None if one is free."""
        while self._hits and self._hits[0] <= now - self.period_s:
            self._hits.popleft()
        if len(self._hits) < self.limit:
            return None
        return float(max(1, math.ceil(self._hits[0] + self.period_s - now)))

    def record(self, now: float) -> None:
        self._hits.append(now)


class Quotas:
    """Per-model minute and day windows; a request counts only if both admit it."""

    def __init__(self, rpm: int | None, rpd: int | None, minute_window_s: float = 60.0) -> None:
        self._limits: dict[QuotaKind, int | None] = {"minute": rpm, "day": rpd}
        self._windows: dict[tuple[str, QuotaKind], SlidingWindow] = {}
        self._minute_window_s = minute_window_s

    def _window(self, kind: QuotaKind, limit: int) -> SlidingWindow:
        if kind == "minute" and self._minute_window_s != 60.0:
            scaled = max(1, round(limit * self._minute_window_s / 60.0))
            return SlidingWindow(scaled, self._minute_window_s)
        return SlidingWindow(limit, _QUOTA_PERIOD_S[kind])

    def limit(self, kind: QuotaKind) -> int:
        return self._limits[kind] or NOMINAL_QUOTA_VALUE

    def admit(self, model: str, now: float) -> QuotaHit | None:
        """Count the request, unless a quota is used up; the day quota is reported first."""
        windows = []
        for kind in ("day", "minute"):
            limit = self._limits[kind]
            if limit is None:
                continue
            window = self._windows.get((model, kind)) or self._windows.setdefault(
                (model, kind), self._window(kind, limit)
            )
            wait = window.wait_s(now)
            if wait is not None:
                return QuotaHit(kind, limit, wait)
            windows.append(window)
        for window in windows:
            window.record(now)
        return None

    def reset(self) -> None:
        self._windows.clear()


class FaultPicker:
    """Seeded, so a run with the same --seed and request order sees the same faults."""

    def __init__(self, rate: float, seed: int) -> None:
        self.rate = rate
        self.seed = seed
        self._rng = random.Random(seed)

    def pick(self, wants_json: bool) -> Fault | None:
        """Malformed JSON only makes sense when JSON was asked for, so it is drawn only then."""
        if self.rate <= 0 or self._rng.random() >= self.rate:
            return None
        choices = FAULTS if wants_json else tuple(f for f in FAULTS if f != "malformed")
        return self._rng.choice(choices)

    def reset(self) -> None:
        self._rng = random.Random(self.seed)


@dataclass
class Stats:
    """What the server answered, for tests and demos to check against what the client saw."""

    requests: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    events: deque[JsonObject] = field(default_factory=lambda: deque(maxlen=MAX_EVENTS))
    uploads: int = 0  # files finalized through the Files API (not counted in ``requests``)
    count_tokens: int = 0  # countTokens requests (not generate calls: not in ``requests``)

    def record(
        self,
        status: int,
        model: str,
        rule: int | None,
        fault: Fault | None,
        sent: JsonObject | None = None,
    ) -> None:
        self.requests += 1
        self.by_status[str(status)] += 1
        self.by_model[model] += 1
        if fault is not None:
            self.faults[fault] += 1
        event = {"t": time.time(), "status": status, "model": model, "rule": rule, "fault": fault}
        event.update(sent or {})
        self.events.append(event)

    def snapshot(self, fired: Mapping[int, int]) -> JsonObject:
        return {
            "requests": self.requests,
            "by_status": dict(self.by_status),
            "by_model": dict(self.by_model),
            "faults": {name: self.faults[name] for name in FAULTS},
            "script_rules_fired": {str(index): count for index, count in fired.items()},
            "events": list(self.events),
            "count_tokens": self.count_tokens,
        }

    def reset(self) -> None:
        self.requests = 0
        self.by_status.clear()
        self.by_model.clear()
        self.faults.clear()
        self.events.clear()
        self.uploads = 0
        self.count_tokens = 0


# ---- the Files API ---------------------------------------------------------------------------

# Uploaded bytes are kept in memory; beyond this, the oldest files are forgotten.
FILES_MAX_BYTES = 512 * 1024 * 1024
FILE_TTL_S = 48 * 3600.0  # how long Gemini keeps an uploaded file
UPLOAD_CHUNK_GRANULARITY = 8 * 1024 * 1024
_FILE_ID_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")
_FILE_URI_RE = re.compile(r"^(?:https?://[^/]+/(?:v1|v1beta)/)?files/(?P<id>[a-z0-9-]+)$")


class FilesError(Exception):
    """A Files API refusal, shaped like Gemini's: HTTP code, status name, message."""

    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message

    def body(self) -> JsonObject:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


@dataclass
class StoredFile:
    """One file, from the resumable upload's start until it is forgotten."""

    name: str  # "files/{id}"
    mime_type: str
    display_name: str
    size_bytes: int
    created: float
    data: bytearray = field(default_factory=bytearray)
    complete: bool = False
    processing: bool = False  # videos are PROCESSING until first looked at, as on Gemini

    @property
    def id(self) -> str:
        return self.name.removeprefix("files/")

    def state(self) -> str:
        return "PROCESSING" if self.processing else "ACTIVE"

    def resource(self, base_url: str) -> JsonObject:
        stamp = _rfc3339(self.created)
        return {
            "name": self.name,
            "displayName": self.display_name,
            "mimeType": self.mime_type,
            "sizeBytes": str(len(self.data)),
            "createTime": stamp,
            "updateTime": stamp,
            "expirationTime": _rfc3339(self.created + FILE_TTL_S),
            "sha256Hash": base64.b64encode(hashlib.sha256(self.data).digest()).decode(),
            "uri": f"{base_url}/v1beta/{self.name}",
            "state": self.state(),
            "source": "UPLOADED",
        }


def _rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


class FileStore:
    """Files uploaded with the resumable protocol google-genai uses, kept in memory so later
    generateContent requests that reference them by URI give the brain the real bytes."""

    def __init__(self, max_bytes: int = FILES_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.files: OrderedDict[str, StoredFile] = OrderedDict()
        self.pending: dict[str, StoredFile] = {}

    def start(self, meta: Mapping[str, Any], size: int, mime_type: str) -> str:
        """Open an upload session; returns its id. A name already in use is refused (409)."""
        name = meta.get("name")
        if name is None:
            name = f"files/{uuid.uuid4().hex[:12]}"
        if not isinstance(name, str):
            raise FilesError(400, "INVALID_ARGUMENT", "file.name must be a string")
        if not name.startswith("files/"):
            name = f"files/{name}"
        if not _FILE_ID_RE.match(name.removeprefix("files/")):
            raise FilesError(
                400,
                "INVALID_ARGUMENT",
                "file.name id must be 1-40 lowercase letters, digits or dashes, "
                "not starting or ending with a dash",
            )
        if name in self.files or any(f.name == name for f in self.pending.values()):
            raise FilesError(409, "ALREADY_EXISTS", f"File {name} already exists.")
        if not mime_type:
            raise FilesError(400, "INVALID_ARGUMENT", "the upload's content type is missing")
        if size < 0 or size > self.max_bytes:
            raise FilesError(400, "INVALID_ARGUMENT", f"file size {size} is not allowed")
        display = meta.get("displayName", meta.get("display_name", ""))
        upload_id = uuid.uuid4().hex
        self.pending[upload_id] = StoredFile(
            name=name,
            mime_type=mime_type,
            display_name=str(display or ""),
            size_bytes=size,
            created=time.time(),
        )
        return upload_id

    def append(self, upload_id: str, offset: int, chunk: bytes, finalize: bool) -> StoredFile:
        stored = self.pending.get(upload_id)
        if stored is None:
            raise FilesError(404, "NOT_FOUND", "no such upload session")
        if offset != len(stored.data):
            raise FilesError(
                400, "INVALID_ARGUMENT", f"offset {offset} != {len(stored.data)} bytes received"
            )
        stored.data += chunk
        if len(stored.data) > stored.size_bytes:
            del self.pending[upload_id]
            raise FilesError(400, "INVALID_ARGUMENT", "more bytes than the upload declared")
        if finalize:
            if len(stored.data) != stored.size_bytes:
                del self.pending[upload_id]
                raise FilesError(
                    400,
                    "INVALID_ARGUMENT",
                    f"upload finalized at {len(stored.data)} of {stored.size_bytes} bytes",
                )
            del self.pending[upload_id]
            stored.complete = True
            stored.processing = stored.mime_type.lower().startswith("video/")
            self.files[stored.name] = stored
            self._evict()
        return stored

    def _evict(self) -> None:
        while sum(len(f.data) for f in self.files.values()) > self.max_bytes and self.files:
            self.files.popitem(last=False)

    def get(self, file_id: str) -> StoredFile:
        """What files.get returns; looking at a PROCESSING video finishes its processing."""
        stored = self.files.get(f"files/{file_id}")
        if stored is None:
            raise FilesError(
                403,
                "PERMISSION_DENIED",
                f"You do not have permission to access the File {file_id} or it may not exist.",
            )
        stored.processing = False
        return stored

    def delete(self, file_id: str) -> None:
        if self.files.pop(f"files/{file_id}", None) is None:
            raise FilesError(
                403,
                "PERMISSION_DENIED",
                f"You do not have permission to access the File {file_id} or it may not exist.",
            )

    def attach(self, media: FakeMedia) -> FakeMedia:
        """A fileData part that names an uploaded file, with that file's bytes filled in."""
        m = _FILE_URI_RE.match(media.uri or "")
        if m is None:
            return media  # gs:// and other URIs stay references the brain cannot open
        stored = self.files.get(f"files/{m['id']}")
        if stored is None:
            raise FilesError(
                403,
                "PERMISSION_DENIED",
                f"You do not have permission to access the File {m['id']} or it may not exist.",
            )
        if stored.processing:
            raise FilesError(
                400,
                "FAILED_PRECONDITION",
                f"The File {m['id']} is not in an ACTIVE state and usage is not allowed.",
            )
        return replace(media, data=bytes(stored.data))

    def reset(self) -> None:
        self.files.clear()
        self.pending.clear()


@dataclass
class FakeGemini:
    """All mutable server state; it lives on one event loop, so it needs no locks."""

    brain: Brain
    options: ServerOptions
    script: Script
    quotas: Quotas
    faults: FaultPicker
    stats: Stats = field(default_factory=Stats)
    files: FileStore = field(default_factory=FileStore)

    def reset(self) -> None:
        """Start over as if freshly started, but keep the current script rules."""
        self.stats.reset()
        self.quotas.reset()
        self.faults.reset()
        self.script.reset()
        self.files.reset()


STATE: web.AppKey[FakeGemini] = web.AppKey("fake_gemini", FakeGemini)


# ---- request parsing -----------------------------------------------------------------------


class InvalidArgument(ValueError):
    """The request body is not a generateContent request we can read (HTTP 400)."""


@dataclass(frozen=True)
class ParsedRequest:
    request: FakeRequest
    wants_json: bool


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _field(data: Mapping[str, Any], camel: str) -> Any:
    """google-genai sends camelCase at the top but snake_case inside some parts; take either."""
    return data[camel] if camel in data else data.get(_snake(camel))


def _mapping(value: object, where: str) -> Mapping[str, Any]:
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
    mime_type = _field(blob, "mimeType")
    if not isinstance(mime_type, str) or not mime_type:
        raise InvalidArgument(f"{where}.mimeType is required")
    if inline:
        return FakeMedia(mime_type=mime_type, data=_decode_base64(blob.get("data"), where))
    uri = _field(blob, "fileUri")
    if not isinstance(uri, str) or not uri:
        raise InvalidArgument(f"{where}.fileUri is required")
    return FakeMedia(mime_type=mime_type, uri=uri)


def _collect_parts(content: object, where: str, texts: list[str], media: list[FakeMedia]) -> None:
    parts = _mapping(content, where).get("parts")
    if not isinstance(parts, list):
        raise InvalidArgument(f"{where}.parts must be a list")
    for index, part in enumerate(parts):
        here = f"{where}.parts[{index}]"
        part_map = _mapping(part, here)
        if isinstance(part_map.get("text"), str):
            texts.append(part_map["text"])
        elif (inline := _field(part_map, "inlineData")) is not None:
            media.append(_media(_mapping(inline, here), f"{here}.inlineData", inline=True))
        elif (ref := _field(part_map, "fileData")) is not None:
            media.append(_media(_mapping(ref, here), f"{here}.fileData", inline=False))
        else:
            raise InvalidArgument(f"{here} has no text, inlineData or fileData")


def _optional_number(config: Mapping[str, Any], name: str) -> float | None:
    value = _field(config, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(f"generationConfig.{name} must be a number")
    return float(value)


def parse_generate_request(model: str, payload: object) -> ParsedRequest:
    """Turn a generateContent body into the brain's view of it."""
    body = _mapping(payload, "request body")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise InvalidArgument("* GenerateContentRequest.contents: contents is not specified")
    texts: list[str] = []
    media: list[FakeMedia] = []
    system = _field(body, "systemInstruction")
    if system is not None:
        _collect_parts(system, "systemInstruction", texts, media)
    system_text = "\n".join(texts)
    for index, content in enumerate(contents):
        _collect_parts(content, f"contents[{index}]", texts, media)
    config = _mapping(_field(body, "generationConfig"), "generationConfig")
    schema = _field(config, "responseSchema") or _field(config, "responseJsonSchema")
    max_tokens = _optional_number(config, "maxOutputTokens")
    mime_type = _field(config, "responseMimeType")
    thinking = _mapping(_field(config, "thinkingConfig"), "generationConfig.thinkingConfig")
    budget = _optional_number(thinking, "thinkingBudget")
    level = _field(thinking, "thinkingLevel")
    if level is not None and not isinstance(level, str):
        raise InvalidArgument("generationConfig.thinkingConfig.thinkingLevel must be a string")
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
    quota_id = _QUOTA_IDS[hit.kind]
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


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(request: FakeRequest, reply: str | None, thoughts: int = 0) -> JsonObject:
    visual = sum(1 for m in request.media if m.mime_type.startswith(("image/", "video/")))
    prompt = _estimate_tokens(request.text) + VISUAL_PART_TOKENS * visual
    usage: JsonObject = {"promptTokenCount": prompt, "totalTokenCount": prompt}
    if reply is not None:
        output = _estimate_tokens(reply)
        usage["candidatesTokenCount"] = output
        usage["totalTokenCount"] = prompt + output
    if thoughts > 0:  # billed as output; absent when the model did not think
        usage["thoughtsTokenCount"] = thoughts
        usage["totalTokenCount"] += thoughts
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


def _envelope(
    request: FakeRequest, reply: str | None, model_version: str, thoughts: int = 0
) -> JsonObject:
    return {
        "usageMetadata": _usage(request, reply, thoughts),
        "modelVersion": model_version,
        "responseId": uuid.uuid4().hex[:22],
    }


def text_reply_body(
    request: FakeRequest, text: str, finish_reason: str, model_version: str
) -> JsonObject:
    """A reply after the model's thinking: thoughts are billed, and thinking that eats
    maxOutputTokens leaves no answer at all (finishReason MAX_TOKENS, no parts)."""
    thoughts = thought_tokens(request)
    answer: str | None = text
    limit = request.max_output_tokens
    if limit is not None and finish_reason == "STOP":
        if thoughts >= limit:
            thoughts, answer, finish_reason = limit, None, "MAX_TOKENS"
        elif _estimate_tokens(text) > limit - thoughts:
            answer, finish_reason = text[: (limit - thoughts) * 4], "MAX_TOKENS"
    elif limit is not None:
        thoughts = min(thoughts, limit)
    content: JsonObject = {"role": "model"}
    if answer is not None:
        content["parts"] = [{"text": answer}]
    candidate = {"content": content, "finishReason": finish_reason, "index": 0}
    return {"candidates": [candidate], **_envelope(request, answer, model_version, thoughts)}


def withheld_reply_body(request: FakeRequest, finish_reason: str) -> JsonObject:
    """A candidate stopped for a non-text reason (SAFETY, RECITATION...): no content parts."""
    candidate = {
        "finishReason": finish_reason,
        "index": 0,
        "safetyRatings": _safety_ratings(finish_reason),
    }
    return {"candidates": [candidate], **_envelope(request, None, SCRIPTED_MODEL_VERSION)}


def blocked_prompt_body(request: FakeRequest, block_reason: str) -> JsonObject:
    feedback = {"blockReason": block_reason, "safetyRatings": _safety_ratings(block_reason)}
    return {"promptFeedback": feedback, **_envelope(request, None, SCRIPTED_MODEL_VERSION)}


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


# ---- the generateContent handler -----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: int
    body: JsonObject | list[Any]  # a list only for replayed bodies (Vertex's list-wrapped form)
    rule: int | None = None
    fault: Fault | None = None
    sent: JsonObject | None = None  # what the request asked for (thinking, output cap): /stats


async def _sleep_ms(milliseconds: float) -> None:
    if milliseconds > 0:
        await asyncio.sleep(milliseconds / 1000)


async def _read_request(request: web.Request, model: str) -> ParsedRequest:
    try:
        payload = await request.json()
    except ValueError as exc:
        raise InvalidArgument(f"Invalid JSON payload received: {exc}") from exc
    return parse_generate_request(model, payload)


def _scripted(state: FakeGemini, request: FakeRequest, rule: ScriptRule) -> Outcome:
    if rule.body is not None:  # a recorded reply, replayed byte for byte
        return Outcome(rule.status or 500, rule.body, rule.index)
    if rule.status == 429:
        hit = QuotaHit(rule.quota, state.quotas.limit(rule.quota), rule.retry_delay_s)
        return Outcome(429, quota_error_body(request.model, hit), rule.index)
    if rule.status is not None:
        return Outcome(rule.status, error_body(rule.status), rule.index)
    if rule.block_reason is not None:
        return Outcome(200, blocked_prompt_body(request, rule.block_reason), rule.index)
    finish_reason = rule.finish_reason or "STOP"
    if finish_reason not in TEXT_FINISH_REASONS:
        return Outcome(200, withheld_reply_body(request, finish_reason), rule.index)
    if rule.reply is not None:
        text, version = rule.reply, SCRIPTED_MODEL_VERSION
    else:
        text, version = state.brain.reply(request), SIMULATED_MODEL_VERSION
    if finish_reason == "MAX_TOKENS":
        text = truncate(text)
    return Outcome(200, text_reply_body(request, text, finish_reason, version), rule.index)


async def _simulated(state: FakeGemini, parsed: ParsedRequest, fault: Fault | None) -> Outcome:
    request = parsed.request
    if fault == "429":
        hit = QuotaHit("minute", state.quotas.limit("minute"), 1.0)
        return Outcome(429, quota_error_body(request.model, hit), fault=fault)
    if fault == "503":
        return Outcome(503, error_body(503), fault=fault)
    if fault == "slow":
        await _sleep_ms(state.options.slow_fault_ms)
    text = state.brain.reply(request)
    finish_reason = "STOP"
    if fault == "malformed":
        text = break_json(text)
    elif fault == "max_tokens":
        text, finish_reason = truncate(text), "MAX_TOKENS"
    body = text_reply_body(request, text, finish_reason, SIMULATED_MODEL_VERSION)
    return Outcome(200, body, fault=fault)


def _with_files(state: FakeGemini, parsed: ParsedRequest) -> ParsedRequest:
    """Fill in the bytes of every fileData part that names an uploaded file."""
    media = [state.files.attach(m) if m.uri else m for m in parsed.request.media]
    return replace(parsed, request=replace(parsed.request, media=media))


async def _answer(state: FakeGemini, request: web.Request, model: str) -> Outcome:
    """Quota first (decided on arrival, like Gemini), then latency, script, faults, brain."""
    try:
        parsed = _with_files(state, await _read_request(request, model))
    except InvalidArgument as exc:
        return Outcome(400, error_body(400, str(exc)))
    except FilesError as exc:
        return Outcome(exc.code, exc.body())
    outcome = await _answer_parsed(state, parsed, model)
    sent = {
        "thinking_budget": parsed.request.thinking_budget,
        "thinking_level": parsed.request.thinking_level,
        "max_output_tokens": parsed.request.max_output_tokens,
    }
    return replace(outcome, sent=sent)


async def _answer_parsed(state: FakeGemini, parsed: ParsedRequest, model: str) -> Outcome:
    try:
        check_thinking(parsed.request)
    except ThinkingRefused as exc:
        return Outcome(400, error_body(400, str(exc)))
    hit = state.quotas.admit(model, time.monotonic())
    await _sleep_ms(state.options.latency_ms)
    if hit is not None:
        return Outcome(429, quota_error_body(model, hit))
    rule = state.script.take(parsed.request.text)
    if rule is not None:
        await _sleep_ms(rule.delay_ms)
        return _scripted(state, parsed.request, rule)
    return await _simulated(state, parsed, state.faults.pick(parsed.wants_json))


async def _generate(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    try:
        outcome = await _answer(state, request, model)
    except Exception:
        # A broken brain must look like Gemini's 500 to the client, not kill the connection.
        logger.exception("fake-gemini: reply for model %s failed", model)
        outcome = Outcome(500, error_body(500))
    state.stats.record(outcome.status, model, outcome.rule, outcome.fault, outcome.sent)
    logger.info("POST %s -> %d", request.path, outcome.status)
    return web.json_response(outcome.body, status=outcome.status)


# ---- routes --------------------------------------------------------------------------------


def _not_found(request: web.Request, message: str | None = None) -> web.Response:
    text = message or f"fake-gemini has no route {request.method} {request.path}"
    return web.json_response(error_body(404, text), status=404)


def _base_url(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _files_error(exc: FilesError) -> web.Response:
    # The upload status header stops google-genai from retrying a refused chunk.
    return web.json_response(exc.body(), status=exc.code, headers={"X-Goog-Upload-Status": "final"})


async def _upload(request: web.Request) -> web.Response:
    """The resumable protocol: ``start`` opens a session and answers with its URL; then
    ``upload`` chunks at increasing offsets, the last one with ``finalize``."""
    files = request.app[STATE].files
    command = request.headers.get("X-Goog-Upload-Command", "").lower()
    commands = {part.strip() for part in command.split(",")}
    try:
        if "start" in commands:
            protocol = request.headers.get("X-Goog-Upload-Protocol", "").lower()
            if protocol != "resumable":
                raise FilesError(400, "INVALID_ARGUMENT", "only resumable uploads are supported")
            body = await request.json() if request.can_read_body else {}
            meta = _mapping(body, "request body").get("file") or {}
            size = request.headers.get("X-Goog-Upload-Header-Content-Length")
            mime = request.headers.get("X-Goog-Upload-Header-Content-Type")
            upload_id = files.start(
                _mapping(meta, "file"),
                int(size if size is not None else _field(meta, "sizeBytes") or -1),
                mime or _field(meta, "mimeType") or "",
            )
            headers = {
                "X-Goog-Upload-URL": f"{_base_url(request)}{request.path}?upload_id={upload_id}",
                "X-Goog-Upload-Status": "active",
                "X-Goog-Upload-Chunk-Granularity": str(UPLOAD_CHUNK_GRANULARITY),
            }
            return web.Response(status=200, headers=headers)
        if commands & {"upload", "finalize"}:
            session = request.query.get("upload_id")
            if not session:
                raise FilesError(400, "INVALID_ARGUMENT", "upload_id is missing")
            offset = int(request.headers.get("X-Goog-Upload-Offset", "0"))
            chunk = await request.read()
            stored = files.append(session, offset, chunk, "finalize" in commands)
            if not stored.complete:
                return web.Response(status=200, headers={"X-Goog-Upload-Status": "active"})
            request.app[STATE].stats.uploads += 1
            logger.info(
                "uploaded %s (%d bytes, %s)", stored.name, len(stored.data), stored.mime_type
            )
            return web.json_response(
                {"file": stored.resource(_base_url(request))},
                headers={"X-Goog-Upload-Status": "final"},
            )
        raise FilesError(400, "INVALID_ARGUMENT", f"unknown X-Goog-Upload-Command {command!r}")
    except FilesError as exc:
        return _files_error(exc)
    except (ValueError, InvalidArgument) as exc:
        return _files_error(FilesError(400, "INVALID_ARGUMENT", str(exc)))


async def _file(request: web.Request, file_id: str) -> web.Response:
    files = request.app[STATE].files
    try:
        if request.method == "GET":
            return web.json_response(files.get(file_id).resource(_base_url(request)))
        if request.method == "DELETE":
            files.delete(file_id)
            return web.json_response({})
    except FilesError as exc:
        return _files_error(exc)
    return _not_found(request, f"fake-gemini serves GET and DELETE on files, not {request.method}")


_UPLOAD_PATH = re.compile(r"/upload/(?:v1|v1beta)/files")
_FILE_PATH = re.compile(r"/(?:v1|v1beta)/files/(?P<id>[^/:]+)")


async def _route_api(request: web.Request) -> web.Response:
    """Catch-all: the ``{model}:{method}`` tail does not fit aiohttp's route syntax."""
    if _UPLOAD_PATH.fullmatch(request.path) and request.method == "POST":
        return await _upload(request)
    if file_match := _FILE_PATH.fullmatch(request.path):
        return await _file(request, file_match["id"])
    match = _GENERATE_PATH.fullmatch(request.path)
    if match is None:
        return _not_found(request)
    model, colon, method = match["tail"].rpartition(":")
    if not colon or not model:
        return _not_found(request)
    if method == "countTokens" and request.method == "POST":
        return await _count_tokens(request.app[STATE], request, model)
    if method != "generateContent" or request.method != "POST":
        return _not_found(request, f"fake-gemini only serves POST :generateContent, not {method}")
    return await _generate(request.app[STATE], request, model)


async def _count_tokens(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    """models.countTokens: the prompt's tokens as the fake counts them for usageMetadata, so a
    dry run counted here matches what a run would be billed. Counted apart from generate."""
    state.stats.count_tokens += 1
    try:
        body = _mapping(await request.json(), "request body")
        inner = _field(body, "generateContentRequest")
        contents = (inner if isinstance(inner, Mapping) else body).get("contents")
        if not isinstance(contents, list) or not contents:
            raise InvalidArgument("* CountTokensRequest.contents: contents is not specified")
        texts: list[str] = []
        media: list[FakeMedia] = []
        for index, content in enumerate(contents):
            _collect_parts(content, f"contents[{index}]", texts, media)
    except (InvalidArgument, ValueError) as exc:
        return web.json_response(error_body(400, str(exc)), status=400)
    visual = sum(1 for m in media if m.mime_type.startswith(("image/", "video/")))
    total = _estimate_tokens("\n".join(texts)) + VISUAL_PART_TOKENS * visual
    logger.info("POST %s (%s) -> 200", request.path, model)
    return web.json_response({"totalTokens": total})


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def _stats(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return web.json_response(state.stats.snapshot(state.script.fired))


async def _files_stats(request: web.Request) -> web.Response:
    """Files API activity, apart from /stats (whose counters are generateContent's)."""
    state = request.app[STATE]
    files = [
        {"name": f.name, "mime_type": f.mime_type, "size_bytes": len(f.data), "state": f.state()}
        for f in state.files.files.values()
    ]
    return web.json_response({"uploads": state.stats.uploads, "files": files})


async def _set_script(request: web.Request) -> web.Response:
    """Replace the rules at runtime, so one server can serve many test scenarios."""
    try:
        rules = parse_rules(await request.json())
    except ValueError as exc:  # JSONDecodeError and ScriptError are both ValueErrors
        return web.json_response(error_body(400, str(exc)), status=400)
    request.app[STATE].script.replace(rules)
    return web.json_response({"rules": len(rules)})


async def _reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return web.json_response({"reset": True})


def create_app(brain: Brain | None = None, options: ServerOptions | None = None) -> web.Application:
    """Build the app; a bad script raises ScriptError here, before any port is bound."""
    options = options or ServerOptions()
    rules = load_script(options.script) if options.script is not None else []
    state = FakeGemini(
        brain=brain if brain is not None else default_brain(),
        options=options,
        script=Script(rules),
        quotas=Quotas(options.rpm, options.rpd, options.quota_window_s),
        faults=FaultPicker(options.fault_rate, options.seed),
    )
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[STATE] = state
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/stats", _stats)
    app.router.add_get("/stats/files", _files_stats)
    app.router.add_post("/script", _set_script)
    app.router.add_post("/reset", _reset)
    app.router.add_route("*", "/{tail:.*}", _route_api)
    return app


# ---- running it ----------------------------------------------------------------------------


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def _serve(
    app: web.Application, host: str, port: int, stop: asyncio.Event, on_ready: Callable[[str], None]
) -> None:
    # access_log=None: aiohttp's access log prints the query string, which may hold ?key=.
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        on_ready(_url(host, runner.addresses[0][1]))
        await stop.wait()
    finally:
        await runner.cleanup()


def _announce(url: str) -> None:
    """The one stdout line a parent process reads to learn the (possibly random) port."""
    print(f"fake-gemini listening on {url} (simulated judge)", flush=True)


async def _serve_until_signalled(app: web.Application, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    await _serve(app, host, port, stop, _announce)


def serve_app(app: web.Application, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve until SIGINT/SIGTERM; port 0 picks a free port (printed on the ready line)."""
    asyncio.run(_serve_until_signalled(app, host, port))


def run_server(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    brain: Brain | None = None,
    **options: Unpack[ServerOptionsArgs],
) -> None:
    """Blocking entry point behind ``python -m fake_gemini``."""
    serve_app(create_app(brain, ServerOptions(**options)), host, port)


class _ServerThread(threading.Thread):
    """Runs the app on its own event loop, so sync code (tests, the client) can call it."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        super().__init__(name="fake-gemini", daemon=True)
        self._app = app
        self._host = host
        self._port = port
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self.url: str | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # handed to the starting thread by wait_ready()
            self.error = exc
            if self.url is not None:
                logger.exception("fake-gemini at %s stopped unexpectedly", self.url)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        await _serve(self._app, self._host, self._port, self._stop_event, self._on_ready)

    def _on_ready(self, url: str) -> None:
        self.url = url
        self._ready.set()

    def wait_ready(self, timeout_s: float = 10.0) -> str:
        if not self._ready.wait(timeout_s):
            raise TimeoutError("fake-gemini did not start in time")
        if self.url is None:
            if isinstance(self.error, Exception):
                raise self.error
            raise RuntimeError("fake-gemini failed to start") from self.error
        return self.url

    def shutdown(self, timeout_s: float = 10.0) -> None:
        if self._loop is not None and self._stop_event is not None and self.is_alive():
            self._loop.call_soon_threadsafe(self._stop_event.set)
        self.join(timeout_s)


@contextmanager
def running_server(
    *,
    brain: Brain | None = None,
    host: str = DEFAULT_HOST,
    port: int = 0,
    **options: Unpack[ServerOptionsArgs],
) -> Iterator[str]:
    """Serve in a background thread for the ``with`` block; yields the base URL."""
    app = create_app(brain, ServerOptions(**options))
    thread = _ServerThread(app, host, port)
    thread.start()
    try:
        yield thread.wait_ready()
    finally:
        thread.shutdown()
