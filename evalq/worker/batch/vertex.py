"""Batch mode on Vertex AI: batch prediction jobs that read their requests from Cloud Storage
and write their results there; docs/guides/batch-mode.md says what is written where and what
is read."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from google import genai
from google.genai import _common, types
from google.genai import models as genai_models

from evalq.worker.batch import gcs
from evalq.worker.batch.gcs import GcsPath, StorageSetupError
from evalq.worker.batch.reading import (
    BatchView,
    OutputElsewhere,
    ResultEntry,
    TooLarge,
    get_json,
    listed,
)
from evalq.worker.batch.wire import HTTP_NAMES, error_result

if TYPE_CHECKING:
    from google.cloud import storage  # loaded by evalq.worker.batch.gcs when first used

KEY_LABELS = ("evalq_key_a", "evalq_key_b")
_LABEL_RE = {name: re.compile(rf'"{name}"\s*:\s*"([0-9a-zA-Z_-]*)"') for name in KEY_LABELS}
# Vertex's JobState, less the prefix, as the ledger knows states (evalq.worker.batch.ledger):
# queued is pending; partly succeeded has output to read, line by line, like success.
_STATES = {"QUEUED": "PENDING", "PARTIALLY_SUCCEEDED": "SUCCEEDED"}
# The HTTP reason phrases a failed line's `status` text may start with, to their codes.
_REASONS = {
    HTTPStatus(code).phrase.lower(): code for code in (400, 401, 403, 404, 429, 500, 503, 504)
}


def label_key(digest: str) -> dict[str, str]:
    """The call digest as two request labels, which Vertex echoes back with each result (a
    label value is at most 63 characters, a digest 64); Vertex does not promise the order."""
    half = len(digest) // 2
    return {KEY_LABELS[0]: digest[:half], KEY_LABELS[1]: digest[half:]}


def key_from_labels(labels: Any) -> str | None:
    if not isinstance(labels, dict):
        return None
    parts = [labels.get(name) for name in KEY_LABELS]
    if not all(isinstance(p, str) and p for p in parts):
        return None
    return "".join(str(p) for p in parts)


def request_line(client: genai.Client, inlined: types.InlinedRequest) -> str:
    """`{"request": ...}` in Vertex's REST form, built with google-genai's own converter for
    Vertex (what the SDK would send online), keyed by labels (which Vertex echoes back inside
    the request of every results line)."""
    key = str((inlined.metadata or {}).get("key") or "")
    config = (inlined.config or types.GenerateContentConfig()).model_copy(
        update={"labels": label_key(key)}
    )
    params = types._GenerateContentParameters(
        model=inlined.model, contents=inlined.contents, config=config
    )
    wire = genai_models._GenerateContentParameters_to_vertex(client._api_client, params)
    wire.pop("_url", None)
    wire = _common.encode_unserializable_types(_common.convert_to_dict(wire))
    return json.dumps({"request": wire}, separators=(",", ":"))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def view_from_job(body: dict[str, Any]) -> BatchView:
    """A BatchPredictionJob as a BatchView; its output is the folder the job wrote."""
    state = str(body.get("state") or "JOB_STATE_UNSPECIFIED").removeprefix("JOB_STATE_")
    stats = body.get("completionStats") if isinstance(body.get("completionStats"), dict) else {}
    info = body.get("outputInfo") if isinstance(body.get("outputInfo"), dict) else {}
    folder = info.get("gcsOutputDirectory") if isinstance(info, dict) else None
    error = body.get("error")
    return BatchView(
        name=str(body.get("name") or ""),
        display_name=str(body.get("displayName") or ""),
        state=_STATES.get(state, state),
        succeeded=_int((stats or {}).get("successfulCount")),
        failed=_int((stats or {}).get("failedCount")),
        responses_file=None,
        inlined=None,
        error=None if not error else json.dumps(error_result(error)),
        output_dir=folder if isinstance(folder, str) and folder else None,
    )


def status_error(text: str) -> dict[str, Any]:
    """A failed line's `status` text as a stored error. Its form is not documented: an error
    object in JSON is read as one, a leading HTTP reason phrase gives the code, and anything
    else is kept as the message (and is not retried: nothing says it is transient)."""
    start = text.find("{")
    if start >= 0:
        try:
            found = json.loads(text[start:])
        except ValueError:
            found = None
        if isinstance(found, dict):
            inner = found.get("error")
            return error_result(inner if isinstance(inner, dict) else found)
    head = text.split(":", 1)[0].strip().lower()
    code = _REASONS.get(head)
    return {"code": code, "status": HTTP_NAMES.get(code) if code else None, "message": text}


def _entry(number: int, line: str) -> ResultEntry:
    try:
        item = json.loads(line)
    except ValueError as exc:
        found = [_LABEL_RE[name].search(line) for name in KEY_LABELS]
        key = "".join(m.group(1) for m in found if m) if all(found) else None
        return ResultEntry(number, key or None, None, f"results line {number} is not JSON: {exc}")
    if not isinstance(item, dict):
        return ResultEntry(number, None, None, f"results line {number} is not a JSON object")
    request = item.get("request")
    key = key_from_labels(request.get("labels") if isinstance(request, dict) else None)
    response, status = item.get("response"), item.get("status")
    if isinstance(response, dict) and response and not status:
        return ResultEntry(number, key, {"response": response})
    if isinstance(status, str) and status:
        return ResultEntry(number, key, {"error": status_error(status)})
    if isinstance(status, dict):  # a google.rpc.Status, should it come as one
        return ResultEntry(number, key, {"error": error_result(status)})
    return ResultEntry(number, key, None, f"results line {number} has neither response nor status")


def line_results(lines: Iterable[str], start: int = 1) -> Iterator[ResultEntry]:
    for number, line in enumerate(lines, start=start):
        if line.strip():
            yield _entry(number, line)


class VertexBackend:
    """Vertex AI's batchPredictionJobs, with the requests and results in Cloud Storage under
    the job's prefix (EVALQ_VERTEX_BATCH_PREFIX or --vertex-batch-prefix)."""

    def __init__(
        self,
        client: genai.Client,
        bucket_client: Callable[[], storage.Client],
        prefix: GcsPath | None,
    ) -> None:
        self.client = client
        self._storage = bucket_client  # made when first needed: polls and cancels need none
        self.prefix = prefix

    @property
    def storage(self) -> storage.Client:
        return self._storage()

    def request_line(self, inlined: types.InlinedRequest) -> str:
        return request_line(self.client, inlined)

    def folder(self, display_name: str) -> GcsPath:
        if self.prefix is None:
            raise StorageSetupError(
                f"Vertex AI batch mode needs a Cloud Storage prefix: set {gcs.PREFIX_SETTING} "
                f"or pass {gcs.PREFIX_FLAG}"
            )
        return self.prefix.join(display_name)

    def create(self, model: str, requests: Any, display_name: str) -> tuple[str, str]:
        folder = self.folder(display_name)
        source = folder.join("requests.jsonl")
        gcs.upload(self.storage, source, requests)
        config = types.CreateBatchJobConfig(display_name=display_name, dest=folder.uri + "/")
        made = self.client.batches.create(model=model, src=source.uri, config=config)
        state = made.state.value if made.state is not None else "JOB_STATE_UNSPECIFIED"
        state = state.removeprefix("JOB_STATE_")
        return str(made.name), _STATES.get(state, state)

    def get(self, name: str) -> BatchView:
        job_id = name.rsplit("/", 1)[-1]
        return view_from_job(get_json(self.client, f"batchPredictionJobs/{job_id}"))

    def list(self, max_items: int) -> Iterator[BatchView]:
        for job in listed(self.client, "batchPredictionJobs", ("batchPredictionJobs",), max_items):
            yield view_from_job(job)

    def _output(self, view: BatchView) -> tuple[GcsPath, gcs.OutputFolder]:
        """The folder the job reports its output in, which must lie in the batch's own folder
        (where evalq told it to write), and what it holds."""
        assert view.output_dir is not None
        try:
            folder = GcsPath.parse(view.output_dir, "the job's outputInfo.gcsOutputDirectory")
        except StorageSetupError as exc:
            raise OutputElsewhere(str(exc)) from None
        own = self.folder(view.display_name)
        if not folder.within(own) or folder.path == own.path:
            raise OutputElsewhere(
                f"the batch reports its output in {folder.uri}, outside the folder evalq named "
                f"for it ({own.uri}/): it is not read"
            )
        return folder, gcs.output_files(self.storage, folder)

    def results(self, view: BatchView, max_bytes: int) -> Iterator[ResultEntry]:
        """The results files Vertex writes in the job's output folder (predictions.jsonl or
        its shards, nothing else), streamed line by line; line numbers run on across files, so
        a problem names one place."""
        folder, output = self._output(view)
        total = sum(f.size for f in output.results)
        if total > max_bytes:
            raise TooLarge(f"the results files total {total} bytes, over {max_bytes}")
        number = 1
        for found in output.results:
            for entry in line_results(
                gcs.read_lines(self.storage, folder.bucket, found.name), number
            ):
                number = entry.number + 1
                yield entry

    def ignored_objects(self, view: BatchView) -> Sequence[str]:
        """Every other object in the job's output folder: never read, named in the status."""
        return self._output(view)[1].ignored

    def cancel(self, name: str) -> None:
        self.client.batches.cancel(name=name)
