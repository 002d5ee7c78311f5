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
import json
import logging
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict, Unpack

from aiohttp import web

from evalq.core.judge import SIMULATED_MODEL_VERSION
from fake_gemini.batches import Answered, BatchError, BatchStore
from fake_gemini.files import UPLOAD_CHUNK_GRANULARITY, FilesError, FileStore
from fake_gemini.protocol import (
    SCRIPTED_MODEL_VERSION,
    Brain,
    FakeMedia,
    FakeRequest,
    JsonObject,
)
from fake_gemini.quotas import Fault, FaultPicker, QuotaHit, Quotas, Stats
from fake_gemini.realism import BatchRealism
from fake_gemini.rest import (
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
from fake_gemini.script import (
    TEXT_FINISH_REASONS,
    Script,
    ScriptRule,
    load_script,
    parse_rules,
)
from fake_gemini.thinking import ThinkingRefused
from fake_gemini.thinking import check as check_thinking

logger = logging.getLogger(__name__)


DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
# Inline media is sent base64 in the JSON body; real Gemini accepts up to 20 MB of it.
MAX_BODY_BYTES = 64 * 1024 * 1024

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
    # How long a batch stays PENDING, and then RUNNING, before it is answered (POST
    # /batch-delay changes it while the server runs, for batches already in flight too).
    batch_delay_s: float = 0.0
    # Batch realism switches (fake_gemini.realism) on from the start: a BatchRealism or its
    # JSON form ({"reorder": true, "late_output": 3}). POST /batch-realism replaces them and
    # POST /reset brings these back.
    batch_realism: BatchRealism | Mapping[str, object] | None = None

    def __post_init__(self) -> None:
        BatchRealism.parse(self.batch_realism)  # a bad switch fails here, before serving
        if self.quota_window_s <= 0:
            raise ValueError("quota_window_s must be > 0")
        if self.batch_delay_s < 0:
            raise ValueError("batch_delay_s must be >= 0")
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
    batch_delay_s: float
    batch_realism: BatchRealism | Mapping[str, object] | None


def default_brain() -> Brain:
    """The simulated judge, imported late so the server module loads without it."""
    from fake_gemini.brain import SimulatedJudge

    return SimulatedJudge()


class Latency:
    """The delay before every reply. POST /latency changes it for requests already waiting
    too: a test holds calls open with a long latency, then releases them with 0 once it has
    seen what it waits for, instead of waiting the latency out."""

    def __init__(self, ms: float) -> None:
        self.ms = ms
        self._changed = asyncio.Event()

    def set(self, ms: float) -> None:
        self.ms = ms
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()  # every waiter looks at the new latency

    async def wait(self) -> None:
        start = time.monotonic()
        while (remaining := start + self.ms / 1000 - time.monotonic()) > 0:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)


@dataclass
class FakeGemini:
    """All mutable server state; it lives on one event loop, so it needs no locks."""

    brain: Brain
    options: ServerOptions
    script: Script
    quotas: Quotas
    faults: FaultPicker
    latency: Latency
    stats: Stats = field(default_factory=Stats)
    files: FileStore = field(default_factory=FileStore)
    batches: BatchStore = field(default_factory=BatchStore)

    def reset(self) -> None:
        """Start over as if freshly started, but keep the current script rules. The batch
        realism switches go back to the ones the server was started with."""
        self.stats.reset()
        self.quotas.reset()
        self.faults.reset()
        self.script.reset()
        self.files.reset()
        self.batches.reset()
        self.batches.realism = BatchRealism.parse(self.options.batch_realism)


STATE: web.AppKey[FakeGemini] = web.AppKey("fake_gemini", FakeGemini)


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
        body = withheld_reply_body(request, finish_reason, cached_tokens=rule.cached_tokens)
        return Outcome(200, body, rule.index)
    if rule.reply is not None:
        text, version = rule.reply, SCRIPTED_MODEL_VERSION
    else:
        text, version = state.brain.reply(request), SIMULATED_MODEL_VERSION
    if finish_reason == "MAX_TOKENS":
        text = truncate(text)
    body = text_reply_body(request, text, finish_reason, version, cached_tokens=rule.cached_tokens)
    return Outcome(200, body, rule.index)


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
    await state.latency.wait()
    if hit is not None:
        return Outcome(429, quota_error_body(model, hit))
    rule = state.script.take(parsed.request.text)
    if rule is not None:
        await _sleep_ms(rule.delay_ms)
        return _scripted(state, parsed.request, rule)
    return await _simulated(state, parsed, state.faults.pick(parsed.wants_json))


async def _generate(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    state.stats.arrived()
    try:
        outcome = await _answer(state, request, model)
    except Exception:
        # A broken brain must look like Gemini's 500 to the client, not kill the connection.
        logger.exception("fake-gemini: reply for model %s failed", model)
        outcome = Outcome(500, error_body(500))
    finally:
        state.stats.left()
    state.stats.record(outcome.status, model, outcome.rule, outcome.fault, outcome.sent)
    logger.info("POST %s -> %d", request.path, outcome.status)
    return web.json_response(outcome.body, status=outcome.status)


# ---- the batches API -----------------------------------------------------------------------


async def _answer_in_batch(state: FakeGemini, model: str, body: JsonObject) -> Answered:
    """One request of a batch, answered as generateContent would answer it, apart from the
    online quotas and faults (batches have their own quota, and their own failures)."""
    try:
        parsed = _with_files(state, parse_generate_request(model, body))
        check_thinking(parsed.request)
        rule = state.script.take(parsed.request.text)
        if rule is not None:
            outcome = _scripted(state, parsed.request, rule)
        else:
            outcome = await _simulated(state, parsed, None)
    except (InvalidArgument, ThinkingRefused) as exc:
        return Answered(400, error_body(400, str(exc)))
    except FilesError as exc:
        return Answered(exc.code, exc.body())
    except Exception:
        logger.exception("fake-gemini: a batch request for model %s failed", model)
        return Answered(500, error_body(500))
    if rule is not None and rule.body is not None:
        return _recorded(outcome.status, outcome.body)
    assert isinstance(outcome.body, dict)  # only a replayed body is a list
    return Answered(outcome.status, outcome.body)


def _recorded(status: int, body: JsonObject | list[Any]) -> Answered:
    """A replayed body inside a batch: a 200 is the request's response; an error status
    fails the request with the body's ``error`` object as it is (a list-wrapped body's
    first), or with the body itself when it is that object already, as a per-request error
    recorded from a batch's results is."""
    if isinstance(body, list):
        body = body[0] if body and isinstance(body[0], dict) else {}
    if status == 200:
        return Answered(200, body, recorded=True)
    error = body.get("error")
    return Answered(status, error if isinstance(error, dict) else body, recorded=True)


def _batch_error(exc: BatchError | FilesError | InvalidArgument) -> web.Response:
    if isinstance(exc, InvalidArgument):
        return web.json_response(error_body(400, str(exc)), status=400)
    return web.json_response(exc.body(), status=exc.code)


async def _create_batch(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    raw = await request.read()
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        return web.json_response(error_body(400, f"Invalid JSON payload: {exc}"), status=400)

    async def answer(batch_model: str, body: JsonObject) -> Answered:
        return await _answer_in_batch(state, batch_model, body)

    try:
        batch = state.batches.create(model, payload, state.files, state.script, answer, len(raw))
    except (BatchError, FilesError, InvalidArgument) as exc:
        return _batch_error(exc)
    logger.info("created %s (%d requests, %s)", batch.name, len(batch.requests), model)
    return web.json_response(batch.operation())


async def _batch(request: web.Request, tail: str) -> web.Response:
    """``batches``, ``batches/{id}`` (GET, DELETE) and ``batches/{id}:cancel`` (POST)."""
    batches = request.app[STATE].batches
    batch_id, colon, method = tail.partition(":")
    try:
        if not batch_id and request.method == "GET":
            size = int(request.query.get("pageSize", "50") or 50)
            page, token = batches.page(size, request.query.get("pageToken"))
            body: JsonObject = {"operations": [b.operation() for b in page]}
            if token is not None:
                body["nextPageToken"] = token
            return web.json_response(body)
        if colon and method == "cancel" and request.method == "POST":
            batches.cancel(batch_id)
            return web.json_response({})
        if not colon and request.method == "GET":
            return web.json_response(batches.get_operation(batch_id))
        if not colon and request.method == "DELETE":
            batches.delete(batch_id)
            return web.json_response({})
    except BatchError as exc:
        return _batch_error(exc)
    except ValueError as exc:
        return web.json_response(error_body(400, str(exc)), status=400)
    return _not_found(request)


async def _download(request: web.Request, file_id: str) -> web.Response:
    try:
        data = request.app[STATE].files.download(file_id)
    except FilesError as exc:
        return _files_error(exc)
    return web.Response(body=data, content_type="application/octet-stream")


async def _set_batch_delay(request: web.Request) -> web.Response:
    """Change how long batches wait in PENDING and in RUNNING, those in flight included:
    ``delay_s`` sets both, ``pending_s`` and ``running_s`` one each (a test holds batches
    RUNNING with a long ``running_s``, then releases them with 0)."""
    batches = request.app[STATE].batches
    try:
        body = wire_mapping(await request.json(), "request body")
        given = {
            name: float(body[name])
            for name in ("delay_s", "pending_s", "running_s")
            if name in body
        }
        if not given or any(value < 0 for value in given.values()):
            raise ValueError("give delay_s, pending_s or running_s, each >= 0")
    except (ValueError, TypeError, InvalidArgument) as exc:
        return web.json_response(error_body(400, f"bad batch delay: {exc}"), status=400)
    if "delay_s" in given:
        batches.pending_s = batches.running_s = given["delay_s"]
    batches.pending_s = given.get("pending_s", batches.pending_s)
    batches.running_s = given.get("running_s", batches.running_s)
    return web.json_response({"pending_s": batches.pending_s, "running_s": batches.running_s})


async def _batch_realism(request: web.Request) -> web.Response:
    """GET: the switches on now. POST: replace them all with the posted object (a missing
    switch is off, so ``{}`` turns every one off); batches already created keep theirs."""
    batches = request.app[STATE].batches
    if request.method == "POST":
        try:
            batches.realism = BatchRealism.parse(await request.json())
        except ValueError as exc:  # JSONDecodeError too
            return web.json_response(error_body(400, f"bad batch realism: {exc}"), status=400)
    return web.json_response(batches.realism.active())


async def _set_latency(request: web.Request) -> web.Response:
    """Change the delay before every reply, for requests already waiting it out too:
    ``{"latency_ms": 0}`` answers them all at once."""
    try:
        body = wire_mapping(await request.json(), "request body")
        latency_ms = float(body["latency_ms"])
        if latency_ms < 0:
            raise ValueError("latency_ms must be >= 0")
    except (KeyError, ValueError, TypeError, InvalidArgument) as exc:
        return web.json_response(error_body(400, f"bad latency: {exc}"), status=400)
    request.app[STATE].latency.set(latency_ms)
    return web.json_response({"latency_ms": latency_ms})


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
            meta = wire_mapping(body, "request body").get("file") or {}
            size = request.headers.get("X-Goog-Upload-Header-Content-Length")
            mime = request.headers.get("X-Goog-Upload-Header-Content-Type")
            upload_id = files.start(
                wire_mapping(meta, "file"),
                int(size if size is not None else wire_field(meta, "sizeBytes") or -1),
                mime or wire_field(meta, "mimeType") or "",
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
_DOWNLOAD_PATH = re.compile(r"(?:/download)?/(?:v1|v1beta)/files/(?P<id>[^/:]+):download")
_BATCH_PATH = re.compile(r"/(?:v1|v1beta)/batches/?(?P<tail>[^/]*)")


async def _route_api(request: web.Request) -> web.Response:
    """Catch-all: the ``{model}:{method}`` tail does not fit aiohttp's route syntax."""
    if _UPLOAD_PATH.fullmatch(request.path) and request.method == "POST":
        return await _upload(request)
    if file_match := _FILE_PATH.fullmatch(request.path):
        return await _file(request, file_match["id"])
    if (download := _DOWNLOAD_PATH.fullmatch(request.path)) and request.method == "GET":
        return await _download(request, download["id"])
    if batch_match := _BATCH_PATH.fullmatch(request.path):
        return await _batch(request, batch_match["tail"])
    match = _GENERATE_PATH.fullmatch(request.path)
    if match is None:
        return _not_found(request)
    model, colon, method = match["tail"].rpartition(":")
    if not colon or not model:
        return _not_found(request)
    if method == "countTokens" and request.method == "POST":
        return await _count_tokens(request.app[STATE], request, model)
    if method == "batchGenerateContent" and request.method == "POST":
        return await _create_batch(request.app[STATE], request, model)
    if method != "generateContent" or request.method != "POST":
        return _not_found(request, f"fake-gemini only serves POST :generateContent, not {method}")
    return await _generate(request.app[STATE], request, model)


async def _count_tokens(state: FakeGemini, request: web.Request, model: str) -> web.Response:
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
        return web.json_response(error_body(400, str(exc)), status=400)
    visual = sum(1 for m in media if m.mime_type.startswith(("image/", "video/")))
    total = estimate_tokens("\n".join(texts)) + VISUAL_PART_TOKENS * visual
    logger.info("POST %s (%s) -> 200", request.path, model)
    return web.json_response({"totalTokens": total})


async def _healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def _stats(request: web.Request) -> web.Response:
    state = request.app[STATE]
    snapshot = state.stats.snapshot(state.script.fired)
    snapshot["batches"] = state.batches.counters.snapshot()
    snapshot["batches"]["realism"] = state.batches.realism.active()
    return web.json_response(snapshot)


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
        latency=Latency(options.latency_ms),
        batches=BatchStore(options.batch_delay_s, BatchRealism.parse(options.batch_realism)),
    )
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[STATE] = state
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/stats", _stats)
    app.router.add_get("/stats/files", _files_stats)
    app.router.add_post("/script", _set_script)
    app.router.add_post("/reset", _reset)
    app.router.add_post("/batch-delay", _set_batch_delay)
    app.router.add_get("/batch-realism", _batch_realism)
    app.router.add_post("/batch-realism", _batch_realism)
    app.router.add_post("/latency", _set_latency)
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
