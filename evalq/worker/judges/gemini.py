"""The Gemini judge on google-genai: structured output, a timeout on every call, usage per call,
every failure mapped onto evalq's errors; the SDK's retries stay off, so transient failures are
retried here with tenacity and the attempt count is known."""

from __future__ import annotations

import copy
import re
import threading
from dataclasses import replace
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from evalq.core.errors import (
    BadRequest,
    JudgeError,
    QuotaExhausted,
    RateLimited,
    TransientJudgeError,
    retried_in_process,
)
from evalq.core.judge import (
    JudgeReply,
    JudgeRequest,
    MediaPart,
    reply_schema,
)
from evalq.worker.judges.limiter import RateLimiter
from evalq.worker.judges.reply_reading import reply_from_response, unreadable_reply
from evalq.worker.settings import Settings

_DELAY_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*s\s*$")
# The message repeats the delay ("Please retry in 47.434392449s.") when details are cut short.
_MESSAGE_DELAY_RE = re.compile(r"retry in ([0-9]*\.?[0-9]+)\s*s\b", re.IGNORECASE)
_DEFAULT_RATE_LIMIT_DELAY_S = 10.0


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection and timeout errors of whichever httpx flavour the SDK runs on."""
    found: list[type[BaseException]] = [TimeoutError, ConnectionError]
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        found += [module.TransportError, module.TimeoutException]
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()


def _error_details(exc: genai_errors.APIError) -> list[dict[str, Any]]:
    """google.rpc details, from Gemini's ``{"error": {...}}`` or Vertex's list-wrapped
    ``[{"error": {...}}, ...]`` (the SDK unwraps a one-element list, not a longer one)."""
    bodies = exc.details if isinstance(exc.details, list) else [exc.details]
    found: list[dict[str, Any]] = []
    for body in bodies:
        if not isinstance(body, dict):
            continue
        error = body.get("error", body)
        details = error.get("details", []) if isinstance(error, dict) else []
        found += [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    return found


def map_api_error(exc: genai_errors.APIError) -> JudgeError:
    """Turn an SDK error into the one hierarchy; 429 keeps the delay the server asked for."""
    message = f"{exc.code} {exc.status}: {exc.message}"
    if exc.code == 429:
        delay, per_day = None, False
        for detail in _error_details(exc):
            kind = str(detail.get("@type", ""))
            if kind.endswith("RetryInfo"):
                m = _DELAY_RE.match(str(detail.get("retryDelay", "")))
                delay = float(m.group(1)) if m else None
            if kind.endswith("QuotaFailure"):
                violations = detail.get("violations")
                for violation in violations if isinstance(violations, list) else []:
                    if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId")):
                        per_day = True
        if per_day:
            return QuotaExhausted(f"daily quota exhausted: {message}")
        if delay is None and (m := _MESSAGE_DELAY_RE.search(exc.message or "")):
            delay = float(m.group(1))
        if delay is None:  # a 429 that says nothing of its kind: retried, within a total cap
            message += f" (no retry delay given; retrying after {_DEFAULT_RATE_LIMIT_DELAY_S:g} s)"
        return RateLimited(
            message, retry_after_s=delay if delay is not None else _DEFAULT_RATE_LIMIT_DELAY_S
        )
    if exc.code in (408,) or (exc.code is not None and exc.code >= 500):
        return TransientJudgeError(message)
    return BadRequest(message)


def _part(media: MediaPart) -> types.Part:
    if media.data is not None:
        return types.Part.from_bytes(data=media.data, mime_type=media.mime_type)
    return types.Part.from_uri(file_uri=media.uri or "", mime_type=media.mime_type)


def _thinking_config(request: JudgeRequest) -> types.ThinkingConfig | None:
    thinking = request.thinking
    if thinking is None:
        return None  # the model's own default
    if thinking.level is not None:
        return types.ThinkingConfig(thinking_level=types.ThinkingLevel(thinking.level.upper()))
    return types.ThinkingConfig(thinking_budget=thinking.budget)


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """The reply schema as the JSON schema the SDK would derive from the class, computed once
    per class: deriving it is pydantic's costliest step on every call. A fresh copy each time,
    because the SDK rewrites the dict it is given in place (the request sent is the same)."""
    return copy.deepcopy(reply_schema(model))


def request_parts(
    request: JudgeRequest, max_output_tokens: int
) -> tuple[list[types.Content], types.GenerateContentConfig]:
    """The contents and config of a request, as sent online and in a batch alike."""
    config = types.GenerateContentConfig(
        temperature=request.temperature,
        max_output_tokens=request.max_output_tokens or max_output_tokens,
        response_mime_type="application/json" if request.schema else None,
        response_schema=_schema(request.schema) if request.schema else None,
        system_instruction=request.system_instruction,
        thinking_config=_thinking_config(request),
        response_logprobs=True if request.logprobs else None,
        logprobs=request.logprobs or None,
        # Each sample at a temperature above zero is its own draw, repeatable: asked again
        # (a resume, a redelivery), a sample gets the answer it got before where the API can.
        seed=request.sample if request.temperature > 0 else None,
    )
    contents = [
        types.Content(
            role="user",
            parts=[*map(_part, request.media), types.Part.from_text(text=request.prompt)],
        )
    ]
    return contents, config


def _connection_limits(connections: int) -> dict[str, Any]:
    """httpx's pool allows 100 connections; a gevent worker holds hundreds of calls at once,
    and a call that finds no connection waits and then fails with a pool timeout."""
    for name in ("httpx2", "httpx"):  # the flavour the SDK runs on (it prefers httpx2)
        try:
            module = __import__(name)
        except ImportError:
            continue
        limits = module.Limits(max_connections=connections, max_keepalive_connections=connections)
        return {"limits": limits}
    return {}


def make_client(settings: Settings) -> genai.Client:
    """One client per process, shared by every task in it (httpx's pool is thread-safe, and
    under gevent its locks and sockets are patched to yield)."""
    options = types.HttpOptions(
        base_url=settings.gemini_base_url,
        api_version=settings.gemini_api_version,
        timeout=int(settings.judge_timeout_s * 1000),
        client_args=_connection_limits(settings.connection_slots),
    )
    if settings.use_vertexai:
        # EVALQ_VERTEX_API_KEY, given explicitly (with project and location), else ADC.
        secret = settings.vertex_api_key
        vertex_key = secret.get_secret_value().strip() if secret else None
        return genai.Client(
            vertexai=True,
            project=settings.vertex_project,
            location=settings.vertex_location,
            api_key=vertex_key or None,
            http_options=options,
        )
    # Against the fake server no key is needed; the SDK insists on one, so send a placeholder.
    key = settings.api_key.get_secret_value() if settings.api_key else "offline-no-key"
    return genai.Client(api_key=key, http_options=options)


class GeminiJudge:
    """A Judge backed by generateContent. Thread-safe: one instance serves a worker's threads."""

    def __init__(
        self,
        model: str,
        settings: Settings,
        client: genai.Client | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.model = model
        self._settings = settings
        self._client = client or make_client(settings)  # keep a reference: a dropped client closes
        self._limiter = limiter

    def generate(self, request: JudgeRequest) -> JudgeReply:
        retrying = Retrying(
            stop=stop_after_attempt(self._settings.transient_attempts),
            wait=wait_random_exponential(multiplier=0.5, max=self._settings.transient_max_wait_s),
            retry=retry_if_exception(retried_in_process),
            reraise=True,
        )
        attempts, waited = 0, 0.0
        for attempt in retrying:
            with attempt:
                try:
                    waited += self._wait_for_slot(request)
                    attempts += 1
                    reply = self._call_once(request)
                except JudgeError as exc:  # what this call spent so far travels with it
                    spent = exc.costing(attempts=attempts, limiter_wait_s=waited)
                    raise spent.with_traceback(exc.__traceback__) from None
        # The limiter's token schedule is corrected by evalq.worker.judges.stack.TokenCorrection.
        return replace(reply, attempts=attempts, limiter_wait_s=waited)

    def _wait_for_slot(self, request: JudgeRequest) -> float:
        if self._limiter is None:
            return 0.0
        return self._limiter.acquire(self.model, request.estimated_tokens())

    def _call_once(self, request: JudgeRequest) -> JudgeReply:
        contents, config = request_parts(request, self._settings.max_output_tokens)
        try:
            response = self._client.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        except genai_errors.APIError as exc:
            error = map_api_error(exc)
            if isinstance(error, RateLimited) and self._limiter is not None:
                self._limiter.park(self.model, error.retry_after_s)  # every worker backs off
            raise error from None
        except _TRANSPORT_ERRORS as exc:
            raise TransientJudgeError(f"transport error: {type(exc).__name__}: {exc}") from None
        except Exception as exc:
            if (unreadable := unreadable_reply(exc)) is not None:
                raise unreadable from None
            raise
        return self._reply(response)

    def _reply(self, response: types.GenerateContentResponse) -> JudgeReply:
        return reply_from_response(self.model, response)


_judges: dict[str, GeminiJudge] = {}
_lock = threading.Lock()


def get_judge(model: str, settings: Settings, limiter: RateLimiter | None = None) -> GeminiJudge:
    """One judge per model per process, created lazily (after a prefork fork, never before)."""
    with _lock:
        if model not in _judges:
            client = next(iter(_judges.values()))._client if _judges else None
            _judges[model] = GeminiJudge(model, settings, client, limiter)
        return _judges[model]


def forget_judges() -> None:
    """A process that changes its settings (the in-process task runner) starts with none."""
    _judges.clear()
