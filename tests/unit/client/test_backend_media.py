"""The submitter reads GOOGLE_GENAI_USE_VERTEXAI as the workers do and refuses media their backend
can't take in prepare(), which submit and the dry run share."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.client.submit import prepare
from evalq.core.errors import DatasetError
from evalq.worker.settings import Settings
from tests.support.datasets import png, write_rows


def test_submit_and_dry_run_refuse_what_the_workers_backend_cant_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = png(tmp_path / "a.png")
    local = write_rows(tmp_path / "local.jsonl", [{"id": "r1", "prompt": "red", "image": "a.png"}])
    gcs = write_rows(
        tmp_path / "gcs.jsonl", [{"id": "r2", "prompt": "red", "image": "gs://bkt/a.png"}]
    )
    small = image.stat().st_size - 1
    assert prepare(Settings(api_key=None, inline_max_bytes=small), "gecko-image", local, {})
    with pytest.raises(DatasetError, match=r"^row r2: field 'image': gs://bkt/a\.png: .*VERTEXAI"):
        prepare(Settings(api_key=None, gcs_media=("gs://bkt",)), "gecko-image", gcs, {})

    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")  # as the workers read it
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    vertex = Settings(api_key=None, inline_max_bytes=small, gcs_media=("gs://bkt",))
    assert vertex.use_vertexai
    with pytest.raises(DatasetError, match=r"^row r1: field 'image': .*put it in Cloud Storage"):
        prepare(vertex, "gecko-image", local, {})
    assert prepare(vertex, "gecko-image", gcs, {}).dataset.rows
