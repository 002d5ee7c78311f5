"""Media references: parsed from a dataset cell by the producer, turned into bytes by a worker.
The producer checks what it cheaply can; the worker, the boundary, checks again, then reads,
type checks and decodes, where a failure becomes an input_error on that row."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalq.core.data_roots import DataRoots, locate, read_file
from evalq.core.errors import InputError
from evalq.core.judge import MediaPart
from evalq.core.media.decode import decode_problem
from evalq.core.media.fetch import FetchLimits, NetworkRules, fetch, parse_url
from evalq.core.media.gcs import GcsMedia
from evalq.core.models import MediaRef

_DATA_URI_RE = re.compile(
    r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?P<b64>;base64)?,(?P<data>.*)$", re.DOTALL
)

# Leading bytes of the formats a judge accepts; checked against what the file claims to be.
_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"RIFF", 0, "image/webp"),  # refined below: RIFF....WEBP
    (b"BM", 0, "image/bmp"),
)


# ISO base media files (MP4 and kin) say what they hold in their ftyp brand.
_ISO_BRANDS: dict[bytes, str] = {
    b"qt  ": "video/quicktime",
    b"3gp4": "video/3gpp",
    b"3gp5": "video/3gpp",
    b"3gp6": "video/3gpp",
    b"3g2a": "video/3gpp",
    b"M4A ": "audio/mp4",
    b"heic": "image/heic",
    b"heix": "image/heic",
    b"mif1": "image/heif",
    b"msf1": "image/heif",
    b"avif": "image/avif",
}
_ASF_HEADER = bytes.fromhex("3026b2758e66cf11a6d900aa0062ce6c")  # WMV / ASF

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")

IMAGE_TYPES = ("image/",)
VIDEO_TYPES = ("video/",)
DOCUMENT_TYPES = ("application/pdf", "text/")
# What bytes a media field may hold, by the field's name; checked against the bytes, not the
# file name. A field of another name may hold any of them.
MEDIA_KINDS: dict[str, tuple[str, ...]] = {
    "image": IMAGE_TYPES,
    "video": VIDEO_TYPES,
    "document": DOCUMENT_TYPES,
}


def allowed_types(field: str) -> tuple[str, ...]:
    """The media types a field named `field` may hold (the dry run and the workers alike)."""
    return MEDIA_KINDS.get(field, IMAGE_TYPES + VIDEO_TYPES + DOCUMENT_TYPES)


_TEXT_SNIFF_BYTES = 4096


@dataclass(frozen=True)
class MediaRules:
    """Where a job's media may come from, and how much of it a worker reads: the worker builds it
    from its settings and the job, the producer from its settings; the dataset loader passes it
    through each metric's parse_row to parse_media."""

    roots: DataRoots
    network: NetworkRules = field(default_factory=NetworkRules)
    gcs: GcsMedia = field(default_factory=GcsMedia)  # gs:// media only from these (none)
    max_bytes: int = 20 * 1024 * 1024
    timeout_s: float = 30.0  # one connect or read
    deadline_s: float = 60.0  # a whole download
    max_redirects: int = 5

    @property
    def limits(self) -> FetchLimits:
        return FetchLimits(self.max_bytes, self.timeout_s, self.deadline_s, self.max_redirects)


def sniff_mime(data: bytes) -> str | None:
    """The type the bytes really are (image, video, PDF, UTF-8 text), or None."""
    for magic, offset, mime in _SIGNATURES:
        if data[offset : offset + len(magic)] == magic:
            if mime == "image/webp" and data[8:12] != b"WEBP":
                continue
            return mime
    if data[8:12] == b"AVI " and data[:4] == b"RIFF":
        return "video/avi"  # the name Gemini lists; video/x-msvideo is accepted as an alias
    if data[4:8] == b"ftyp":
        return _ISO_BRANDS.get(data[8:12], "video/mp4")
    if data[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    if data[:4] in (b"\x00\x00\x01\xba", b"\x00\x00\x01\xb3"):
        return "video/mpeg"
    if data[:3] == b"FLV":
        return "video/x-flv"
    if data[:16] == _ASF_HEADER:
        return "video/wmv"
    if data[:5] == b"%PDF-":
        return "application/pdf"
    head = data[:_TEXT_SNIFF_BYTES]
    if head and b"\x00" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if (
                exc.start < len(head) - 4
            ):  # a multi-byte character cut at the sniff boundary is fine
                return None
        return "text/plain"
    return None


_ALIASES: dict[str, str] = {
    "image/jpg": "image/jpeg",
    "video/x-m4v": "video/mp4",
    "video/mpeg4": "video/mp4",
    "video/matroska": "video/webm",
    "video/x-matroska": "video/webm",
    "video/x-msvideo": "video/avi",
    "video/msvideo": "video/avi",
    "video/mov": "video/quicktime",
    "video/mpg": "video/mpeg",
    "video/x-ms-wmv": "video/wmv",
    "video/x-ms-asf": "video/wmv",
    "video/3gpp2": "video/3gpp",
    "image/heif": "image/heic",
}


def canonical_mime(mime: str) -> str:
    """One name per type (image/jpg is image/jpeg, video/x-msvideo is video/avi)."""
    return _ALIASES.get(mime.lower(), mime.lower())


def _same_type(claimed: str, actual: str) -> bool:
    claimed, actual = canonical_mime(claimed), canonical_mime(actual)
    if actual == "text/plain":
        return claimed.startswith("text/")
    return claimed == actual


def _content_form(value: Any) -> dict[str, Any] | None:
    """The seeds' JSON content form: {"contents":[{"parts":[{"file_data": {...}}]}]} or a part."""
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith("{"):
            return None
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return None
    if not isinstance(value, dict):
        return None
    if "contents" in value:
        try:
            parts = value["contents"][0]["parts"]
            return dict(parts[0]) if parts else None
        except (KeyError, IndexError, TypeError):
            return None
    return value


@dataclass(frozen=True)
class MediaPlace:
    """Where a dataset's media cells are read from and under which rules: the loader hands one
    to each metric's parse_row, so the rules arrive as an argument, not through ambient state."""

    folder: Path  # a relative path in a cell is read from here (the dataset's folder)
    rules: MediaRules | None = None  # None: files under `folder` and public URLs only

    def parse(self, value: Any, row_id: str, field: str) -> MediaRef:
        return parse_media(value, self.folder, row_id, field, self.rules)


def parse_media(
    value: Any, base_dir: Path, row_id: str, field: str, rules: MediaRules | None = None
) -> MediaRef:
    """Turn a dataset cell into a MediaRef; raise InputError naming the row and field.
    Without rules, a cell may name only files under ``base_dir`` and public URLs."""
    rules = rules if rules is not None else MediaRules(roots=DataRoots.of([base_dir]))
    return _parse(value, base_dir, row_id, field, rules)


def _parse(value: Any, base_dir: Path, row_id: str, field: str, rules: MediaRules) -> MediaRef:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(row_id, field, "missing")
    part = _content_form(value)
    if part is not None:
        file_data = part.get("file_data") or part.get("fileData")
        inline = part.get("inline_data") or part.get("inlineData")
        if isinstance(file_data, dict):
            uri = file_data.get("file_uri") or file_data.get("fileUri")
            mime = file_data.get("mime_type") or file_data.get("mimeType")
            if isinstance(uri, str) and uri:
                return _parse(uri, base_dir, row_id, field, rules).model_copy(
                    update={"mime_type": mime}
                )
        if isinstance(inline, dict) and isinstance(inline.get("data"), str):
            mime = inline.get("mime_type") or inline.get("mimeType")
            return MediaRef(kind="inline", value=inline["data"], mime_type=mime)
        raise InputError(
            row_id, field, "JSON content has no file_data.file_uri or inline_data.data"
        )
    if not isinstance(value, str):
        raise InputError(
            row_id, field, f"expected a path, URL or JSON content, got {type(value).__name__}"
        )
    text = value.strip()
    if text.startswith("gs://"):
        rules.gcs.check(text, row_id, field)  # only from the allowed buckets (EVALQ_GCS_MEDIA)
        return MediaRef(kind="file_uri", value=text)
    if text.startswith("data:"):
        m = _DATA_URI_RE.match(text)
        if not m or not m.group("b64"):
            raise InputError(row_id, field, "data: URI must be base64 encoded")
        return MediaRef(kind="inline", value=m.group("data"), mime_type=m.group("mime"))
    if _SCHEME_RE.match(text):
        parse_url(text, rules.network, row_id, field)  # http(s) only; no literal refused address
        return MediaRef(kind="url", value=text)
    return MediaRef(kind="path", value=str(locate(text, base_dir, rules.roots, row_id, field)))


def _checked(
    data: bytes, claimed: str | None, row_id: str, field: str, where: str, allowed: tuple[str, ...]
) -> MediaPart:
    if not data:
        raise InputError(row_id, field, f"{where} is empty")
    actual = sniff_mime(data)
    wanted = " or ".join(a.rstrip("/") for a in allowed)
    if actual is None or not actual.startswith(allowed):
        what = f"its bytes are {actual}" if actual else "its bytes are no type we know"
        raise InputError(row_id, field, f"{where} is not {wanted} ({what})")
    if claimed and not _same_type(claimed, actual):
        raise InputError(row_id, field, f"{where} claims {claimed} but its bytes are {actual}")
    if (problem := decode_problem(data, actual)) is not None:
        raise InputError(row_id, field, f"{where} {problem}")
    mime = claimed if claimed and actual == "text/plain" else actual
    return MediaPart(mime_type=mime, data=data)


def load_media(
    ref: MediaRef,
    row_id: str,
    field: str,
    rules: MediaRules,
    allowed: tuple[str, ...] = IMAGE_TYPES,
) -> MediaPart:
    """Read a row's media on the worker, within the job's rules, type checked against its
    bytes and decoded."""
    if ref.kind == "file_uri":
        rules.gcs.check(ref.value, row_id, field)  # a job stored by any client: checked again
        return _file_uri_part(ref, row_id, field, allowed)
    if ref.kind == "inline":
        if len(ref.value) > (rules.max_bytes + 2) // 3 * 4 + 4:
            raise InputError(row_id, field, f"inline data is over the {rules.max_bytes} byte limit")
        try:
            data = base64.b64decode(ref.value, validate=True)
        except (binascii.Error, ValueError):
            raise InputError(row_id, field, "inline data is not valid base64") from None
        if len(data) > rules.max_bytes:
            raise InputError(
                row_id, field, f"inline data is {len(data)} bytes, over the {rules.max_bytes} limit"
            )
        return _checked(data, ref.mime_type, row_id, field, "inline data", allowed)
    if ref.kind == "path":
        data = read_file(ref.value, rules.roots, rules.max_bytes, row_id, field)
        return _checked(data, ref.mime_type, row_id, field, ref.value, allowed)
    fetched = fetch(ref.value, rules.network, rules.limits, row_id, field)
    claimed = fetched.content_type
    if claimed in ("application/octet-stream", "binary/octet-stream", "text/plain"):
        claimed = None
    return _checked(fetched.data, ref.mime_type or claimed, row_id, field, ref.value, allowed)


def _file_uri_part(ref: MediaRef, row_id: str, field: str, allowed: tuple[str, ...]) -> MediaPart:
    """A cloud URI the judge's backend reads itself: its bytes can not be checked here, so its
    type comes from the row (the content form's mime_type) or, failing that, its extension."""
    mime = ref.mime_type or mimetypes.guess_type(ref.value.split("?", 1)[0])[0]
    if not mime:
        raise InputError(
            row_id, field, f"{ref.value}: give its mime_type (the type can not be told from it)"
        )
    wanted = " or ".join(a.rstrip("/") for a in allowed)
    if not mime.lower().startswith(allowed):
        raise InputError(row_id, field, f"{ref.value} is {mime}, not {wanted}")
    return MediaPart(mime_type=canonical_mime(mime), uri=ref.value)
