"""Reading the Batch API tolerantly: fields evalq does not use are ignored and fields of an
unexpected shape are kept, because a reader that raises would leave a job polling forever."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from google import genai

from evalq.worker.batch.wire import error_result

_KEY_RE = re.compile(r'"key"\s*:\s*"((?:[^"\\]|\\.)*)"')
_STATE_PREFIXES = ("BATCH_STATE_", "JOB_STATE_")


@dataclass(frozen=True)
class BatchView:
    """What evalq reads of one batch: its state, counts, where its results are, and the
    server's error if it failed."""

    name: str
    display_name: str
    state: str  # PENDING, RUNNING, SUCCEEDED, ... (no prefix)
    succeeded: int
    failed: int
    responses_file: str | None
    inlined: list[Any] | None  # raw inlined responses, in whatever order they came
    error: str | None
    # Vertex AI: the gs:// folder the job wrote its predictions*.jsonl files to.
    output_dir: str | None = None

    @property
    def has_output(self) -> bool:
        return (
            self.responses_file is not None
            or self.inlined is not None
            or self.output_dir is not None
        )


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0  # proto3 JSON leaves a zero count out; a garbled one reads as none


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _output(body: dict[str, Any]) -> tuple[str | None, list[Any] | None]:
    """The results' place: `metadata.output` (the GenerateContentBatch) or the Operation's
    `response`; a responsesFile name, or inlinedResponses (nested once more on the wire)."""
    for holder in (_dict(_dict(body.get("metadata")).get("output")), _dict(body.get("response"))):
        file_name = holder.get("responsesFile")
        if isinstance(file_name, str) and file_name:
            return file_name, None
        inlined = holder.get("inlinedResponses")
        if isinstance(inlined, dict):
            inlined = inlined.get("inlinedResponses")
        if isinstance(inlined, list):
            return None, inlined
    return None, None


def view_from_body(body: dict[str, Any]) -> BatchView:
    """A batch GET (an Operation whose metadata is the GenerateContentBatch) as a BatchView."""
    meta = _dict(body.get("metadata"))
    state = str(meta.get("state") or body.get("state") or "STATE_UNSPECIFIED")
    for prefix in _STATE_PREFIXES:
        state = state.removeprefix(prefix)
    stats = _dict(meta.get("batchStats"))
    responses_file, inlined = _output(body)
    error = body.get("error") or meta.get("error")
    return BatchView(
        name=str(body.get("name") or meta.get("name") or ""),
        display_name=str(meta.get("displayName") or ""),
        state=state,
        succeeded=_int(stats.get("successfulRequestCount")),
        failed=_int(stats.get("failedRequestCount")),
        responses_file=responses_file,
        inlined=inlined,
        error=None if not error else json.dumps(error_result(error)),
    )


def get_json(client: genai.Client, path: str) -> dict[str, Any]:
    """A GET through the SDK's own HTTP client (Gemini API or Vertex: auth, base URL and
    transport retries stay the SDK's), its body as raw JSON: google-genai validates a batch
    strictly, and a per-request error whose `details` hold google.rpc objects fails its
    `batches.get` with a ValidationError."""
    response = client._api_client.request("get", path, {}, None)
    body = json.loads(response.body) if response.body else {}
    return body if isinstance(body, dict) else {}


def listed(
    client: genai.Client, resource: str, fields: tuple[str, ...], max_items: int
) -> Iterator[dict[str, Any]]:
    """A listing's items page by page, until a page ends past max_items or none follows: both
    batch services page alike, each item under the first of ``fields`` a page holds."""
    token, seen = "", 0
    while seen < max_items:
        query = {"pageSize": 100, **({"pageToken": token} if token else {})}
        page = get_json(client, f"{resource}?{urlencode(query)}")
        items: list[Any] = next((page[name] for name in fields if page.get(name)), [])
        for item in items:
            if isinstance(item, dict):
                seen += 1
                yield item
        token = str(page.get("nextPageToken") or "")
        if not token:
            return


def get_batch(client: genai.Client, name: str) -> BatchView:
    return view_from_body(get_json(client, name))


def list_batches(client: genai.Client, max_items: int) -> Iterator[BatchView]:
    """The account's batches, newest first, as far as max_items."""
    for operation in listed(client, "batches", ("operations", "batches"), max_items):
        yield view_from_body(operation)


@dataclass(frozen=True)
class ResultEntry:
    """One result of a batch: its key (None when the API did not echo one), and either the
    raw response, a stored error, or why the entry could not be read."""

    number: int  # its line in the results file, or its place among inlined responses (from 1)
    key: str | None
    result: dict[str, Any] | None  # {"response": {...}} or {"error": {...}}
    problem: str | None = None  # unreadable: the result is None


def _entry(number: int, item: Any, key: str | None) -> ResultEntry:
    if not isinstance(item, dict):
        return ResultEntry(number, key, None, f"entry {number} is not a JSON object")
    response, error = item.get("response"), item.get("error") or item.get("status")
    if isinstance(response, dict):
        return ResultEntry(number, key, {"response": response})
    if error:
        return ResultEntry(number, key, {"error": error_result(error)})
    return ResultEntry(number, key, None, f"entry {number} has neither a response nor an error")


def file_results(lines: Iterable[str]) -> Iterator[ResultEntry]:
    """A results file's lines, `{"key": ..., "response"|"error": ...}` each. A line that is
    not JSON becomes a problem entry, with its key when the text still shows one."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            found = _KEY_RE.search(line)
            key = json.loads(f'"{found.group(1)}"') if found else None
            yield ResultEntry(number, key, None, f"results line {number} is not JSON: {exc}")
            continue
        key = item.get("key") if isinstance(item, dict) else None
        yield _entry(number, item, str(key) if key not in (None, "") else None)


def inline_results(items: Iterable[Any]) -> Iterator[ResultEntry]:
    """Inlined responses, matched by the `metadata.key` each request was sent with; the API
    may return them in another order and without metadata, so position means nothing."""
    for number, item in enumerate(items, start=1):
        metadata = _dict(item.get("metadata")) if isinstance(item, dict) else {}
        key = metadata.get("key")
        yield _entry(number, item, str(key) if key not in (None, "") else None)


class TooLarge(Exception):
    """A results download passed its size bound."""


class OutputElsewhere(Exception):
    """The batch reports its output somewhere other than the folder evalq named for it: never
    read (the job pauses with this reason)."""


class BoundedSink(io.RawIOBase):
    """A file the SDK streams a download into, refusing to grow past max_bytes: a results file
    is read from disk line by line, but a runaway one must not fill the disk either."""

    def __init__(self, path: Path, max_bytes: int) -> None:
        super().__init__()
        self._file = path.open("wb")
        self._max_bytes = max_bytes
        self.written = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = len(data)
        if self.written + size > self._max_bytes:
            raise TooLarge(f"the results file is over {self._max_bytes} bytes")
        self.written += size
        return self._file.write(data)

    def close(self) -> None:
        self._file.close()
        super().close()
