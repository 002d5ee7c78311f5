"""On the worker, a gs:// URI reaches Vertex AI's judge as it is, a `file_data` part with its URI
and type, nothing downloaded or uploaded; the refusals are the submitter's rule
(evalq.core.media.backend), said in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.errors import InputError
from evalq.core.judge import JudgeRequest
from evalq.core.media.backend import refusal
from evalq.core.models import MediaRef
from evalq.worker.judges.files import deliver_media, media_rules
from evalq.worker.judges.gemini import request_parts
from evalq.worker.judges.media_cache import MediaCache
from evalq.worker.settings import Settings
from tests.support.datasets import png


class NoFiles:
    """A Files API that must not be used."""

    def upload(self, data: bytes, mime_type: str, name: str) -> object:
        raise AssertionError("uploaded")

    def get(self, name: str) -> object:
        raise AssertionError("looked up")


class NoShared:
    def record(self, job_id: str, digest: str) -> str | None:
        raise AssertionError("no upload record is read for a gs:// URI")

    def save_record(self, job_id: str, digest: str, value: str) -> None:
        raise AssertionError("saved")

    def claim(self, job_id: str, digest: str, token: str, ttl_s: int) -> bool:
        raise AssertionError("claimed")

    def release(self, job_id: str, digest: str, token: str) -> None:
        raise AssertionError("released")


def deliver_ref(settings: Settings, ref: MediaRef, field: str = "image") -> object:
    return deliver_media(
        settings,
        MediaCache(1 << 20),
        NoShared(),
        "job",
        "row-7",
        field,
        ref,
        ("image/",),
        media_rules(settings, ["/"]),
        NoFiles(),  # type: ignore[arg-type]
    )


def on_vertex(**extra: object) -> Settings:
    allowed = {"gcs_media": ("gs://bucket",), **extra}
    return Settings(api_key=None, use_vertexai=True, **allowed)  # type: ignore[arg-type]


def test_a_gs_uri_goes_to_vertex_as_a_file_data_part_with_its_uri_and_type() -> None:
    ref = MediaRef(kind="file_uri", value="gs://bucket/cats/a.webp", mime_type="image/webp")
    part = deliver_ref(on_vertex(), ref)
    contents, _ = request_parts(JudgeRequest(prompt="Is it a cat?", media=(part,)), 256)  # type: ignore[arg-type]
    media, text = contents[0].parts or []
    assert media.file_data is not None and media.inline_data is None
    assert (media.file_data.file_uri, media.file_data.mime_type) == (
        "gs://bucket/cats/a.webp",
        "image/webp",
    )
    assert text.text == "Is it a cat?"
    # The type from the extension when the row gives none.
    guessed = deliver_ref(on_vertex(), MediaRef(kind="file_uri", value="gs://bucket/b.png"))
    assert guessed == type(guessed)(mime_type="image/png", uri="gs://bucket/b.png")


def test_the_worker_refuses_in_the_submitters_words(tmp_path: Path) -> None:
    gs = MediaRef(kind="file_uri", value="gs://bucket/b.png")
    with pytest.raises(InputError) as refused:
        deliver_ref(Settings(api_key=None, gcs_media=("gs://bucket",)), gs)  # the Gemini API
    assert refused.value.message == refusal(gs, None, False, 0)
    image = png(tmp_path / "big.png")
    big = MediaRef(kind="path", value=str(image))
    with pytest.raises(InputError) as refused:
        deliver_ref(on_vertex(inline_max_bytes=10), big)
    assert (refused.value.row_id, refused.value.field) == ("row-7", "image")
    assert refused.value.message == refusal(big, image.stat().st_size, True, 10)
