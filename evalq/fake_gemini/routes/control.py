"""The knobs real Gemini does not have: ``/stats`` to check what a run actually sent, ``/script``
for canned answers, ``/reset``, and the latency, batch delay and realism and the simulated
judge's model version a test changes while the server runs."""

from __future__ import annotations

from aiohttp import web

from evalq.fake_gemini.options import check_suffix
from evalq.fake_gemini.realism import BatchRealism
from evalq.fake_gemini.rest import InvalidArgument, wire_mapping
from evalq.fake_gemini.routes.responses import error_response
from evalq.fake_gemini.script import parse_rules
from evalq.fake_gemini.state import STATE


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
        return error_response(400, f"bad batch delay: {exc}")
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
            return error_response(400, f"bad batch realism: {exc}")
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
        return error_response(400, f"bad latency: {exc}")
    request.app[STATE].latency.set(latency_ms)
    return web.json_response({"latency_ms": latency_ms})


async def _model_version(request: web.Request) -> web.Response:
    """GET: the modelVersion the simulated judge answers with now. POST ``{"suffix": "2"}``:
    answer as SIMULATED_MODEL_VERSION@2 from now on (``null`` goes back to none), so a test
    sees the same alias answer as another version, as a real model does over time."""
    state = request.app[STATE]
    if request.method == "POST":
        try:
            body = wire_mapping(await request.json(), "request body")
            suffix = body["suffix"]
            if suffix is not None and not isinstance(suffix, str):
                raise ValueError(f"suffix must be a string or null, got {suffix!r}")
            check_suffix(suffix)
        except (KeyError, ValueError, TypeError, InvalidArgument) as exc:
            return error_response(400, f"bad model version: {exc}")
        state.model_version_suffix = suffix or None
    return web.json_response(
        {"suffix": state.model_version_suffix, "model_version": state.simulated_version()}
    )


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
        return error_response(400, str(exc))
    request.app[STATE].script.replace(rules)
    return web.json_response({"rules": len(rules)})


async def _reset(request: web.Request) -> web.Response:
    request.app[STATE].reset()
    return web.json_response({"reset": True})


ROUTES = [
    web.get("/healthz", _healthz),
    web.get("/stats", _stats),
    web.get("/stats/files", _files_stats),
    web.post("/script", _set_script),
    web.post("/reset", _reset),
    web.post("/batch-delay", _set_batch_delay),
    web.get("/batch-realism", _batch_realism),
    web.post("/batch-realism", _batch_realism),
    web.post("/latency", _set_latency),
    web.get("/model-version", _model_version),
    web.post("/model-version", _model_version),
]
