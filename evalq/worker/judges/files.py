"""How a row's media reaches the judge: inline when small, through the Files API when large
(Gemini caps a request at 20 MB, and a large video sent inline with each question would pay
for its upload every time)."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from google.genai import errors as genai_errors
from google.genai import types
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from evalq.core.data_roots import DataRoots
from evalq.core.errors import InputError, JudgeError, TransientJudgeError, retried_in_process
from evalq.core.judge import MediaPart
from evalq.core.media import MediaRules, load_media
from evalq.core.media.backend import refusal
from evalq.core.media.fetch import NetworkRules
from evalq.core.media.gcs import GcsMedia
from evalq.core.models import JobConfig, MediaRef
from evalq.worker.judges.gemini import _TRANSPORT_ERRORS, make_client, map_api_error
from evalq.worker.settings import Settings

if TYPE_CHECKING:
    from google import genai

    from evalq.worker.judges.media_cache import MediaCache
    from evalq.worker.store import Store

_EXPIRY_MARGIN_S = 600.0  # a file this close to expiring is uploaded again
_POLL_S = 0.25  # first wait before a PROCESSING file is looked at again; then doubling
_POLL_MAX_S = 5.0
_WAIT_POLL_S = 0.2  # how often a worker checks whether another's upload finished
_REFUSED = (400, 413, 415)  # the Files API will not take this file: the row's input is bad


@dataclass(frozen=True)
class FileInfo:
    """What the Files API says about one uploaded file."""

    name: str
    uri: str
    mime_type: str
    state: str  # PROCESSING, ACTIVE or FAILED
    expires_at: float | None = None
    error: str | None = None


class FileService(Protocol):
    """The two Files API calls evalq makes (google-genai's client.files in production)."""

    def upload(self, data: bytes, mime_type: str, name: str) -> FileInfo: ...

    def get(self, name: str) -> FileInfo: ...


class Shared(Protocol):
    """Redis as the uploader needs it: the per-job record of uploads (by the media's digest),
    and a lock per file with an owner token."""

    def record(self, job_id: str, digest: str) -> str | None: ...

    def save_record(self, job_id: str, digest: str, value: str) -> None:
        """Keep the record as long as the job's other keys."""
        ...

    def claim(self, job_id: str, digest: str, token: str, ttl_s: int) -> bool: ...

    def release(self, job_id: str, digest: str, token: str) -> None: ...


def _info(file: types.File) -> FileInfo:
    state = file.state.value if file.state is not None else "ACTIVE"
    expires = file.expiration_time.timestamp() if file.expiration_time is not None else None
    return FileInfo(
        name=file.name or "",
        uri=file.uri or "",
        mime_type=file.mime_type or "",
        state=state,
        expires_at=expires,
        error=file.error.message if file.error is not None else None,
    )


class GenaiFiles:
    """FileService on the real google-genai client (the fake server speaks the same protocol)."""

    def __init__(self, settings: Settings, client: genai.Client | None = None) -> None:
        # Uploads are long: give them their own timeout rather than the judge's.
        upload_settings = settings.model_copy(update={"judge_timeout_s": settings.upload_timeout_s})
        self._client = client or make_client(upload_settings)

    def upload(self, data: bytes, mime_type: str, name: str) -> FileInfo:
        config = types.UploadFileConfig(mime_type=mime_type, name=name, display_name=name)
        return _info(self._client.files.upload(file=io.BytesIO(data), config=config))

    def get(self, name: str) -> FileInfo:
        return _info(self._client.files.get(name=name))


class RedisShared:
    """Shared on the worker's Store: records as job keys, locks with an owner token."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def record(self, job_id: str, digest: str) -> str | None:
        return self._store.upload_record(job_id, digest)

    def save_record(self, job_id: str, digest: str, value: str) -> None:
        self._store.save_upload_record(job_id, digest, value, self._store.job_ttl(job_id))

    def claim(self, job_id: str, digest: str, token: str, ttl_s: int) -> bool:
        return self._store.claim_upload(job_id, digest, token, ttl_s)

    def release(self, job_id: str, digest: str, token: str) -> None:
        self._store.release_upload(job_id, digest, token)


def file_name(part: MediaPart) -> str:
    """A Files API name from the media's digest: lowercase, at most 40 characters."""
    return "evalq-" + media_digest(part)[:34]


def media_digest(part: MediaPart) -> str:
    return hashlib.sha256(part.mime_type.encode() + b"\0" + (part.data or b"")).hexdigest()


class Uploader:
    """Uploads a job's large media (over ``inline_max_bytes``) once and hands out the file's URI,
    kept in Redis under the job by the media's digest; a lock makes rows sharing a file wait for
    the first upload. The file's name derives from its digest, so its URI, and with it the
    call cache key, is the same in every job."""

    def __init__(self, settings: Settings, files: FileService, shared: Shared) -> None:
        self._settings = settings
        self._files = files
        self._shared = shared

    def deliver(self, part: MediaPart, job_id: str, row_id: str, field: str) -> MediaPart:
        digest = media_digest(part)
        deadline = time.monotonic() + self._settings.upload_timeout_s
        token = uuid.uuid4().hex
        lock_ttl = int(self._settings.upload_timeout_s) + 60
        while True:
            if (known := self._known(job_id, digest)) is not None:
                return known
            if self._shared.claim(job_id, digest, token, lock_ttl):
                try:
                    if (known := self._known(job_id, digest)) is not None:
                        return known
                    info = self._upload(part, row_id, field, deadline)
                    record = {
                        "name": info.name,
                        "uri": info.uri,
                        "mime_type": info.mime_type or part.mime_type,
                        "expires_at": info.expires_at,
                    }
                    self._shared.save_record(job_id, digest, json.dumps(record))
                    return MediaPart(mime_type=info.mime_type or part.mime_type, uri=info.uri)
                finally:
                    self._shared.release(job_id, digest, token)
            if time.monotonic() > deadline:
                raise TransientJudgeError("timed out waiting for another worker's upload")
            time.sleep(_WAIT_POLL_S)

    def _known(self, job_id: str, digest: str) -> MediaPart | None:
        raw = self._shared.record(job_id, digest)
        if not raw:
            return None
        record = json.loads(raw)
        expires = record.get("expires_at")
        if expires is not None and expires - _EXPIRY_MARGIN_S < time.time():
            return None
        return MediaPart(mime_type=record["mime_type"], uri=record["uri"])

    def _upload(self, part: MediaPart, row_id: str, field: str, deadline: float) -> FileInfo:
        name = file_name(part)
        data, mime = part.data or b"", part.mime_type
        try:
            info = self._call(lambda: self._files.upload(data, mime, name), row_id, field)
        except _AlreadyThere:  # same bytes uploaded before (another job): use that file
            info = self._call(lambda: self._files.get(f"files/{name}"), row_id, field)
        polls = 0
        while info.state == "PROCESSING":
            if time.monotonic() > deadline:
                raise TransientJudgeError(f"the Files API is still processing {info.name}")
            time.sleep(min(_POLL_MAX_S, _POLL_S * 2**polls))
            polls += 1
            info = self._call(functools.partial(self._files.get, info.name), row_id, field)
        if info.state == "FAILED":
            raise InputError(
                row_id, field, f"the Files API could not process it: {info.error or 'FAILED'}"
            )
        if not info.uri:
            raise TransientJudgeError(f"the Files API returned no URI for {info.name}")
        return info

    def _call(self, call: _Call, row_id: str, field: str) -> FileInfo:
        """One Files API call with transient errors retried in-process, as judge calls are."""
        retrying = Retrying(
            stop=stop_after_attempt(self._settings.transient_attempts),
            wait=wait_random_exponential(multiplier=0.5, max=self._settings.transient_max_wait_s),
            retry=retry_if_exception(retried_in_process),
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                try:
                    return call()
                except genai_errors.APIError as exc:
                    raise _mapped(exc, row_id, field) from None
                except _TRANSPORT_ERRORS as exc:
                    raise TransientJudgeError(
                        f"Files API transport error: {type(exc).__name__}: {exc}"
                    ) from None
        raise AssertionError("unreachable: tenacity reraises")  # pragma: no cover


class _Call(Protocol):
    def __call__(self) -> FileInfo: ...


class _AlreadyThere(JudgeError):
    """The name is taken: these very bytes were uploaded before."""


def _mapped(exc: genai_errors.APIError, row_id: str, field: str) -> Exception:
    if exc.code == 409 or exc.status == "ALREADY_EXISTS":
        return _AlreadyThere(str(exc))
    if exc.code in _REFUSED:
        return InputError(row_id, field, f"the Files API refused it: {exc.code} {exc.message}")
    error = map_api_error(exc)
    error.message = f"Files API: {error.message}"
    error.args = (error.message,)
    return error


# ---- the media hook the runtime calls --------------------------------------------------------


class _Memo:
    """Per process: what a (job, media) resolved to, so a row's units skip the digest. Entries
    are short-lived, so a file re-uploaded near its expiry is picked up from Redis."""

    def __init__(self, size: int = 512, ttl_s: float = 600.0) -> None:
        self._items: OrderedDict[Hashable, tuple[float, MediaPart]] = OrderedDict()
        self._size = size
        self._ttl_s = ttl_s
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> MediaPart | None:
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] < time.monotonic() - self._ttl_s:
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: Hashable, part: MediaPart) -> None:
        with self._lock:
            self._items[key] = (time.monotonic(), part)
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


_memo = _Memo()
_services: dict[int, GenaiFiles] = {}
_services_lock = threading.Lock()


def _service(settings: Settings) -> GenaiFiles:
    """One Files client per process (created lazily, after a prefork fork)."""
    with _services_lock:
        if id(settings) not in _services:
            _services[id(settings)] = GenaiFiles(settings)
        return _services[id(settings)]


def job_roots(config: JobConfig) -> list[str]:
    """The folders a job's local media may come from: those given at submit, else (jobs from
    before they were recorded) its dataset's folder."""
    return list(config.data_roots) or [os.path.dirname(config.dataset)]


def media_rules(
    settings: Settings,
    roots: list[str] | tuple[str, ...],
    gcs_media: Iterable[str] | None = None,
) -> MediaRules:
    """What a job may read on this worker: its own roots, bounded by the worker's
    EVALQ_DATA_ROOTS, Cloud Storage objects in the places of EVALQ_GCS_MEDIA (the submitter's
    `gcs_media` wins over its setting; a worker passes none, so its own setting bounds every
    job), and the worker's network and size rules."""
    places = settings.gcs_media if gcs_media is None else gcs_media
    return MediaRules(
        roots=DataRoots.of(roots, settings.data_roots),
        gcs=GcsMedia.of(places),
        network=NetworkRules(settings.media_allow_private, settings.media_allow_networks),
        max_bytes=settings.media_max_bytes,
        timeout_s=settings.media_timeout_s,
        deadline_s=settings.media_fetch_deadline_s,
        max_redirects=settings.media_max_redirects,
    )


def deliver_media(
    settings: Settings,
    cache: MediaCache,
    shared: Shared,
    job_id: str,
    row_id: str,
    field: str,
    ref: MediaRef,
    allowed: tuple[str, ...],
    rules: MediaRules,
    files: FileService | None = None,
) -> MediaPart:
    """The MediaPart a judge request carries for this row's field; raises InputError naming
    the row and field for media that is missing, unreadable, too big, of the wrong type,
    does not decode, or is in a place this job or backend may not read. gs:// URIs pass
    through on Vertex AI, which reads Cloud Storage itself; the Gemini API can't, so there they
    are an input_error (`refusal`'s rule, which the submitter applies first)."""
    if ref.kind == "file_uri":
        part = load_media(ref, row_id, field, rules, allowed)
        if why := refusal(ref, None, settings.use_vertexai, settings.inline_max_bytes):
            raise InputError(row_id, field, why)
        return part
    memo_key = (job_id, ref, allowed, settings.inline_max_bytes, rules)
    if (done := _memo.get(memo_key)) is not None:
        return done
    # Keyed by the rules too: bytes one job may read are not handed to a job that may not.
    part = cache.get_or_load(
        (ref, allowed, rules), lambda: load_media(ref, row_id, field, rules, allowed)
    )
    size = len(part.data or b"")
    if part.data is None or size <= settings.inline_max_bytes:
        return part
    if why := refusal(ref, size, settings.use_vertexai, settings.inline_max_bytes):
        raise InputError(row_id, field, why)  # the submitter refuses what it can size too
    uploader = Uploader(settings, files or _service(settings), shared)
    delivered = uploader.deliver(part, job_id, row_id, field)
    _memo.put(memo_key, delivered)
    return delivered
