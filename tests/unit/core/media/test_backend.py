"""One rule for which media the judge's backend can take, applied by the submitter to the whole
dataset (nothing stored) and by the worker to what it loads."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from evalq.core.errors import DatasetError
from evalq.core.media.backend import check_rows, known_size, refusal
from evalq.core.models import MediaRef, RowInput

GS = MediaRef(kind="file_uri", value="gs://bucket/clip.mp4")


def media_input(row_id: str, candidate: str | None = None, **media: MediaRef) -> RowInput:
    return RowInput(id=row_id, line=1, prompt="p", media=media, candidate=candidate)


def test_gs_uris_only_on_vertex_and_large_files_only_on_the_gemini_api(tmp_path: Path) -> None:
    big = MediaRef(kind="path", value=str(tmp_path / "big.png"))
    assert refusal(GS, None, True, 10) is None  # Vertex reads Cloud Storage itself, any size
    assert "GOOGLE_GENAI_USE_VERTEXAI=true" in (refusal(GS, None, False, 10) or "")
    assert refusal(big, 11, False, 10) is None  # the Gemini API: uploaded through the Files API
    assert refusal(big, 10, True, 10) is None  # at the limit: inline
    why = refusal(big, 11, True, 10) or ""
    assert "EVALQ_INLINE_MAX_BYTES" in why and "Cloud Storage" in why and "gs://" in why
    assert refusal(big, None, True, 10) is None  # a URL's size is the worker's to find


def test_sizes_known_without_fetching(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"x" * 123)
    assert known_size(MediaRef(kind="path", value=str(tmp_path / "a.png"))) == 123
    data = base64.b64encode(b"y" * 100).decode()
    assert known_size(MediaRef(kind="inline", value=data, mime_type="image/png")) == 100
    assert known_size(MediaRef(kind="url", value="https://x/a.png")) is None
    assert known_size(GS) is None


def test_a_dataset_is_refused_in_one_line_naming_the_first_row_and_field(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(b"x" * 50)
    (tmp_path / "small.png").write_bytes(b"x" * 5)
    big = MediaRef(kind="path", value=str(tmp_path / "big.png"))
    small = MediaRef(kind="path", value=str(tmp_path / "small.png"))
    rows = [
        media_input("ok", image=small),
        media_input("r2", image=big),
        media_input("r3", image=big),
    ]
    check_rows(rows, on_vertex=False, inline_max_bytes=10)  # the Gemini API uploads them
    with pytest.raises(DatasetError) as refused:
        check_rows(rows, on_vertex=True, inline_max_bytes=10)
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith("row r2: field 'image': 50 bytes is over the 10 byte inline limit")
    assert line.endswith("(1 other media cell too); nothing was submitted")

    with pytest.raises(DatasetError, match=r"^row g: field 'video': gs://bucket/clip\.mp4: gs://"):
        check_rows([media_input("g", video=GS)], on_vertex=False, inline_max_bytes=10)
    check_rows([media_input("g", video=GS)], on_vertex=True, inline_max_bytes=10)
    # A --candidates cell is named by its candidate's column, as every cell error is.
    with pytest.raises(DatasetError, match=r"^row c, candidate 'sdxl': field 'sdxl': "):
        check_rows([media_input("c", "sdxl", image=GS)], on_vertex=False, inline_max_bytes=10)
