"""Media as users have it, end to end on an isolated stack: local paths (inline when small,
through the Files API when large, uploaded once per job), http(s) URLs, data: URIs, the
seeds' JSON content form; and every kind of bad media failing only its own row, with an
input_error naming the row and the field. (A gs:// URI on the Gemini API refuses the whole
dataset at submit: tests/integration/vertex/test_vertex_media_refusals.py.)"""

from __future__ import annotations

import base64
import functools
import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from evalq.core.media import sniff_mime
from evalq.examples.gecko import GECKO_IMAGE_EXAMPLES, draw_example
from evalq.examples.video import GECKO_VIDEO_EXAMPLES, clip_bytes
from tests.support.datasets import write_rows
from tests.support.fake_http import files_stats
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration

INLINE_MAX = 30_000
MEDIA_MAX = 200_000


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def http_server(folder: Path) -> Iterator[str]:
    """A local web server for the URL rows, as a user's media host would be."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def content_form(uri: str, mime: str) -> str:
    return json.dumps(
        {"contents": [{"parts": [{"file_data": {"mime_type": mime, "file_uri": uri}}]}]}
    )


@pytest.fixture(scope="module")
def media_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("media-stack")
    # The URL rows are served from 127.0.0.1, which workers refuse unless told otherwise.
    with stack(
        folder,
        EVALQ_INLINE_MAX_BYTES=str(INLINE_MAX),
        EVALQ_MEDIA_MAX_BYTES=str(MEDIA_MAX),
        EVALQ_MEDIA_ALLOW_PRIVATE="true",
    ) as s:
        yield s


def test_every_video_form_users_have_and_every_bad_one(media_stack: Stack, tmp_path: Path) -> None:
    red, blue = GECKO_VIDEO_EXAMPLES[0], GECKO_VIDEO_EXAMPLES[1]
    small = clip_bytes(red)
    large = clip_bytes(blue, frames=24, size_px=192)
    assert len(small) <= INLINE_MAX < len(large) <= MEDIA_MAX
    videos = tmp_path / "videos"
    videos.mkdir()
    (videos / "small.avi").write_bytes(small)
    (videos / "large.avi").write_bytes(large)
    (videos / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (videos / "garbage.avi").write_bytes(b"\x00\x01\x02 not a video at all")
    (videos / "empty.avi").write_bytes(b"")
    (videos / "huge.avi").write_bytes(small + bytes(MEDIA_MAX))
    inline = base64.b64encode(small).decode()
    good = {
        "path-small": "videos/small.avi",
        "path-large": "videos/large.avi",
        "data-uri": f"data:video/avi;base64,{inline}",
        "seed-content-form": content_form("videos/small.avi", "video/avi"),
        "seed-inline-part": {"inline_data": {"mime_type": "video/avi", "data": inline}},
        "alias-mime": {
            "file_data": {"mime_type": "video/x-msvideo", "file_uri": "videos/small.avi"}
        },
    }
    with http_server(videos) as web:
        good["url"] = f"{web}/small.avi"
        bad = {
            "missing-file": ("videos/nowhere.avi", "not found"),
            "a-folder": ("videos", "not a regular file"),
            "a-picture": ("videos/picture.png", "is not video"),
            "garbage": ("videos/garbage.avi", "no type we know"),
            "empty": ("videos/empty.avi", "empty"),
            "oversized": ("videos/huge.avi", f"over the {MEDIA_MAX}"),
            "wrong-claim": (content_form("videos/small.avi", "video/mp4"), "claims video/mp4"),
            "bad-base64": ("data:video/avi;base64,!!!notbase64", "base64"),
            "url-404": (f"{web}/nope.avi", "HTTP 404"),
            "url-down": ("http://127.0.0.1:9/clip.avi", "failed"),
        }
        prompts = {"path-large": blue.match}
        rows = [
            {"id": row_id, "prompt": prompts.get(row_id, red.match), "video": value}
            for row_id, value in good.items()
        ]
        rows.append(
            {"id": "path-large-near-miss", "prompt": blue.near_miss, "video": good["path-large"]}
        )
        rows += [{"id": row_id, "prompt": red.match, "video": v} for row_id, (v, _) in bad.items()]
        dataset = tmp_path / "rows.jsonl"
        write_rows(dataset, rows)
        uploads_before = files_stats(media_stack.gemini_url)["uploads"]
        client = media_stack.client(media_allow_private=True)
        job = client.submit("gecko-video", dataset, judge_model="gemini-media-forms")
        summary = client.wait(job.job_id, timeout_s=120)
    results = {r.id: r for r in client.results(job.job_id)}
    assert summary.status == "finished"
    for row_id in good:
        row = results[row_id]
        # The simulated judge answers from the frames it decodes: 1.0 means it saw the video.
        assert (row.status, row.score) == ("scored", 1.0), (row_id, row.error, row.questions)
    assert results["path-large-near-miss"].score is not None
    assert results["path-large-near-miss"].score < 1.0
    for row_id, (_, why) in bad.items():
        row = results[row_id]
        assert (row.status, row.score, row.reason) == ("failed", None, "input_error"), row_id
        assert f"row {row_id}" in (row.error or ""), row.error
        assert "'video'" in (row.error or ""), row.error
        assert why in (row.error or ""), (row_id, row.error)
    assert summary.rows_failed_by_reason == {"input_error": len(bad)}
    # The large clip went through the Files API once, though two rows and all their questions
    # (and the rubric's coverage re-asks, if any) used it.
    stats = files_stats(media_stack.gemini_url)
    assert stats["uploads"] - uploads_before == 1
    assert [f["size_bytes"] for f in stats["files"]] == [len(large)]


def test_large_images_use_the_files_api_too(media_stack: Stack, tmp_path: Path) -> None:
    example = GECKO_IMAGE_EXAMPLES[1]  # a red circle to the left of a blue square
    buffer = io.BytesIO()
    draw_example(example, size_px=200).save(buffer, format="PNG", compress_level=0)
    png = buffer.getvalue()
    assert INLINE_MAX < len(png) <= MEDIA_MAX
    assert sniff_mime(png) == "image/png"
    (tmp_path / "big.png").write_bytes(png)
    small = io.BytesIO()
    draw_example(example, size_px=128).save(small, format="PNG")
    (tmp_path / "small.png").write_bytes(small.getvalue())
    rows = [
        {"id": "big", "prompt": example.match, "image": "big.png"},
        {"id": "big-near-miss", "prompt": example.near_miss, "image": "big.png"},
        {"id": "small", "prompt": example.match, "image": "small.png"},
        {"id": "a-video", "prompt": example.match, "image": content_form("v.avi", "video/avi")},
    ]
    (tmp_path / "v.avi").write_bytes(clip_bytes(GECKO_VIDEO_EXAMPLES[0]))
    dataset = tmp_path / "rows.jsonl"
    write_rows(dataset, rows)
    uploads_before = files_stats(media_stack.gemini_url)["uploads"]
    client = media_stack.client()
    job = client.submit("gecko-image", dataset, judge_model="gemini-media-images")
    client.wait(job.job_id, timeout_s=120)
    results = {r.id: r for r in client.results(job.job_id)}
    assert results["big"].score == results["small"].score == 1.0
    assert results["big-near-miss"].score is not None
    assert results["big-near-miss"].score < 1.0
    assert results["a-video"].reason == "input_error"
    assert "is not image" in (results["a-video"].error or "")
    assert files_stats(media_stack.gemini_url)["uploads"] - uploads_before == 1
