"""Vertex AI's batch prediction jobs (create, list, get, cancel, delete) over
evalq.fake_gemini.vertex_batches, and two test knobs: GET /stats/vertex-batches and POST
/vertex-batches/attach-output."""

from __future__ import annotations

import dataclasses
import json
import logging

from aiohttp import web

from evalq.fake_gemini.batches import Answered
from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.rest import InvalidArgument
from evalq.fake_gemini.routes.batches import _answer_in_batch
from evalq.fake_gemini.state import STATE
from evalq.fake_gemini.vertex_batches import VertexBatchError, VertexJobStore

logger = logging.getLogger(__name__)
JOBS: web.AppKey[VertexJobStore] = web.AppKey("vertex_batch_jobs", VertexJobStore)
_BASE = "/{version:v1|v1beta1}/projects/{project}/locations/{location}/batchPredictionJobs"


def _error(code: int, status: str, message: str) -> web.Response:
    return web.json_response(VertexBatchError(code, status, message).body(), status=code)


def _parent(request: web.Request) -> str:
    info = request.match_info
    return f"projects/{info['project']}/locations/{info['location']}"


async def _create(request: web.Request) -> web.Response:
    state = request.app[STATE]
    try:
        payload = json.loads(await request.read())
    except ValueError as exc:
        return _error(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. {exc}")

    async def answer(model: str, body: JsonObject) -> Answered:
        return await _answer_in_batch(state, model, body)

    def delays() -> tuple[float, float]:
        return state.batches.pending_s, state.batches.running_s

    try:
        job = request.app[JOBS].create(
            _parent(request), payload, state.batches.realism, delays, state.script, answer
        )
    except InvalidArgument as exc:
        return _error(400, "INVALID_ARGUMENT", str(exc))
    logger.info("created %s (%s)", job.name, job.model)
    return web.json_response(job.resource())


async def _list(request: web.Request) -> web.Response:
    try:
        size = int(request.query.get("pageSize", "100") or 100)
    except ValueError:
        return _error(400, "INVALID_ARGUMENT", "pageSize must be an integer")
    page = request.app[JOBS].page(_parent(request), size, request.query.get("pageToken"))
    return web.json_response(page)


async def _one(request: web.Request) -> web.Response:
    jobs, parent = request.app[JOBS], _parent(request)
    job_id, colon, method = request.match_info["job"].partition(":")
    try:
        if colon and method == "cancel" and request.method == "POST":
            jobs.cancel(parent, job_id)
            return web.json_response({})
        if not colon and request.method == "GET":
            return web.json_response(jobs.read(parent, job_id))
        if not colon and request.method == "DELETE":
            jobs.delete(parent, job_id)
            return web.json_response({"name": f"{parent}/operations/delete-{job_id}", "done": True})
    except VertexBatchError as exc:
        return web.json_response(exc.body(), status=exc.code)
    return _error(404, "NOT_FOUND", f"fake-gemini has no route {request.method} {request.path}")


async def _stats(request: web.Request) -> web.Response:
    return web.json_response(request.app[JOBS].counters.snapshot())


async def _attach_output(request: web.Request) -> web.Response:
    attached, jobs = 0, request.app[JOBS]
    jobs.counters.gets_after_output = 0
    for job in jobs.jobs.values():
        if job.realism.late_output:
            job.realism = dataclasses.replace(job.realism, late_output=0)
            attached += 1
    return web.json_response({"attached": attached})


def setup(app: web.Application) -> None:
    """Add the routes (before the catch-all of the Gemini paths) and the jobs' store."""
    app[JOBS] = VertexJobStore()
    app.router.add_routes(
        [
            web.post(_BASE, _create),
            web.get(_BASE, _list),
            web.route("*", _BASE + "/{job}", _one),
            web.get("/stats/vertex-batches", _stats),
            web.post("/vertex-batches/attach-output", _attach_output),
        ]
    )
