"""The error replies every route shares, in Gemini's error shape."""

from __future__ import annotations

from aiohttp import web

from evalq.fake_gemini.rest import error_body


def error_response(status: int, message: str | None = None) -> web.Response:
    return web.json_response(error_body(status, message), status=status)


def not_found(request: web.Request, message: str | None = None) -> web.Response:
    text = message or f"fake-gemini has no route {request.method} {request.path}"
    return error_response(404, text)
