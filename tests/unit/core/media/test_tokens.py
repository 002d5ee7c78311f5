"""Media tokens by Google's published rules (evalq.core.media.tokens), as the dry run and the
budget count them."""

from __future__ import annotations

import struct

import pytest

from evalq.core.judge import MediaPart
from evalq.core.media.tokens import image_tokens, media_tokens, pdf_pages, video_seconds
from tests.support.images import png_bytes


@pytest.mark.parametrize(
    ("size", "tokens"),
    [((384, 384), 258), ((385, 100), 258), ((1000, 500), 2 * 258), ((1536, 1537), 6 * 258)],
)
def test_image_tokens_by_tiles(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size) == tokens
    assert media_tokens(MediaPart("image/png", png_bytes(*size)), len) == (tokens, None)


def mp4(seconds: int, timescale: int = 1000) -> bytes:
    mvhd_body = bytes(4) + bytes(8) + struct.pack(">II", timescale, seconds * timescale) + bytes(80)
    mvhd = struct.pack(">I4s", 8 + len(mvhd_body), b"mvhd") + mvhd_body
    moov = struct.pack(">I4s", 8 + len(mvhd), b"moov") + mvhd
    ftyp = struct.pack(">I4s", 16, b"ftyp") + b"isom" + bytes(4)
    return ftyp + moov


def test_video_audio_and_pdf_tokens_by_the_published_rates() -> None:
    assert video_seconds(mp4(5)) == 5.0
    assert media_tokens(MediaPart("video/mp4", mp4(5)), len) == (5 * 263, None)
    tokens, note = media_tokens(MediaPart("video/mp4", uri="https://x/v.mp4"), len)
    assert tokens == 10 * 263 and note is not None and "10 s" in note
    pdf = b"%PDF-1.4 /Type /Pages /Type /Page /Type/Page /Type /Catalog"
    assert pdf_pages(pdf) == 2
    assert media_tokens(MediaPart("application/pdf", pdf), len) == (2 * 258, None)
