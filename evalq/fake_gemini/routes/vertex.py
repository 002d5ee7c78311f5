"""Vertex AI's online routes (``:generateContent`` and ``:countTokens`` on a publisher model,
with or without a project and location), answered by the Gemini API routes' handlers so a job
sees the same judge on either API; only the wording differs (evalq.fake_gemini.vertex)."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.routes.generate import Outcome, count_tokens, generate
from evalq.fake_gemini.routes.responses import not_found
from evalq.fake_gemini.state import STATE
from evalq.fake_gemini.vertex import vertex_error, vertex_quota_error, vertex_reply

VERSIONS = ("v1", "v1beta1")
ROUTE = "vertex"
# /{version}/projects/{project}/locations/{location}/, the prefix of every project resource;
# optional, as express mode leaves it out.
_PREFIX = (
    r"/(?P<version>v1|v1beta1)/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
)
_MODEL_PATH = re.compile(_PREFIX + r"publishers/google/models/(?P<tail>[^/]+)")


def vertex_prefix(project: str, location: str, version: str = "v1beta1") -> str:
    """The path every Vertex resource of a project and location sits under, as the client
    builds it (google-genai's default version on Vertex is v1beta1)."""
    if version not in VERSIONS:
        raise ValueError(f"Vertex AI serves {' and '.join(VERSIONS)}, not {version}")
    return f"/{version}/projects/{project}/locations/{location}"


def vertex_wording(outcome: Outcome) -> JsonObject | list[Any]:
    """An outcome as Vertex sends it; a recorded body as it was recorded."""
    if outcome.recorded or isinstance(outcome.body, list):
        return outcome.body
    if outcome.status == 200:
        return vertex_reply(outcome.body)
    if outcome.status == 429:
        return vertex_quota_error()
    return vertex_error(outcome.body)


async def route_vertex(request: web.Request) -> web.Response | None:
    """The answer to a Vertex model path, or None when the path is not one of Vertex's."""
    match = _MODEL_PATH.fullmatch(request.path)
    if match is None:
        return None
    model, colon, method = match["tail"].rpartition(":")
    if not colon or not model or request.method != "POST":
        return not_found(request)
    state = request.app[STATE]
    if method == "generateContent":
        return await generate(state, request, model, route=ROUTE, wording=vertex_wording)
    if method == "countTokens":
        return await count_tokens(state, request, model)
    return not_found(
        request,
        f"fake-gemini serves POST :generateContent and :countTokens on Vertex, not {method}",
    )
