"""The fake Vertex AI batch prediction jobs, reading requests from and writing results to Cloud
Storage (a real server, the emulator in the tests); docs/architecture/fake-server.md says what
is written where."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import ClassVar

from google.api_core import exceptions as gcs_errors
from google.cloud import storage

from evalq.fake_gemini.batches import (
    Answered,
    BatchCounters,
    BatchLife,
    jsonl_requests,
    request_text,
)
from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.realism import UNKNOWN_LINE_FIELD, UNKNOWN_RESPONSE_FIELD, BatchRealism
from evalq.fake_gemini.rest import InvalidArgument, break_json, rfc3339, wire_mapping
from evalq.fake_gemini.script import Script

logger = logging.getLogger(__name__)
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED", "PARTIALLY_SUCCEEDED"})
_POLL_S = 0.02
# The job's own error when it ends FAILED or EXPIRED: a google.rpc.Status (gRPC code).
_ENDINGS = {
    "EXPIRED": {"code": 4, "message": "The batch prediction job expired before it finished."},
    "FAILED": {"code": 13, "message": "The batch prediction job failed."},
}

# What answers one request: (model id, GenerateContentRequest body) -> its answer.
Answer = Callable[[str, JsonObject], Awaitable[Answered]]


class VertexBatchError(Exception):
    """A refusal, in Vertex's error shape (google.rpc.Status over HTTP)."""

    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message

    def body(self) -> JsonObject:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


def _gs(uri: str, what: str) -> tuple[str, str]:
    if not uri.startswith("gs://") or len(uri) <= 5:
        raise InvalidArgument(f"{what} must be a gs:// URI, got {uri!r}")
    bucket, _, path = uri[5:].partition("/")
    return bucket, path


def storage_client() -> storage.Client:
    """The emulator (or real Cloud Storage) named by STORAGE_EMULATOR_HOST."""
    return storage.Client(project="fake-gemini")


@dataclass
class VertexJob(BatchLife):
    terminal: ClassVar[frozenset[str]] = TERMINAL
    id: str
    parent: str  # projects/{p}/locations/{l}
    model: str  # as given: publishers/google/models/{m}
    display_name: str
    input_uri: str
    output_prefix: str
    body: JsonObject  # the create body, echoed (inputConfig, outputConfig, labels)
    started: float | None = None
    requests: int = 0
    succeeded: int = 0
    failed: int = 0
    output_dir: str | None = None
    cancel_asked: bool = False

    @property
    def name(self) -> str:
        return f"{self.parent}/batchPredictionJobs/{self.id}"

    @property
    def model_id(self) -> str:
        return self.model.rsplit("/", 1)[-1]

    def move(self, state: str) -> None:
        super().move(state)
        if state == "RUNNING":
            self.started = self.updated

    def resource(self) -> JsonObject:
        """The BatchPredictionJob as the REST reference shows it (int64 counts as strings)."""
        job: JsonObject = {
            "name": self.name,
            "displayName": self.display_name,
            "model": self.model,
            "inputConfig": self.body.get("inputConfig"),
            "outputConfig": self.body.get("outputConfig"),
            "state": f"JOB_STATE_{self.state}",
            "createTime": rfc3339(self.created),
            "updateTime": rfc3339(self.updated),
        }
        if self.started is not None:
            job["startTime"] = rfc3339(self.started)
        if self.ended is not None:
            job["endTime"] = rfc3339(self.ended)
        if self.state in TERMINAL or self.state == "RUNNING":
            done = self.succeeded + self.failed
            job["completionStats"] = {
                "successfulCount": str(self.succeeded),
                "failedCount": str(self.failed),
                "incompleteCount": str(max(0, self.requests - done)),
            }
        if self.output_dir is not None and not self.output_withheld():
            job["outputInfo"] = {"gcsOutputDirectory": self.output_dir}
        if self.error is not None:
            job["error"] = self.error
        if self.realism.unknown_fields:
            job["modelVersionId"] = "1"
        return job


@dataclass
class VertexCounters(BatchCounters):
    """What GET /stats/vertex-batches shows: the Gemini API batches' counters, and GETs that
    found a job's output attached, since POST /vertex-batches/attach-output."""

    gets_after_output: int = 0

    def snapshot(self) -> JsonObject:
        return {**super().snapshot(), "gets_after_output": self.gets_after_output}


def _line(job: VertexJob, request: JsonObject, answered: Answered | None, at: float) -> JsonObject:
    """One results line: the request as it came (less its labels with no_metadata), and its
    response, or a `status` text saying why it failed."""
    realism = job.realism
    echoed = dict(request)
    if realism.no_metadata:
        echoed.pop("labels", None)
    line: JsonObject = {"status": "", "processed_time": rfc3339(at), "request": echoed}
    if answered is None:
        line["status"] = "Internal Server Error: the request was not run"
    elif answered.status == 200:
        response = answered.body
        if realism.unknown_fields and not answered.recorded:
            response = {**response, UNKNOWN_RESPONSE_FIELD: {"servedBy": "evalq-fake-gemini"}}
        line["response"] = response
    else:
        error = answered.body.get("error") if not answered.recorded else answered.body
        reason = _reason(answered.status)
        line["status"] = f"{reason}: {json.dumps({'error': error}, separators=(',', ':'))}"
    if realism.unknown_fields:
        line[UNKNOWN_LINE_FIELD] = {"queuedDuration": "0.5s"}
    return line


class VertexJobStore:
    """Every job the server knows, per the shared batch delay and realism (BatchStore's)."""

    def __init__(self) -> None:
        self.jobs: dict[str, VertexJob] = {}
        self.counters = VertexCounters()
        self._next = 1000

    def create(
        self,
        parent: str,
        payload: object,
        realism: BatchRealism,
        delays: Callable[[], tuple[float, float]],
        script: Script,
        answer: Answer,
    ) -> VertexJob:
        body = wire_mapping(payload, "request body")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise InvalidArgument("BatchPredictionJob.model is required")
        source = wire_mapping(body.get("inputConfig"), "inputConfig")
        if source.get("instancesFormat") != "jsonl":
            raise InvalidArgument("inputConfig.instancesFormat must be jsonl for Cloud Storage")
        uris = wire_mapping(source.get("gcsSource"), "inputConfig.gcsSource").get("uris")
        if not isinstance(uris, list) or len(uris) != 1 or not isinstance(uris[0], str):
            raise InvalidArgument("inputConfig.gcsSource.uris must hold one gs:// URI")
        _gs(uris[0], "inputConfig.gcsSource.uris[0]")
        dest = wire_mapping(body.get("outputConfig"), "outputConfig")
        prefix = wire_mapping(dest.get("gcsDestination"), "outputConfig.gcsDestination").get(
            "outputUriPrefix"
        )
        if not isinstance(prefix, str):
            raise InvalidArgument("outputConfig.gcsDestination.outputUriPrefix is required")
        _gs(prefix, "outputConfig.gcsDestination.outputUriPrefix")
        self._next += 1
        job = VertexJob(
            id=str(self._next),
            parent=parent,
            model=model,
            display_name=str(body.get("displayName") or ""),
            input_uri=uris[0],
            output_prefix=prefix.rstrip("/"),
            body=dict(body),
            realism=realism,
        )
        self.jobs[job.id] = job
        self.counters.created += 1
        work = self._work(job, delays, script, answer)
        job.task = asyncio.get_running_loop().create_task(self._guarded(job, work))
        return job

    def get(self, parent: str, job_id: str) -> VertexJob:
        job = self.jobs.get(job_id)
        if job is None or job.parent != parent:
            raise VertexBatchError(
                404,
                "NOT_FOUND",
                f"BatchPredictionJob {parent}/batchPredictionJobs/{job_id} does not exist.",
            )
        return job

    def read(self, parent: str, job_id: str) -> JsonObject:
        job = self.get(parent, job_id)
        withheld = job.output_withheld()
        body = job.resource()
        if withheld:
            job.gets_without_output += 1
            self.counters.output_missing_gets += 1
        elif "outputInfo" in body:
            self.counters.gets_after_output += 1
        return body

    def page(self, parent: str, size: int, token: str | None) -> JsonObject:
        """Newest first; the page token is the next index."""
        ordered = [j for j in reversed(self.jobs.values()) if j.parent == parent]
        start = int(token) if token and token.isdigit() else 0
        size = size if size > 0 else 100
        found: JsonObject = {
            "batchPredictionJobs": [j.resource() for j in ordered[start : start + size]]
        }
        if start + size < len(ordered):
            found["nextPageToken"] = str(start + size)
        return found

    def cancel(self, parent: str, job_id: str) -> None:
        """Asynchronous, as documented: CANCELLING now, CANCELLED once the rows done so far
        are written out."""
        job = self.get(parent, job_id)
        if job.state not in TERMINAL and job.state != "CANCELLING":
            job.cancel_asked = True
            job.move("CANCELLING")
            if job.task is None or job.task.done():
                self._end(job, "CANCELLED")

    def delete(self, parent: str, job_id: str) -> None:
        job = self.get(parent, job_id)
        if job.state not in TERMINAL:
            raise VertexBatchError(
                400, "FAILED_PRECONDITION", f"BatchPredictionJob {job.name} is not finished."
            )
        del self.jobs[job.id]

    def _end(self, job: VertexJob, state: str) -> None:
        job.move(state)
        self.counters.ended[state] += 1
        if state in _ENDINGS:
            job.error = dict(_ENDINGS[state])

    async def _wait(self, job: VertexJob, delays: Callable[[], tuple[float, float]]) -> bool:
        while True:
            pending_s, running_s = delays()
            wait = pending_s if job.state == "PENDING" else running_s
            if job.cancel_asked or job.state in TERMINAL:
                return False
            if time.monotonic() - job.state_since >= wait:
                return True
            await asyncio.sleep(_POLL_S)

    async def _guarded(self, job: VertexJob, work: Awaitable[None]) -> None:
        """A job whose work raised ends FAILED, as a real one would, rather than stay RUNNING."""
        try:
            await work
        except Exception:
            logger.exception("fake-gemini: batch prediction job %s failed", job.name)
            if job.state not in TERMINAL:
                self._end(job, "FAILED")

    async def _work(
        self,
        job: VertexJob,
        delays: Callable[[], tuple[float, float]],
        script: Script,
        answer: Answer,
    ) -> None:
        if not await self._wait(job, delays):
            if job.cancel_asked:
                self._end(job, "CANCELLED")
            return
        job.move("RUNNING")
        try:
            requests = await asyncio.to_thread(_read_requests, job.input_uri)
        except (gcs_errors.GoogleAPICallError, InvalidArgument) as exc:
            job.error = {"code": 3, "message": f"cannot read {job.input_uri}: {exc}"}
            self._end(job, "FAILED")
            return
        job.requests = len(requests)
        self.counters.requests += len(requests)
        if not await self._wait(job, delays):
            if job.cancel_asked:
                await self._write_and_end(job, [], "CANCELLED")
            return
        ending = script.take_batch_end(request_text(r) for r in requests)
        if ending is not None and ending.batch_state is not None:
            self._end(job, ending.batch_state)
            return
        lines: list[JsonObject] = []
        for request in requests:
            if job.cancel_asked:  # what ran is exported, as a cancelled job's is
                await self._write_and_end(job, lines, "CANCELLED")
                return
            answered = await answer(job.model_id, request)
            lines.append(_line(job, request, answered, time.time()))
            job.succeeded += answered.status == 200
            job.failed += answered.status != 200
            job.updated = time.time()
            await asyncio.sleep(0)
            # Hold here while RUNNING is held (a test kills a worker meanwhile).
            while not job.cancel_asked and delays()[1] > time.monotonic() - job.state_since:
                await asyncio.sleep(_POLL_S)
        await self._write_and_end(job, lines, "SUCCEEDED")

    async def _write_and_end(self, job: VertexJob, lines: list[JsonObject], state: str) -> None:
        if lines or state == "SUCCEEDED":
            job.output_dir = await asyncio.to_thread(_write_results, job, lines)
        self._end(job, state)


def _read_requests(uri: str) -> list[JsonObject]:
    bucket, path = _gs(uri, "the input")
    data = storage_client().bucket(bucket).blob(path).download_as_bytes()
    return [request for _, request in jsonl_requests(data, uri)]


def _write_results(job: VertexJob, lines: list[JsonObject]) -> str:
    """The results, written to `{prefix}/prediction-model-<time>/predictions*.jsonl`."""
    realism = job.realism
    if realism.reorder:
        lines = list(reversed(lines))
    text = [json.dumps(line, separators=(",", ":")) for line in lines]
    if realism.bad_line and text:
        broken = 1 if len(text) > 1 else 0
        text[broken] = break_json(text[broken])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{time.time_ns() % 10**6:06d}Z"
    folder = f"{job.output_prefix}/prediction-model-{stamp}"
    bucket_name, path = _gs(folder, "the output")
    bucket = storage_client().bucket(bucket_name)
    parts = [text]
    if realism.split_output and len(text) > 1:
        half = len(text) // 2
        parts = [text[:half], text[half:]]
    for n, part in enumerate(parts, start=1):
        name = "predictions.jsonl" if len(parts) == 1 else f"predictions_{n:05d}.jsonl"
        data = "".join(line + "\n" for line in part)
        bucket.blob(f"{path}/{name}").upload_from_string(data, content_type="application/jsonl")
    return folder


__all__ = ["VertexBatchError", "VertexJob", "VertexJobStore"]


def _reason(status: int) -> str:
    """The HTTP reason phrase a failed line's `status` text starts with."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
