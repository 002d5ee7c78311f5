"""The Files API: resumable uploads, ``files/{id}`` (GET, DELETE) and downloads."""

from __future__ import annotations

import logging

from aiohttp import web

from evalq.fake_gemini.files import UPLOAD_CHUNK_GRANULARITY, FilesError
from evalq.fake_gemini.rest import InvalidArgument, wire_field, wire_mapping
from evalq.fake_gemini.routes.responses import not_found
from evalq.fake_gemini.state import STATE

logger = logging.getLogger(__name__)


def _base_url(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _files_error(exc: FilesError) -> web.Response:
    # The upload status header stops google-genai from retrying a refused chunk.
    return web.json_response(exc.body(), status=exc.code, headers={"X-Goog-Upload-Status": "final"})


async def upload(request: web.Request) -> web.Response:
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


async def file(request: web.Request, file_id: str) -> web.Response:
    files = request.app[STATE].files
    try:
        if request.method == "GET":
            return web.json_response(files.get(file_id).resource(_base_url(request)))
        if request.method == "DELETE":
            files.delete(file_id)
            return web.json_response({})
    except FilesError as exc:
        return _files_error(exc)
    return not_found(request, f"fake-gemini serves GET and DELETE on files, not {request.method}")


async def download(request: web.Request, file_id: str) -> web.Response:
    try:
        data = request.app[STATE].files.download(file_id)
    except FilesError as exc:
        return _files_error(exc)
    return web.Response(body=data, content_type="application/octet-stream")
