"""Media tokens by Google's published rules (docs/architecture/gemini-facts.md, "Token counting"), for the
dry run: an image by its tiles, a video and audio by their seconds, a PDF by its pages, read
from the bytes where they are here and assumed (with a note saying so) where they are not."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from io import BytesIO

from evalq.core.judge import MediaPart

IMAGE_TILE_TOKENS = 258  # an image with both sides <= 384 px, or each 768x768 tile of a larger
IMAGE_SMALL_PX = 384
IMAGE_TILE_PX = 768
VIDEO_TOKENS_PER_S = 263  # default media resolution
AUDIO_TOKENS_PER_S = 32
PDF_PAGE_TOKENS = 258
ASSUMED_VIDEO_S = 10.0  # a video whose length can not be read here
ASSUMED_PDF_PAGES = 1


def image_tokens(width: int, height: int) -> int:
    if width <= IMAGE_SMALL_PX and height <= IMAGE_SMALL_PX:
        return IMAGE_TILE_TOKENS
    tiles = math.ceil(width / IMAGE_TILE_PX) * math.ceil(height / IMAGE_TILE_PX)
    return tiles * IMAGE_TILE_TOKENS


def _image_size(data: bytes) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(BytesIO(data)) as image:
            return int(image.size[0]), int(image.size[1])
    except Exception:  # any undecodable bytes: the size is unknown here
        return None


def video_seconds(data: bytes) -> float | None:
    """A video's length from its container header (MP4/MOV mvhd, AVI avih), or None."""
    try:
        if data[4:8] == b"ftyp":
            return _mvhd_seconds(data, 0, len(data))
        if data[:4] == b"RIFF" and data[8:12] == b"AVI " and data[12:16] == b"LIST":
            at = data.find(b"avih")  # MainAVIHeader: microseconds per frame, ..., total frames
            if at > 0:
                (per_frame_us,) = struct.unpack_from("<I", data, at + 8)
                (frames,) = struct.unpack_from("<I", data, at + 24)
                return per_frame_us * frames / 1_000_000 if per_frame_us and frames else None
    except (struct.error, ValueError, IndexError):
        return None
    return None


def _mvhd_seconds(data: bytes, start: int, end: int) -> float | None:
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, at)
        header = 8
        if size == 1:
            size, header = struct.unpack_from(">Q", data, at + 8)[0], 16
        elif size == 0:
            size = end - at
        if size < header:
            return None
        if kind == b"moov":
            return _mvhd_seconds(data, at + header, at + size)
        if kind == b"mvhd":
            body = at + header
            if data[body] == 1:
                scale, duration = struct.unpack_from(">IQ", data, body + 20)
            else:
                scale, duration = struct.unpack_from(">II", data, body + 12)
            return duration / scale if scale else None
        at += size
    return None


_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int | None:
    pages = len(_PDF_PAGE.findall(data))
    return pages or None


def media_tokens(part: MediaPart, text_tokens: Callable[[str], int]) -> tuple[int, str | None]:
    """(tokens, a note when the figure rests on an assumption) for one media part."""
    mime = part.mime_type
    data = part.data
    if mime.startswith("image/"):
        size = _image_size(data) if data is not None else None
        if size is None:
            return IMAGE_TILE_TOKENS, "images whose size is not known here count as one tile"
        return image_tokens(*size), None
    if mime.startswith("video/"):
        seconds = video_seconds(data) if data is not None else None
        if seconds is None:
            return (
                round(ASSUMED_VIDEO_S * VIDEO_TOKENS_PER_S),
                f"videos whose length is not known here count as {ASSUMED_VIDEO_S:g} s",
            )
        return math.ceil(seconds * VIDEO_TOKENS_PER_S), None
    if mime.startswith("audio/"):
        return round(
            ASSUMED_VIDEO_S * AUDIO_TOKENS_PER_S
        ), f"audio counts as {ASSUMED_VIDEO_S:g} s (its length is not read)"
    if mime == "application/pdf":
        pages = pdf_pages(data) if data is not None else None
        if pages is None:
            return (
                ASSUMED_PDF_PAGES * PDF_PAGE_TOKENS,
                f"PDFs whose pages are not counted here count as {ASSUMED_PDF_PAGES} page",
            )
        return pages * PDF_PAGE_TOKENS, None
    if mime.startswith("text/") and data is not None:
        return text_tokens(data.decode("utf-8", errors="replace")), None
    return IMAGE_TILE_TOKENS, f"{mime} media not fetched here counts as {IMAGE_TILE_TOKENS} tokens"
