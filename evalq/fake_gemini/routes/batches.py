"""The Batch API: ``models/{model}:batchGenerateContent`` creates a batch whose requests are
answered as generateContent would answer them; ``batches``, ``batches/{id}`` and
``batches/{id}:cancel`` list, read, delete and cancel them."""

from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import web

from evalq.fake_gemini.batches import Answered, BatchError
from evalq.fake_gemini.files import FilesError
from evalq.fake_gemini.logprobs import LogprobsRefused
from evalq.fake_gemini.logprobs import check as check_logprobs
from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.rest import InvalidArgument, error_body, parse_generate_request
from evalq.fake_gemini.routes.generate import scripted, simulated, with_files
from evalq.fake_gemini.routes.responses import error_response, not_found
from evalq.fake_gemini.state import STATE, FakeGemini
from evalq.fake_gemini.thinking import ThinkingRefused
from evalq.fake_gemini.thinking import check as check_thinking

logger = logging.getLogger(__name__)

# ---- the batches API -----------------------------------------------------------------------


async def _answer_in_batch(state: FakeGemini, model: str, body: JsonObject) -> Answered:
    """One request of a batch, answered as generateContent would answer it, apart from the
    online quotas and faults (batches have their own quota, and their own failures)."""
    try:
        parsed = with_files(state, parse_generate_request(model, body))
        check_thinking(parsed.request)
        check_logprobs(parsed.request)
        rule = state.script.take(parsed.request.text)
        if rule is not None:
            outcome = scripted(state, parsed.request, rule)
        else:
            outcome = await simulated(state, parsed, None)
    except (InvalidArgument, ThinkingRefused, LogprobsRefused) as exc:
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
        return error_response(400, str(exc))
    return web.json_response(exc.body(), status=exc.code)


async def create_batch(state: FakeGemini, request: web.Request, model: str) -> web.Response:
    raw = await request.read()
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        return error_response(400, f"Invalid JSON payload: {exc}")

    async def answer(batch_model: str, body: JsonObject) -> Answered:
        return await _answer_in_batch(state, batch_model, body)

    try:
        batch = state.batches.create(model, payload, state.files, state.script, answer, len(raw))
    except (BatchError, FilesError, InvalidArgument) as exc:
        return _batch_error(exc)
    logger.info("created %s (%d requests, %s)", batch.name, len(batch.requests), model)
    return web.json_response(batch.operation())


async def batch(request: web.Request, tail: str) -> web.Response:
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
        return error_response(400, str(exc))
    return not_found(request)
