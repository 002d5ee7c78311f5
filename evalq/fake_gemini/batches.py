"""The fake Batch API (``models/{model}:batchGenerateContent`` and the ``batches`` resource) in
the wire shapes of Google's Batch API documentation; the realism switches
(evalq.fake_gemini.realism) reshape them the way the real service has been seen to."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evalq.fake_gemini.files import FilesError, FileStore
from evalq.fake_gemini.protocol import JsonObject
from evalq.fake_gemini.realism import UNKNOWN_LINE_FIELD, UNKNOWN_RESPONSE_FIELD, BatchRealism
from evalq.fake_gemini.rest import InvalidArgument, break_json, rfc3339, wire_field, wire_mapping
from evalq.fake_gemini.script import Script

# Google's documented ceiling for a batch sent inline; above it, requests go in a JSONL file.
INLINE_LIMIT_BYTES = 20 * 1024 * 1024
_METADATA_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput"
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED"})
_POLL_S = 0.02  # how often a waiting batch looks at the (changeable) delay
_ERRORS = {
    "EXPIRED": (504, "DEADLINE_EXCEEDED", "The batch expired before all requests were run."),
    "FAILED": (500, "INTERNAL", "The batch failed."),
}


@dataclass(frozen=True)
class Answered:
    """One request answered as generateContent would answer it. A recorded body (a script
    rule's ``body``) is replayed as it is: the realism switches reshape only the fake's own."""

    status: int
    body: JsonObject
    recorded: bool = False


# What answers one request: (model, GenerateContentRequest body) -> its answer.
Answer = Callable[[str, JsonObject], Awaitable[Answered]]


class BatchError(FilesError):
    """A refusal of the batches API: the same error body as the Files API's."""


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: its body, and the key (file) or metadata (inline) it came with."""

    body: JsonObject
    key: str | None = None
    metadata: JsonObject | None = None


@dataclass(kw_only=True)
class BatchLife:
    """A batch's state and clocks, as both batch APIs keep them (a Gemini API batch here, a
    Vertex batch prediction job in evalq.fake_gemini.vertex_batches): wall-clock stamps for the
    resource, ``state_since`` on the monotonic clock for the delays, and the task that runs it."""

    terminal: ClassVar[frozenset[str]] = TERMINAL
    realism: BatchRealism = field(default_factory=BatchRealism)
    created: float = field(default_factory=time.time)
    state: str = "PENDING"
    state_since: float = field(default_factory=time.monotonic)
    updated: float = field(default_factory=time.time)
    ended: float | None = None
    error: JsonObject | None = None
    task: asyncio.Task[None] | None = None
    gets_without_output: int = 0

    def move(self, state: str) -> None:
        self.state, self.state_since, self.updated = state, time.monotonic(), time.time()
        if state in self.terminal:
            self.ended = self.updated

    def output_withheld(self) -> bool:
        """late_output: SUCCEEDED is reported before the output is attached, as other clients
        found when they had to keep polling a finished batch."""
        late = self.realism.late_output
        if self.state != "SUCCEEDED" or late == 0:
            return False
        return late == -1 or self.gets_without_output < late


@dataclass
class FakeBatch(BatchLife):
    id: str
    model: str
    display_name: str
    requests: list[BatchRequest]
    from_file: bool
    answers: list[Answered] = field(default_factory=list)
    responses_file: str | None = None
    file_name: str | None = None

    @property
    def name(self) -> str:
        return f"batches/{self.id}"

    def stats(self) -> JsonObject:
        failed = sum(1 for a in self.answers if a.status != 200)
        done = len(self.answers)
        pending = 0 if self.state in TERMINAL else len(self.requests) - done
        counts = {
            "requestCount": len(self.requests),
            "successfulRequestCount": done - failed,
            "failedRequestCount": failed,
            "pendingRequestCount": pending,
        }
        # proto3 JSON leaves out an int64 that is zero; the documented examples print it.
        omit = self.realism.omit_zero_counts
        return {name: str(n) for name, n in counts.items() if n or not omit}

    def result(self, index: int, *, inline: bool) -> JsonObject:
        """One request's result as the output carries it: inline ``{response|error,
        metadata}``, or a results line ``{key, response|error}``."""
        answered, request = self.answers[index], self.requests[index]
        realism = self.realism
        result: JsonObject = {}
        if not inline and request.key is not None:
            result["key"] = request.key
        if answered.status == 200:
            response = answered.body
            if realism.unknown_fields and not answered.recorded:
                response = {**response, UNKNOWN_RESPONSE_FIELD: {"servedBy": "evalq-fake-gemini"}}
            result["response"] = response
        elif answered.recorded:
            result["error"] = answered.body
        else:
            result["error"] = realism.request_error(answered.body["error"], answered.status)
        if inline and not realism.no_metadata:
            if request.metadata is not None:
                result["metadata"] = request.metadata
            elif request.key is not None:  # a file's line answered inline keeps its key
                result["metadata"] = {"key": request.key}
        if realism.unknown_fields:
            result[UNKNOWN_LINE_FIELD] = {"queuedDuration": "0.5s", "servedDuration": "1.2s"}
        return result

    def results(self, *, inline: bool) -> list[JsonObject]:
        """Every result in input order, as documented, or reversed with reorder: the order
        seen in the field is not the input's, and reversal always differs from it."""
        order = range(len(self.answers))
        if self.realism.reorder:
            order = range(len(self.answers) - 1, -1, -1)
        return [self.result(i, inline=inline) for i in order]

    def results_file(self) -> bytes:
        lines = [json.dumps(r, separators=(",", ":")) for r in self.results(inline=False)]
        if self.realism.bad_line and lines:
            broken = 1 if len(lines) > 1 else 0
            lines[broken] = break_json(lines[broken])
        return "".join(line + "\n" for line in lines).encode()

    def output(self) -> JsonObject | None:
        if self.state != "SUCCEEDED" or self.output_withheld():
            return None
        if self.responses_file is not None:
            return {"responsesFile": self.responses_file}
        return {"inlinedResponses": {"inlinedResponses": self.results(inline=True)}}

    def operation(self) -> JsonObject:
        metadata: JsonObject = {
            "@type": _METADATA_TYPE,
            "model": f"models/{self.model}",
            "displayName": self.display_name,
        }
        if self.file_name is not None:  # listed batches show the file they were made from
            metadata["inputConfig"] = {"fileName": self.file_name}
        metadata.update(
            {
                "createTime": rfc3339(self.created),
                "updateTime": rfc3339(self.updated),
                "batchStats": self.stats(),
                "state": f"BATCH_STATE_{self.state}",
                "name": self.name,
            }
        )
        if self.ended is not None:
            metadata["endTime"] = rfc3339(self.ended)
        body: JsonObject = {"name": self.name, "metadata": metadata, "done": self.state in TERMINAL}
        if (output := self.output()) is not None:
            metadata["output"] = output
            body["response"] = {"@type": _OUTPUT_TYPE, **output}
        if self.error is not None:
            body["error"] = self.error
        return body


def _inline_requests(config: Mapping[str, Any]) -> list[BatchRequest]:
    holder = wire_mapping(config.get("requests"), "batch.inputConfig.requests")
    items = holder.get("requests")
    if not isinstance(items, list) or not items:
        raise InvalidArgument("batch.inputConfig.requests.requests must be a non-empty list")
    requests = []
    for index, item in enumerate(items):
        entry = wire_mapping(item, f"requests[{index}]")
        body = wire_mapping(entry.get("request"), f"requests[{index}].request")
        metadata = entry.get("metadata")
        requests.append(
            BatchRequest(
                dict(body), metadata=dict(metadata) if isinstance(metadata, dict) else None
            )
        )
    return requests


def jsonl_requests(data: bytes, source: str) -> Iterator[tuple[Mapping[str, Any], JsonObject]]:
    """Each line of a batch's JSONL input, as the line and the GenerateContentRequest in its
    ``request`` field; blank lines are skipped. Both batch APIs (the Gemini API's files, Vertex's
    Cloud Storage) take their requests in this form; a bad line is an InvalidArgument that names
    it as ``SOURCE line N``."""
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            decoded = json.loads(line)
        except ValueError as exc:
            raise InvalidArgument(f"{where} is not JSON: {exc}") from exc
        entry = wire_mapping(decoded, where)
        yield entry, dict(wire_mapping(entry.get("request"), f"{where}.request"))


def _file_requests(files: FileStore, file_name: str) -> list[BatchRequest]:
    """Each line a ``{"key": ..., "request": {...}}`` object, as the documentation shows."""
    data = bytes(files.get(file_name.removeprefix("files/")).data)
    requests = [
        BatchRequest(body, key=None if entry.get("key") is None else str(entry["key"]))
        for entry, body in jsonl_requests(data, file_name)
    ]
    if not requests:
        raise InvalidArgument(f"{file_name} holds no requests")
    return requests


def request_text(body: JsonObject) -> str:
    """The request's text parts as the script sees them (system instruction first): what a
    script rule's batch_state matches, in either batch API."""
    texts: list[str] = []
    sources = [wire_field(body, "systemInstruction"), *(body.get("contents") or [])]
    for content in sources:
        if isinstance(content, dict):
            for part in content.get("parts") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
    return "\n".join(texts)


@dataclass
class BatchCounters:
    """What /stats shows of batches: creations (what a crash test counts), requests, ends."""

    created: int = 0
    requests: int = 0
    ended: Counter[str] = field(default_factory=Counter)
    # GETs that found a batch SUCCEEDED with no output attached yet (late_output).
    output_missing_gets: int = 0

    def snapshot(self) -> JsonObject:
        return {
            "created": self.created,
            "requests": self.requests,
            "ended": dict(self.ended),
            "output_missing_gets": self.output_missing_gets,
        }


class BatchStore:
    """Every batch the server knows, how long each waits in PENDING and in RUNNING, and the
    realism switches new batches are created under."""

    def __init__(self, delay_s: float = 0.0, realism: BatchRealism | None = None) -> None:
        self.pending_s = delay_s
        self.running_s = delay_s
        self.realism = realism or BatchRealism()
        self.batches: OrderedDict[str, FakeBatch] = OrderedDict()
        self.counters = BatchCounters()

    def create(
        self,
        model: str,
        payload: object,
        files: FileStore,
        script: Script,
        answer: Answer,
        body_bytes: int,
    ) -> FakeBatch:
        batch = wire_mapping(wire_mapping(payload, "request body").get("batch"), "batch")
        config = wire_mapping(wire_field(batch, "inputConfig"), "batch.inputConfig")
        file_name = wire_field(config, "fileName")
        if file_name is not None:
            if not isinstance(file_name, str):
                raise InvalidArgument("batch.inputConfig.fileName must be a string")
            requests = _file_requests(files, file_name)
        else:
            if body_bytes > INLINE_LIMIT_BYTES:
                raise InvalidArgument(
                    f"inline batch requests total {body_bytes} bytes, over the "
                    f"{INLINE_LIMIT_BYTES} byte limit; send them as a JSONL file"
                )
            requests = _inline_requests(config)
        display = wire_field(batch, "displayName")
        fake = FakeBatch(
            id=uuid.uuid4().hex[:16],
            model=model,
            display_name=str(display or ""),
            requests=requests,
            from_file=file_name is not None,
            realism=self.realism,
            file_name=file_name,
        )
        self.batches[fake.id] = fake
        self.counters.created += 1
        self.counters.requests += len(requests)
        fake.task = asyncio.get_running_loop().create_task(self._run(fake, files, script, answer))
        return fake

    def get(self, batch_id: str) -> FakeBatch:
        batch = self.batches.get(batch_id)
        if batch is None:
            raise BatchError(404, "NOT_FOUND", f"Batch batches/{batch_id} not found.")
        return batch

    def get_operation(self, batch_id: str) -> JsonObject:
        """What ``batches.get`` answers; each answer that withholds a finished batch's output
        counts towards late_output and in /stats."""
        batch = self.get(batch_id)
        withheld = batch.output_withheld()
        body = batch.operation()
        if withheld:
            batch.gets_without_output += 1
            self.counters.output_missing_gets += 1
        return body

    def page(self, size: int, token: str | None) -> tuple[list[FakeBatch], str | None]:
        """Newest first, as the API lists them; the page token is the next index."""
        ordered = list(reversed(self.batches.values()))
        start = int(token) if token and token.isdigit() else 0
        size = size if size > 0 else 50
        page = ordered[start : start + size]
        more = start + size < len(ordered)
        return page, str(start + size) if more else None

    def cancel(self, batch_id: str) -> None:
        batch = self.get(batch_id)
        if batch.state not in TERMINAL:
            self._end(batch, "CANCELLED")

    def delete(self, batch_id: str) -> None:
        batch = self.batches.pop(self.get(batch_id).id)
        if batch.task is not None:
            batch.task.cancel()

    def reset(self) -> None:
        for batch in self.batches.values():
            if batch.task is not None:
                batch.task.cancel()
        self.batches.clear()
        self.counters = BatchCounters()

    def _end(self, batch: FakeBatch, state: str) -> None:
        batch.move(state)
        self.counters.ended[state] += 1
        if state in _ERRORS:
            batch.error = batch.realism.batch_error(*_ERRORS[state])

    async def _wait(self, batch: FakeBatch) -> bool:
        """Wait out the delay of the current state (read afresh each time, so a change
        reaches batches in flight); False if the batch ended meanwhile."""
        while time.monotonic() - batch.state_since < (
            self.pending_s if batch.state == "PENDING" else self.running_s
        ):
            if batch.state in TERMINAL:
                return False
            await asyncio.sleep(_POLL_S)
        return batch.state not in TERMINAL

    async def _run(
        self, batch: FakeBatch, files: FileStore, script: Script, answer: Answer
    ) -> None:
        if not await self._wait(batch):
            return
        batch.move("RUNNING")
        if not await self._wait(batch):
            return
        ending = script.take_batch_end(request_text(r.body) for r in batch.requests)
        if ending is not None and ending.batch_state is not None:
            self._end(batch, ending.batch_state)
            return
        for request in batch.requests:
            if batch.state in TERMINAL:  # cancelled while running: what ran is kept
                return
            batch.answers.append(await answer(batch.model, request.body))
            batch.updated = time.time()
            await asyncio.sleep(0)
        if batch.from_file and not batch.realism.file_answered_inline:
            name = f"files/batch-{batch.id}"
            files.put_generated(name, batch.results_file(), "application/jsonl")
            batch.responses_file = name
        self._end(batch, "SUCCEEDED")


__all__ = [
    "INLINE_LIMIT_BYTES",
    "Answered",
    "BatchError",
    "BatchStore",
    "FakeBatch",
    "FilesError",
]
