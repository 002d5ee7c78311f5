"""Which media the judge's backend can take, one rule for the submitter and the workers: a dataset
written for the other backend (a `gs://` URI on the Gemini API, a file over the inline limit on
Vertex AI) is no row's bad luck, and both sides refuse it in the same words."""

from __future__ import annotations

import os
from collections.abc import Iterable

from evalq.core.errors import CellInputError, DatasetError, InputError
from evalq.core.models import MediaRef, RowInput

VERTEX_SETTING = "GOOGLE_GENAI_USE_VERTEXAI"


def refusal(ref: MediaRef, size: int | None, on_vertex: bool, inline_max_bytes: int) -> str | None:
    """Why the backend can't take this media (`size`: its bytes, None when not known yet), or
    None when it can."""
    if ref.kind == "file_uri" and not on_vertex:
        return (
            f"{ref.value}: gs:// URIs can only be read on Vertex AI ({VERTEX_SETTING}=true); "
            "with the Gemini API give a local path, an http(s) URL or a data: URI"
        )
    if on_vertex and ref.kind != "file_uri" and size is not None and size > inline_max_bytes:
        return (
            f"{size:,} bytes is over the {inline_max_bytes:,} byte inline limit "
            "(EVALQ_INLINE_MAX_BYTES) and Vertex AI has no Files API: put it in Cloud Storage "
            "and give its gs:// URI"
        )
    return None


def known_size(ref: MediaRef) -> int | None:
    """The media's size in bytes where the submitter knows it without fetching: a local file
    (already checked to be a regular file under the data roots), inline data (its base64).
    None for a URL (only the worker downloads it) and a gs:// URI (Vertex reads it)."""
    if ref.kind == "path":
        try:
            return os.stat(ref.value).st_size
        except OSError:
            return None  # gone since it was located: the worker's read says so, per row
    if ref.kind == "inline":
        return len("".join(ref.value.split()).rstrip("=")) * 3 // 4
    return None


def check_rows(rows: Iterable[RowInput], on_vertex: bool, inline_max_bytes: int) -> None:
    """Refuse a dataset holding media the backend can't take, before anything is stored (from the
    sizes known without fetching: local files and inline data; the worker applies `refusal` to
    what it loads): one
    line naming the first such row and field (a --candidates cell by its column), and how many
    other cells are refused too."""
    refused: list[InputError] = []
    for row in rows:
        for field, ref in row.media.items():
            why = refusal(ref, known_size(ref), on_vertex, inline_max_bytes)
            if why is None:
                continue
            error = InputError(row.id, field, why)
            refused.append(
                CellInputError.naming_column(error, field, row.candidate)
                if row.candidate
                else error
            )
    if not refused:
        return
    more = len(refused) - 1
    others = f" ({more} other media cell{'s' if more != 1 else ''} too)" if more else ""
    raise DatasetError(f"{refused[0]}{others}; nothing was submitted")
