"""The catch-all for the Gemini and Vertex paths: the ``{model}:{method}`` tail does not fit
aiohttp's route syntax, so the path is matched here and handed to the route module of its API."""

from __future__ import annotations

import re

from aiohttp import web

from evalq.fake_gemini.routes.batches import batch, create_batch
from evalq.fake_gemini.routes.files import download, file, upload
from evalq.fake_gemini.routes.generate import count_tokens, generate
from evalq.fake_gemini.routes.responses import not_found
from evalq.fake_gemini.routes.vertex import route_vertex
from evalq.fake_gemini.state import STATE

_GENERATE_PATH = re.compile(r"/(?:v1|v1beta)/models/(?P<tail>[^/]+)")

_UPLOAD_PATH = re.compile(r"/upload/(?:v1|v1beta)/files")
_FILE_PATH = re.compile(r"/(?:v1|v1beta)/files/(?P<id>[^/:]+)")
_DOWNLOAD_PATH = re.compile(r"(?:/download)?/(?:v1|v1beta)/files/(?P<id>[^/:]+):download")
_BATCH_PATH = re.compile(r"/(?:v1|v1beta)/batches/?(?P<tail>[^/]*)")


async def route_api(request: web.Request) -> web.Response:
    """Catch-all: the ``{model}:{method}`` tail does not fit aiohttp's route syntax."""
    if (vertex := await route_vertex(request)) is not None:
        return vertex
    if _UPLOAD_PATH.fullmatch(request.path) and request.method == "POST":
        return await upload(request)
    if file_match := _FILE_PATH.fullmatch(request.path):
        return await file(request, file_match["id"])
    if (download_match := _DOWNLOAD_PATH.fullmatch(request.path)) and request.method == "GET":
        return await download(request, download_match["id"])
    if batch_match := _BATCH_PATH.fullmatch(request.path):
        return await batch(request, batch_match["tail"])
    match = _GENERATE_PATH.fullmatch(request.path)
    if match is None:
        return not_found(request)
    model, colon, method = match["tail"].rpartition(":")
    if not colon or not model:
        return not_found(request)
    if method == "countTokens" and request.method == "POST":
        return await count_tokens(request.app[STATE], request, model)
    if method == "batchGenerateContent" and request.method == "POST":
        return await create_batch(request.app[STATE], request, model)
    if method != "generateContent" or request.method != "POST":
        return not_found(request, f"fake-gemini only serves POST :generateContent, not {method}")
    return await generate(request.app[STATE], request, model)
