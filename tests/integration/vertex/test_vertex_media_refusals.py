"""Media the workers' backend can't take is refused at submit, through the CLI as a user runs it:
before any row is stored, in one line naming the row and the field.

- On Vertex AI (GOOGLE_GENAI_USE_VERTEXAI), a local file over the inline limit
  (EVALQ_INLINE_MAX_BYTES): Vertex has no Files API, so the line says to put it in Cloud
  Storage, at submit rather than from the worker row by row once the job is stored.
- On the Gemini API, a gs:// URI, which it can't read: the line names the setting.

The submitter reads GOOGLE_GENAI_USE_VERTEXAI as the workers do. The refusals run against the
scratch database, which no worker watches and which starts empty: after them it holds no job,
and the control (the same file in Cloud Storage, on Vertex) does store one. Both sides allow
the bucket (EVALQ_GCS_MEDIA): a bucket not allowed fails its rows instead
(tests/integration/security/test_gcs_media_buckets.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import FakeGemini, worker_env
from tests.support.cli import one_line_refusal, run_evalq
from tests.support.datasets import png, write_rows
from tests.support.scratch import job_keys
from tests.support.vertex import VERTEX_ENV

pytestmark = pytest.mark.integration

INLINE_MAX = 4000
VERTEX = {
    **VERTEX_ENV,
    "EVALQ_INLINE_MAX_BYTES": str(INLINE_MAX),
    "EVALQ_GCS_MEDIA": "gs://evalq-test",
}


def noisy_png(path: Path) -> Path:
    """A 64x64 PNG of noise: it does not compress, so it is over INLINE_MAX."""
    Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3)).save(path, format="PNG")
    return path


def test_media_the_backend_cant_take_is_refused_before_anything_is_stored(
    scratch_url: str, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    small, big = png(tmp_path / "small.png"), noisy_png(tmp_path / "big.png")
    size = big.stat().st_size
    assert small.stat().st_size <= INLINE_MAX < size
    vertex = worker_env(scratch_url, fake_gemini.url, COLUMNS="400", **VERTEX)
    gemini_api = worker_env(
        scratch_url, fake_gemini.url, COLUMNS="400", EVALQ_GCS_MEDIA="gs://evalq-test"
    )
    local = write_rows(
        tmp_path / "local.jsonl",
        [
            {"id": "fits", "prompt": "a red square", "image": small.name},
            {"id": "too-big", "prompt": "noise", "image": big.name},
        ],
    )
    said = one_line_refusal(run_evalq(vertex, "run", "gecko-image", str(local)))
    assert said == (
        f"error: row too-big: field 'image': {size:,} bytes is over the {INLINE_MAX:,} byte "
        "inline limit (EVALQ_INLINE_MAX_BYTES) and Vertex AI has no Files API: put it in "
        "Cloud Storage and give its gs:// URI; nothing was submitted"
    )
    assert job_keys(scratch_url) == []

    in_storage = write_rows(
        tmp_path / "gcs.jsonl",
        [
            {"id": "fits", "prompt": "a red square", "image": small.name},
            {"id": "in-gcs", "prompt": "noise", "image": "gs://evalq-test/big.png"},
        ],
    )
    said = one_line_refusal(run_evalq(gemini_api, "run", "gecko-image", str(in_storage)))
    assert said.startswith("error: row in-gcs: field 'image': gs://evalq-test/big.png: ")
    assert "GOOGLE_GENAI_USE_VERTEXAI=true" in said and said.endswith("nothing was submitted")
    assert job_keys(scratch_url) == []

    # The control: on Vertex the Cloud Storage file in an allowed bucket is taken as it is.
    done = run_evalq(vertex, "run", "gecko-image", str(in_storage), "--json")
    assert done.returncode == 0, done.stderr
    assert "input error" not in done.stderr, done.stderr
    job_id = json.loads(done.stdout)["job_id"]
    assert any(job_id in key for key in job_keys(scratch_url))
