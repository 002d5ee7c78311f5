"""The Files API path: the fake server speaks google-genai 3.4.0's resumable upload protocol
(checked with the real client), and evalq's uploader sends large media once per job."""

from __future__ import annotations

import io
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import errors as genai_errors
from google.genai import types

from evalq.core.errors import InputError, JudgeError, RateLimited, TransientJudgeError
from evalq.core.judge import MediaPart
from evalq.core.models import MediaRef
from evalq.examples.video import GECKO_VIDEO_EXAMPLES, clip_bytes
from evalq.fake_gemini.serving import running_server
from evalq.worker.judges.files import (
    FileInfo,
    GenaiFiles,
    Uploader,
    deliver_media,
    file_name,
    media_digest,
    media_rules,
)
from evalq.worker.judges.media_cache import MediaCache
from evalq.worker.settings import Settings
from tests.support.fake_http import RecordingBrain, files_stats, make_client

VIDEO = clip_bytes(GECKO_VIDEO_EXAMPLES[0])


@pytest.fixture
def server() -> Iterator[tuple[str, RecordingBrain]]:
    brain = RecordingBrain(lambda request: "[simulated judge] ok")
    with running_server(brain=brain) as url:
        yield url, brain


def settings_for(url: str | None = None, **extra: Any) -> Settings:
    return Settings(
        gemini_base_url=url, api_key=None, transient_max_wait_s=0.01, upload_timeout_s=20, **extra
    )


# ---- the fake server, driven by the real client --------------------------------------------


def test_real_client_uploads_in_chunks_and_the_judge_gets_the_bytes(
    server: tuple[str, RecordingBrain], tmp_path: Path
) -> None:
    url, brain = server
    client = make_client(url)
    big = VIDEO + bytes(9 * 1024 * 1024)  # over google-genai's 8 MiB chunk: two upload calls
    path = tmp_path / "clip.avi"
    path.write_bytes(big)
    uploaded = client.files.upload(file=path, config={"mime_type": "video/avi"})
    assert uploaded.name is not None
    assert uploaded.uri == f"{url}/v1beta/{uploaded.name}"
    assert (uploaded.size_bytes, uploaded.mime_type) == (len(big), "video/avi")
    assert uploaded.state == types.FileState.PROCESSING  # videos are processed before use
    with pytest.raises(genai_errors.ClientError) as refused:
        client.models.generate_content(
            model="m", contents=[types.Part.from_uri(file_uri=uploaded.uri, mime_type="video/avi")]
        )
    assert (refused.value.code, refused.value.status) == (400, "FAILED_PRECONDITION")
    assert client.files.get(name=uploaded.name).state == types.FileState.ACTIVE
    reply = client.models.generate_content(
        model="m",
        contents=[types.Part.from_uri(file_uri=uploaded.uri, mime_type="video/avi"), "what?"],
    )
    assert reply.text == "[simulated judge] ok"
    (media,) = brain.requests[-1].media
    assert (media.uri, media.data) == (uploaded.uri, big)
    assert files_stats(url)["uploads"] == 1


def test_small_files_names_conflicts_and_unknown_files(server: tuple[str, RecordingBrain]) -> None:
    url, _ = server
    client = make_client(url)
    config = types.UploadFileConfig(mime_type="image/png", name="evalq-test-name")
    png = b"\x89PNG\r\n\x1a\n" + bytes(100)
    uploaded = client.files.upload(file=io.BytesIO(png), config=config)
    assert (uploaded.name, uploaded.state) == ("files/evalq-test-name", types.FileState.ACTIVE)
    with pytest.raises(genai_errors.ClientError) as taken:
        client.files.upload(file=io.BytesIO(png), config=config)
    assert (taken.value.code, taken.value.status) == (409, "ALREADY_EXISTS")
    with pytest.raises(genai_errors.ClientError) as missing:
        client.files.get(name="files/nothing-here")
    assert missing.value.code == 403
    with pytest.raises(genai_errors.ClientError) as unknown:
        client.models.generate_content(
            model="m",
            contents=[
                types.Part.from_uri(file_uri=f"{url}/v1beta/files/gone", mime_type="image/png")
            ],
        )
    assert unknown.value.code == 403
    client.files.delete(name="files/evalq-test-name")
    assert files_stats(url)["files"] == []


def test_reset_forgets_files(server: tuple[str, RecordingBrain]) -> None:
    url, _ = server
    client = make_client(url)  # kept: a client that is dropped closes its connection
    client.files.upload(file=io.BytesIO(VIDEO), config={"mime_type": "video/avi"})
    assert len(files_stats(url)["files"]) == 1
    urllib.request.urlopen(
        urllib.request.Request(url + "/reset", data=b"{}", method="POST")
    ).close()
    assert files_stats(url) == {"uploads": 0, "files": []}


# ---- the uploader ----------------------------------------------------------------------------


class MemoryShared:
    """Shared in memory, with a real lock semantics (claim is set-if-absent)."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self._lock = threading.Lock()

    def record(self, job_id: str, digest: str) -> str | None:
        return self.data.get(f"{job_id}/{digest}")

    def save_record(self, job_id: str, digest: str, value: str) -> None:
        self.data[f"{job_id}/{digest}"] = value

    def claim(self, job_id: str, digest: str, token: str, ttl_s: int) -> bool:
        key = f"{job_id}/{digest}:lock"
        with self._lock:
            if key in self.data:
                return False
            self.data[key] = token
            return True

    def release(self, job_id: str, digest: str, token: str) -> None:
        key = f"{job_id}/{digest}:lock"
        with self._lock:
            if self.data.get(key) == token:
                del self.data[key]


def test_one_upload_per_job_across_threads_and_the_same_uri_in_every_job(
    server: tuple[str, RecordingBrain],
) -> None:
    url, _ = server
    settings = settings_for(url)
    shared = MemoryShared()
    uploader = Uploader(settings, GenaiFiles(settings), shared)
    part = MediaPart("video/avi", VIDEO)
    got: list[MediaPart] = []
    threads = [
        threading.Thread(target=lambda: got.append(uploader.deliver(part, "job1", "r", "video")))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 6
    assert {(p.uri, p.mime_type, p.data) for p in got} == {
        (f"{url}/v1beta/files/{file_name(part)}", "video/avi", None)
    }
    assert files_stats(url)["uploads"] == 1
    # Another job: the bytes are there already under the same name, so no second upload, and
    # the URI (part of every judge-call cache key) is the same.
    other = Uploader(settings, GenaiFiles(settings), MemoryShared()).deliver(part, "job2", "r", "v")
    assert other.uri == got[0].uri
    assert files_stats(url)["uploads"] == 1


class StubFiles:
    """A FileService whose answers the test scripts."""

    def __init__(
        self, uploads: list[FileInfo | Exception], gets: list[FileInfo | Exception]
    ) -> None:
        self.uploads = uploads
        self.gets = gets
        self.calls: list[str] = []

    def _next(self, queue: list[FileInfo | Exception], what: str) -> FileInfo:
        self.calls.append(what)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def upload(self, data: bytes, mime_type: str, name: str) -> FileInfo:
        return self._next(self.uploads, f"upload {name}")

    def get(self, name: str) -> FileInfo:
        return self._next(self.gets, f"get {name}")


def info(
    state: str = "ACTIVE", expires_at: float | None = None, error: str | None = None
) -> FileInfo:
    return FileInfo("files/x", "https://files.test/x", "video/avi", state, expires_at, error)


def api_error(code: int, status: str, **extra: Any) -> genai_errors.APIError:
    body = {"error": {"code": code, "message": f"{status} here", "status": status, **extra}}
    cls = genai_errors.ClientError if code < 500 else genai_errors.ServerError
    return cls(code, body)


def deliver_video(files: StubFiles, shared: MemoryShared | None = None) -> MediaPart:
    uploader = Uploader(settings_for(), files, shared or MemoryShared())
    return uploader.deliver(MediaPart("video/avi", VIDEO), "job", "row-3", "video")


def test_processing_files_are_polled_until_active() -> None:
    files = StubFiles([info("PROCESSING")], [info("PROCESSING"), info("ACTIVE")])
    assert deliver_video(files).uri == "https://files.test/x"
    assert [c.split()[0] for c in files.calls] == ["upload", "get", "get"]


def test_a_name_already_taken_means_the_bytes_are_there() -> None:
    files = StubFiles([api_error(409, "ALREADY_EXISTS")], [info("ACTIVE")])
    assert deliver_video(files).uri == "https://files.test/x"
    assert files.calls[1] == f"get files/{file_name(MediaPart('video/avi', VIDEO))}"


@pytest.mark.parametrize(
    ("answer", "error", "reason"),
    [
        (info("FAILED", error="unsupported codec"), InputError, "unsupported codec"),
        (api_error(400, "INVALID_ARGUMENT"), InputError, "refused"),
        (api_error(413, "INVALID_ARGUMENT"), InputError, "refused"),
        (api_error(403, "PERMISSION_DENIED"), JudgeError, "Files API"),
    ],
)
def test_refusals_name_the_row(answer: Any, error: type[Exception], reason: str) -> None:
    files = StubFiles([answer], [])
    with pytest.raises(error, match=reason) as raised:
        deliver_video(files)
    if isinstance(raised.value, InputError):
        assert (raised.value.row_id, raised.value.field) == ("row-3", "video")


def test_rate_limits_go_back_to_the_task_and_5xx_is_retried_in_process() -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}
    with pytest.raises(RateLimited) as limited:
        deliver_video(StubFiles([api_error(429, "RESOURCE_EXHAUSTED", details=[retry_info])], []))
    assert limited.value.retry_after_s == 7
    flaky = StubFiles([api_error(503, "UNAVAILABLE"), info()], [])
    assert deliver_video(flaky).uri == "https://files.test/x"
    down = StubFiles([api_error(503, "UNAVAILABLE")] * 4, [])
    with pytest.raises(TransientJudgeError):
        deliver_video(down)
    assert len(down.calls) == settings_for().transient_attempts


def test_a_recorded_upload_is_reused_until_it_nears_expiry() -> None:
    shared = MemoryShared()
    part = MediaPart("video/avi", VIDEO)
    digest = media_digest(part)
    record = {"name": "files/x", "uri": "https://files.test/old", "mime_type": "video/avi"}
    shared.save_record("job", digest, json.dumps({**record, "expires_at": time.time() + 3600}))
    assert deliver_video(StubFiles([], []), shared).uri == "https://files.test/old"
    shared.save_record("job", digest, json.dumps({**record, "expires_at": time.time() + 60}))
    assert deliver_video(StubFiles([info()], []), shared).uri == "https://files.test/x"


# ---- deciding how media travels --------------------------------------------------------------


def run_deliver(
    settings: Settings, ref: MediaRef, allowed: tuple[str, ...] = ("video/",)
) -> MediaPart:
    files = StubFiles([info()], [])
    rules = media_rules(settings, ["/"])  # the media are in the test's temporary folder
    return deliver_media(
        settings,
        MediaCache(1 << 24),
        MemoryShared(),
        "job",
        "row-5",
        "video",
        ref,
        allowed,
        rules,
        files,
    )


def test_gs_uris_pass_through_on_vertex_only() -> None:
    ref = MediaRef(kind="file_uri", value="gs://bucket/clip.mp4")
    vertex = settings_for(use_vertexai=True, gcs_media=("gs://bucket",))
    assert run_deliver(vertex, ref) == MediaPart("video/mp4", uri="gs://bucket/clip.mp4")
    with pytest.raises(InputError, match="Vertex AI") as info_:
        run_deliver(settings_for(gcs_media=("gs://bucket",)), ref)
    assert (info_.value.row_id, info_.value.field) == ("row-5", "video")
    with pytest.raises(InputError, match="not video"):
        run_deliver(vertex, MediaRef(kind="file_uri", value="gs://bucket/picture.png"))
    with pytest.raises(InputError, match="mime_type"):
        run_deliver(vertex, MediaRef(kind="file_uri", value="gs://bucket/blob"))
    typed = MediaRef(kind="file_uri", value="gs://bucket/blob", mime_type="video/mp4")
    assert run_deliver(vertex, typed).uri == "gs://bucket/blob"


def test_small_media_goes_inline_and_large_media_is_uploaded(tmp_path: Path) -> None:
    (tmp_path / "clip.avi").write_bytes(VIDEO)
    ref = MediaRef(kind="path", value=str(tmp_path / "clip.avi"))
    inline = run_deliver(settings_for(inline_max_bytes=len(VIDEO)), ref)
    assert (inline.data, inline.uri) == (VIDEO, None)
    uploaded = run_deliver(settings_for(inline_max_bytes=len(VIDEO) - 1), ref)
    assert (uploaded.data, uploaded.uri) == (None, "https://files.test/x")
    with pytest.raises(InputError, match="gs://"):
        run_deliver(settings_for(inline_max_bytes=100, use_vertexai=True), ref)
