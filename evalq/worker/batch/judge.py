"""Judges for batch mode's sweep: a reply comes from the job's stored batch results, or the
request is collected for the next batch and the metric's work on that row waits for it."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from google.genai import types

from evalq.core.errors import CallCost, JudgeError, policy_of
from evalq.core.judge import Judge, JudgeReply, JudgeRequest, ReplyLogprobs
from evalq.core.metric import RowContext
from evalq.worker.batch.wire import describe, inlined_request
from evalq.worker.judges.call_cache import call_digest
from evalq.worker.judges.reply_reading import reply_from_response, unreadable_reply
from evalq.worker.lifecycle.outcomes import AwaitingReply
from evalq.worker.runtime import Runtime, row_context
from evalq.worker.store import RowRef, Store


class AwaitingBatch(AwaitingReply):
    """The reply is not in yet: the request is collected for the next batch. Not a JudgeError,
    so no metric turns it into a verdict; the sweep leaves the row for the next round."""


class BatchRequestFailed(JudgeError):
    """The request failed inside the batch (the batch's own error in the message): the unit
    is unscored with it, as online after the client's retries."""


@dataclass
class Group:
    """The requests of one model collected in one sweep, written to a JSONL file: each line
    carries its request's key, which the results file carries back."""

    model: str
    path: Path
    handle: IO[str]
    units: list[str] = field(default_factory=list)  # "{row}\t{digest}", in request order
    digests: set[str] = field(default_factory=set)


class Collector:
    """What a sweep found unanswered, per model, deduplicated by call digest."""

    def __init__(self, line: Callable[[types.InlinedRequest], str], max_output_tokens: int) -> None:
        self._line = (
            line  # the batch service's JSONL line for a request (evalq.worker.batch.backends)
        )
        self._max_output_tokens = max_output_tokens
        self._dir = tempfile.TemporaryDirectory(prefix="evalq-batch-")
        self.groups: dict[str, Group] = {}

    def want(self, row: str, model: str, digest: str, request: JudgeRequest) -> None:
        group = self.groups.get(model)
        if group is None:
            path = Path(self._dir.name) / f"{len(self.groups)}.jsonl"
            group = Group(model, path, path.open("w", encoding="utf-8"))
            self.groups[model] = group
        if digest in group.digests:
            return
        group.digests.add(digest)
        group.units.append(f"{row}\t{digest}")
        inlined = inlined_request(model, request, self._max_output_tokens, digest)
        group.handle.write(self._line(inlined) + "\n")

    @property
    def empty(self) -> bool:
        return not self.groups

    @property
    def requests(self) -> int:
        return sum(len(group.units) for group in self.groups.values())

    def finish(self) -> None:
        for group in self.groups.values():
            group.handle.close()

    def cleanup(self) -> None:
        self.finish()
        self._dir.cleanup()


@dataclass
class BatchReplyJudge:
    """The bottom of the batch stack: the stored result for this exact request, or collected."""

    model: str
    store: Store
    job_id: str
    line: str
    collector: Collector
    online: Callable[[], Judge] | None = None  # the online judge, for unmatchable results

    def generate(self, request: JudgeRequest) -> JudgeReply:
        digest = call_digest(self.model, request)
        raw = self.store.batch_reply(self.job_id, digest)
        if raw is None:
            self.collector.want(self.line, self.model, digest, request)
            raise AwaitingBatch(digest)
        result = json.loads(raw)
        if "online" in result:
            return self._online_once(digest, request)
        # Accounted the first time it is handed out; a later sweep replaying it is a cache hit,
        # and so is a failure read again: its tokens were counted the first time.
        first = self.store.batch_first_serve(self.job_id, digest)
        try:
            reply = self._read(result)
        except JudgeError as exc:
            # Billed once: a failure read again by a later sweep spends nothing.
            served = exc.costing(attempts=1) if first else exc.costing(**vars(CallCost(0)))
            raise served from None
        return replace(reply, cached=not first, attempts=1 if first else 0)

    def _online_once(self, digest: str, request: JudgeRequest) -> JudgeReply:
        """A request whose batch's results could not be matched to it (they came back with no
        key): asked online, once. The answer is kept with the batch replies, so a later sweep
        reads it (a cache hit) instead of asking again; it is priced at the online rate."""
        slot = f"online:{digest}"
        stored = self.store.batch_reply(self.job_id, slot)
        if stored is not None:
            kept = json.loads(stored)
            if "error" in kept:
                raise BatchRequestFailed(kept["error"]) from None
            kept["logprobs"] = ReplyLogprobs.from_json(kept.get("logprobs"))
            return replace(JudgeReply(**kept), cached=True, attempts=0)
        if self.online is None:
            raise BatchRequestFailed("no online judge to answer an unmatched batch request")
        try:
            reply = replace(self.online().generate(request), online=True)
        except JudgeError as exc:
            # Kept only when final: a job paused or cancelled at the gate, a cap busy, a rate
            # limit or a transient failure asks again at a later sweep, as any online call.
            if policy_of(exc) == "never":
                message = f"asked online after its batch's results came back unmatched: {exc}"
                self.store.save_batch_replies(self.job_id, {slot: json.dumps({"error": message})})
            raise
        self.store.save_batch_replies(self.job_id, {slot: json.dumps(asdict(reply))})
        return reply

    def _read(self, result: dict[str, Any]) -> JudgeReply:
        """A stored result as a reply, read by the SDK's forgiving reader (fields it does not
        model are dropped) and then by the one reading of every reply."""
        if "error" in result:
            raise BatchRequestFailed(
                f"the request failed in the batch: {describe(result['error'])}"
            )
        try:
            response = types.GenerateContentResponse._from_response(
                response=result["response"], kwargs={}
            )
        except Exception as exc:
            if (unreadable := unreadable_reply(exc)) is None:
                raise
            raise unreadable from None
        return reply_from_response(self.model, response)


def batch_row_context(
    rt: Runtime, row: RowRef, collector: Collector, versions: set[str] | None = None
) -> RowContext:
    """The online row context with judges that answer from batch results, at the batch price;
    the model versions of the replies read go into `versions`. Every layer above the innermost
    judge is the online one, so a call in the call cache is never sent, thinking and output
    allowances apply as online, and a batch reply goes into the call cache like any reply."""

    def innermost(model: str, api: Callable[[], Judge]) -> Judge:
        return BatchReplyJudge(model, rt.store, row.job_id, row.line, collector, online=api)

    return row_context(rt, row, innermost=innermost, batch=True, versions=versions)
