"""The fake Files API store: uploads kept in memory, resumable in chunks, forgotten after
Gemini's 48 hours or when the store is full, the oldest first."""

from __future__ import annotations

import base64
import hashlib
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from evalq.fake_gemini.protocol import (
    FakeMedia,
    JsonObject,
)
from evalq.fake_gemini.rest import rfc3339

# Uploaded bytes are kept in memory; beyond this, the oldest files are forgotten.
FILES_MAX_BYTES = 512 * 1024 * 1024
FILE_TTL_S = 48 * 3600.0  # how long Gemini keeps an uploaded file
UPLOAD_CHUNK_GRANULARITY = 8 * 1024 * 1024
_FILE_ID_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$")
_FILE_URI_RE = re.compile(r"^(?:https?://[^/]+/(?:v1|v1beta)/)?files/(?P<id>[a-z0-9-]+)$")


class FilesError(Exception):
    """A Files API refusal, shaped like Gemini's: HTTP code, status name, message."""

    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message

    def body(self) -> JsonObject:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


@dataclass
class StoredFile:
    """One file, from the resumable upload's start until it is forgotten."""

    name: str  # "files/{id}"
    mime_type: str
    display_name: str
    size_bytes: int
    created: float
    data: bytearray = field(default_factory=bytearray)
    complete: bool = False
    processing: bool = False  # videos are PROCESSING until first looked at, as on Gemini
    source: str = "UPLOADED"  # GENERATED: written by the service (batch results), downloadable

    @property
    def id(self) -> str:
        return self.name.removeprefix("files/")

    def state(self) -> str:
        return "PROCESSING" if self.processing else "ACTIVE"

    def resource(self, base_url: str) -> JsonObject:
        stamp = rfc3339(self.created)
        resource: JsonObject = {
            "name": self.name,
            "displayName": self.display_name,
            "mimeType": self.mime_type,
            "sizeBytes": str(len(self.data)),
            "createTime": stamp,
            "updateTime": stamp,
            "expirationTime": rfc3339(self.created + FILE_TTL_S),
            "sha256Hash": base64.b64encode(hashlib.sha256(self.data).digest()).decode(),
            "uri": f"{base_url}/v1beta/{self.name}",
            "state": self.state(),
            "source": self.source,
        }
        if self.source == "GENERATED":
            resource["downloadUri"] = f"{base_url}/download/v1beta/{self.name}:download?alt=media"
        return resource


class FileStore:
    """Files uploaded with the resumable protocol google-genai uses, kept in memory so later
    generateContent requests that reference them by URI give the brain the real bytes."""

    def __init__(self, max_bytes: int = FILES_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.files: OrderedDict[str, StoredFile] = OrderedDict()
        self.pending: dict[str, StoredFile] = {}

    def start(self, meta: Mapping[str, Any], size: int, mime_type: str) -> str:
        """Open an upload session; returns its id. A name already in use is refused (409)."""
        name = meta.get("name")
        if name is None:
            name = f"files/{uuid.uuid4().hex[:12]}"
        if not isinstance(name, str):
            raise FilesError(400, "INVALID_ARGUMENT", "file.name must be a string")
        if not name.startswith("files/"):
            name = f"files/{name}"
        if not _FILE_ID_RE.match(name.removeprefix("files/")):
            raise FilesError(
                400,
                "INVALID_ARGUMENT",
                "file.name id must be 1-40 lowercase letters, digits or dashes, "
                "not starting or ending with a dash",
            )
        if name in self.files or any(f.name == name for f in self.pending.values()):
            raise FilesError(409, "ALREADY_EXISTS", f"File {name} already exists.")
        if not mime_type:
            raise FilesError(400, "INVALID_ARGUMENT", "the upload's content type is missing")
        if size < 0 or size > self.max_bytes:
            raise FilesError(400, "INVALID_ARGUMENT", f"file size {size} is not allowed")
        display = meta.get("displayName", meta.get("display_name", ""))
        upload_id = uuid.uuid4().hex
        self.pending[upload_id] = StoredFile(
            name=name,
            mime_type=mime_type,
            display_name=str(display or ""),
            size_bytes=size,
            created=time.time(),
        )
        return upload_id

    def append(self, upload_id: str, offset: int, chunk: bytes, finalize: bool) -> StoredFile:
        stored = self.pending.get(upload_id)
        if stored is None:
            raise FilesError(404, "NOT_FOUND", "no such upload session")
        if offset != len(stored.data):
            raise FilesError(
                400, "INVALID_ARGUMENT", f"offset {offset} != {len(stored.data)} bytes received"
            )
        stored.data += chunk
        if len(stored.data) > stored.size_bytes:
            del self.pending[upload_id]
            raise FilesError(400, "INVALID_ARGUMENT", "more bytes than the upload declared")
        if finalize:
            if len(stored.data) != stored.size_bytes:
                del self.pending[upload_id]
                raise FilesError(
                    400,
                    "INVALID_ARGUMENT",
                    f"upload finalized at {len(stored.data)} of {stored.size_bytes} bytes",
                )
            del self.pending[upload_id]
            stored.complete = True
            stored.processing = stored.mime_type.lower().startswith("video/")
            self.files[stored.name] = stored
            self._evict()
        return stored

    def _evict(self) -> None:
        while sum(len(f.data) for f in self.files.values()) > self.max_bytes and self.files:
            self.files.popitem(last=False)

    def put_generated(self, name: str, data: bytes, mime_type: str) -> StoredFile:
        """A file the service wrote itself (a batch's results), ready to download."""
        stored = StoredFile(
            name=name,
            mime_type=mime_type,
            display_name=name.removeprefix("files/"),
            size_bytes=len(data),
            created=time.time(),
            data=bytearray(data),
            complete=True,
            source="GENERATED",
        )
        self.files[name] = stored
        self._evict()
        return stored

    def download(self, file_id: str) -> bytes:
        """Only generated files can be downloaded, as on Gemini; uploads cannot."""
        stored = self.files.get(f"files/{file_id}")
        if stored is None:
            raise _no_such_file(file_id)
        if stored.source != "GENERATED":
            raise FilesError(
                400, "INVALID_ARGUMENT", f"File {file_id} was uploaded and cannot be downloaded."
            )
        return bytes(stored.data)

    def get(self, file_id: str) -> StoredFile:
        """What files.get returns; looking at a PROCESSING video finishes its processing."""
        stored = self.files.get(f"files/{file_id}")
        if stored is None:
            raise _no_such_file(file_id)
        stored.processing = False
        return stored

    def delete(self, file_id: str) -> None:
        if self.files.pop(f"files/{file_id}", None) is None:
            raise _no_such_file(file_id)

    def attach(self, media: FakeMedia) -> FakeMedia:
        """A fileData part that names an uploaded file, with that file's bytes filled in."""
        m = _FILE_URI_RE.match(media.uri or "")
        if m is None:
            return media  # gs:// and other URIs stay references the brain cannot open
        stored = self.files.get(f"files/{m['id']}")
        if stored is None:
            raise _no_such_file(m["id"])
        if stored.processing:
            raise FilesError(
                400,
                "FAILED_PRECONDITION",
                f"The File {m['id']} is not in an ACTIVE state and usage is not allowed.",
            )
        return replace(media, data=bytes(stored.data))

    def reset(self) -> None:
        self.files.clear()
        self.pending.clear()


def _no_such_file(file_id: str) -> FilesError:
    """Gemini's answer for a file that is not there (or not the caller's): it does not say
    which."""
    return FilesError(
        403,
        "PERMISSION_DENIED",
        f"You do not have permission to access the File {file_id} or it may not exist.",
    )
