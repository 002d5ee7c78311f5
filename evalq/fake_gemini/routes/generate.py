"""``models/{model}:generateContent`` and ``:countTokens``: quota first (decided on arrival, like
Gemini), then latency, the script, faults and the brain."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web

from evalq.fake_gemini.files import FilesError
from evalq.fake_gemini.logprobs import LogprobsRefused
from evalq.fake_gemini.logprobs import check as check_logprobs
from evalq.fake_gemini.protocol import SCRIPTED_MODEL_VERSION, FakeMedia, FakeRequest, JsonObject
from evalq.fake_gemini.quotas import Fault, QuotaHit
from evalq.fake_gemini.rest import (
    VISUAL_PART_TOKENS,
    InvalidArgument,
    ParsedRequest,
    blocked_prompt_body,
    break_json,
    collect_parts,
    error_body,
    estimate_tokens,
    parse_generate_request,
    quota_error_body,
    text_reply_body,
    truncate,
    wire_field,
    wire_mapping,
    withheld_reply_body,
)
from evalq.fake_gemini.routes.responses import error_response
from evalq.fake_gemini.script import TEXT_FINISH_REASONS, ScriptRule
from evalq.fake_gemini.state import FakeGemini
from evalq.fake_gemini.thinking import ThinkingRefused
from evalq.fake_gemini.thinking import check as check_thinking

logger = logging.getLogger(__name__)

# ---- the generateContent handler -----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: int
    body: JsonObject | list[Any]  # a list only for replayed bodies (Vertex's list-wrapped form)
    rule: int | None = None
    fault: Fault | None = None
    sent: JsonObject | None = None  # what the request asked for (thinking, output cap): /stats
    recorded: bool = False  # a script rule's recorded body, replayed as it is on every route


# How a route words an outcome on the wire: the Gemini API's as the fake writes it; Vertex's
# (evalq.fake_gemini.routes.vertex) reshapes it.
Wording = Callable[[Outcome], JsonObject | list[Any]]


def gemini_wording(outcome: Outcome) -> JsonObject | list[Any]:
    return outcome.body


async def _sleep_ms(milliseconds: float) -> None:
    if milliseconds > 0:
        await asyncio.sleep(milliseconds / 1000)


async def _read_request(request: web.Request, model: str) -> ParsedRequest:
    try:
        payload = await request.json()
    except ValueError as exc:
        raise InvalidArgument(f"Invalid JSON payload received: {exc}") from exc
    return parse_generate_request(model, payload)


def scripted(state: FakeGemini, request: FakeRequest, rule: ScriptRule) -> Outcome:
    if rule.body is not None:  # a recorded reply, replayed byte for byte
        return Outcome(rule.status or 500, rule.body, rule.index, recorded=True)
    if rule.status == 429:
        hit = QuotaHit(rule.quota, state.quotas.limit(rule.quota), rule.retry_delay_s)
        return Outcome(429, quota_error_body(request.model, hit), rule.index)
    if rule.status is not None:
        return Outcome(rule.status, error_body(rule.status), rule.index)
    if rule.block_reason is not None:
        return Outcome(200, blocked_prompt_body(request, rule.block_reason), rule.index)
    finish_reason = rule.finish_reason or "STOP"
    if finish_reason not in TEXT_FINISH_REASONS:
        body = withheld_reply_body(request, finish_reason, cached_tokens=rule.cached_tokens)
        return Outcome(200, body, rule.index)
    if rule.reply is not None:
        text, version = rule.reply, SCRIPTED_MODEL_VERSION
    else:
        text, version = state.brain.reply(request), state.simulated_version()
    version = rule.model_version or version
    if finish_reason == "MAX_TOKENS":
        text = truncate(text)
    body = text_reply_body(request, text, finish_reason, version, cached_tokens=rule.cached_tokens)
    return Outcome(200, body, rule.index)


async def simulated(state: FakeGemini, parsed: ParsedRequest, fault: Fault | None) -> Outcome:
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
    body = text_reply_body(request, text, finish_reason, state.simulated_version())
    return Outcome(200, body, fault=fault)


def with_files(state: FakeGemini, parsed: ParsedRequest) -> ParsedRequest:
    """Fill in the bytes of every fileData part that names an uploaded file."""
    media = [state.files.attach(m) if m.uri else m for m in parsed.request.media]
    return replace(parsed, request=replace(parsed.request, media=media))


async def _answer(state: FakeGemini, request: web.Request, model: str) -> Outcome:
    """Quota first (decided on arrival, like Gemini), then latency, script, faults, brain."""
    try:
        parsed = with_files(state, await _read_request(request, model))
    except InvalidArgument as exc:
        return Outcome(400, error_body(400, str(exc)))
    except FilesError as exc:
        return Outcome(exc.code, exc.body())
    outcome = await _answer_parsed(state, parsed, model)
    sent = {
        "thinking_budget": parsed.request.thinking_budget,
        "thinking_level": parsed.request.thinking_level,
        "max_output_tokens": parsed.request.max_output_tokens,
        # The fileData URIs it named (a gs:// object, an uploaded file): which objects a run
        # had the judge read.
        "file_uris": [m.uri for m in parsed.request.media if m.uri],
    }
    return replace(outcome, sent=sent)


async def _answer_parsed(state: FakeGemini, parsed: ParsedRequest, model: str) -> Outcome:
    try:
        check_thinking(parsed.request)
        check_logprobs(parsed.request)
    except (ThinkingRefused, LogprobsRefused) as exc:
        return Outcome(400, error_body(400, str(exc)))
    hit = state.quotas.admit(model, time.monotonic())
    await state.latency.wait()
    if hit is not None:
        return Outcome(429, quota_error_body(model, hit))
    rule = state.script.take(parsed.request.text)
    if rule is not None:
        await _sleep_ms(rule.delay_ms)
        return scripted(state, parsed.request, rule)
    return await simulated(state, parsed, state.faults.pick(parsed.wants_json))


async def generate(
    state: FakeGemini,
    request: web.Request,
    model: str,
    *,
    route: str = "gemini",
    wording: Wording = gemini_wording,
) -> web.Response:
    """One generateContent call on any route: the same judge, script, quotas and faults,
    counted per route and worded in the route's dialect."""
    arrived = state.stats.arrived()
    try:
        outcome = await _answer(state, request, model)
    except Exception:
        # A broken brain must look like Gemini's 500 to the client, not kill the connection.
        logger.exception("fake-gemini: reply for model %s failed", model)
        outcome = Outcome(500, error_body(500))
    finally:
        state.stats.left()
    state.stats.record(
        outcome.status, model, outcome.rule, outcome.fault, outcome.sent, route, arrived
    )
    logger.info("POST %s -> %d", request.path, outcome.status)
    return web.json_response(wording(outcome), status=outcome.status)


async def count_tokens(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    """models.countTokens: the prompt's tokens as the fake counts them for usageMetadata, so a
    dry run counted here matches what a run would be billed. Counted apart from generate."""
    state.stats.count_tokens += 1
    try:
        body = wire_mapping(await request.json(), "request body")
        inner = wire_field(body, "generateContentRequest")
        contents = (inner if isinstance(inner, Mapping) else body).get("contents")
        if not isinstance(contents, list) or not contents:
            raise InvalidArgument("* CountTokensRequest.contents: contents is not specified")
        texts: list[str] = []
        media: list[FakeMedia] = []
        for index, content in enumerate(contents):
            collect_parts(content, f"contents[{index}]", texts, media)
    except (InvalidArgument, ValueError) as exc:
        return error_response(400, str(exc))
    visual = sum(1 for m in media if m.mime_type.startswith(("image/", "video/")))
    total = estimate_tokens("\n".join(texts)) + VISUAL_PART_TOKENS * visual
    logger.info("POST %s (%s) -> 200", request.path, model)
    return web.json_response({"totalTokens": total})
