"""Batch mode's steps, each safe to run again after a crash: submit a round (adopting a batch
created just before a crash instead of creating it twice), poll one batch, ingest its results
in chunks, cancel a job's batches. The same steps on either service (worker.batch.backends):
the Gemini API's Batch API, or Vertex AI's batch prediction jobs through Cloud Storage."""

from __future__ import annotations

import json
import logging
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalq.core.errors import CallCost
from evalq.core.pricing import job_prices, price_for, priced_usage
from worker.batch import gcs, ledger
from worker.batch.backends import BatchBackend, GeminiApiBackend
from worker.batch.judge import Collector, Group
from worker.batch.ledger import TERMINAL, BatchRecord
from worker.batch.reading import BatchView, ResultEntry
from worker.batch.vertex import VertexBackend
from worker.batch.wire import no_result, retryable
from worker.budget import pause_if_spent
from worker.gemini import make_client
from worker.reply_reading import usage_in
from worker.settings import Settings
from worker.store import Store

log = logging.getLogger(__name__)
INGEST_CHUNK = 500  # results written to Redis per round trip; never all of them at once
_ADOPT_PAGES = 5  # how far back the server's list is searched for a batch made before a crash


class BatchSetupError(ValueError):
    """Batch mode can't run with these settings (Vertex AI without a usable Cloud Storage
    prefix): one line that names the setting to change, said before anything is stored."""


def batch_prefix(settings: Settings, flag: str | None) -> str | None:
    """The job's Cloud Storage prefix on Vertex AI, checked (the bucket exists and can be
    listed): the flag wins over EVALQ_VERTEX_BATCH_PREFIX. None on the Gemini API."""
    if not settings.use_vertexai:
        return None
    source, given = (
        (gcs.PREFIX_FLAG, flag) if flag else (gcs.PREFIX_SETTING, settings.vertex_batch_prefix)
    )
    if not given:
        raise BatchSetupError(
            "--mode batch on Vertex AI writes its requests to Cloud Storage: set "
            f"{gcs.PREFIX_SETTING}=gs://BUCKET/FOLDER or pass {gcs.PREFIX_FLAG}"
        )
    try:
        prefix = gcs.GcsPath.parse(given, source)
        gcs.check_prefix(gcs.storage_client(settings.vertex_project), prefix, source)
    except gcs.StorageSetupError as exc:
        raise BatchSetupError(str(exc)) from None
    return prefix.uri


def backend_for(settings: Settings, prefix: str | None = None) -> BatchBackend:
    """The batch service of these settings: Vertex AI's batch prediction jobs (through Cloud
    Storage under `prefix`, the job's) or the Gemini API's Batch API."""
    if settings.use_vertexai:
        return VertexBackend(
            make_client(settings),
            lambda: gcs.storage_client(settings.vertex_project),
            gcs.GcsPath.parse(prefix) if prefix else None,
        )
    return GeminiApiBackend(make_client(settings))


def new_collector(settings: Settings, backend: BatchBackend) -> Collector:
    return Collector(backend.request_line, settings.max_output_tokens)


def _find(backend: BatchBackend, display_name: str) -> BatchView | None:
    for view in backend.list(_ADOPT_PAGES * 100):
        if view.display_name == display_name:
            return view
    return None


def plan_round(
    store: Store, job_id: str, collector: Collector, round_number: int
) -> list[BatchRecord]:
    """Record the round's batches (SUBMITTING, with their units) before any create call."""
    made = []
    for n, group in enumerate(collector.groups.values()):
        batch_id = f"r{round_number}-{n}"
        record = BatchRecord(
            id=batch_id,
            round=round_number,
            model=group.model,
            display_name=display_name(job_id, batch_id),
            source="file",
            requests=len(group.units),
        )
        store.save_batch_units(job_id, batch_id, group.units)
        ledger.save(store, job_id, record)
        made.append(record)
    return made


def display_name(job_id: str, batch_id: str) -> str:
    """How a batch is named on the server: found again by it after a crash, or a lost job."""
    return f"evalq-{job_id}-{batch_id}"


def create(
    backend: BatchBackend, store: Store, job_id: str, record: BatchRecord, group: Group | None
) -> BatchRecord:
    """Create the batch, or adopt the one a crashed attempt already created (same display
    name). Without its requests (the attempt that collected them died before creating it),
    a batch not on the server is ABANDONED: the next sweep collects its requests again.

    Requests always go as a JSONL file whose lines carry their keys back with the results,
    while inlined responses may come back reordered and without the metadata that keyed them."""
    if record.name is not None:
        return record
    found = _find(backend, record.display_name)
    if found is None:
        if group is None:
            record = record.model_copy(update={"state": "ABANDONED"})
            ledger.save(store, job_id, record)
            return record
        name, state = backend.create(group.model, group.path, record.display_name)
        log.info("job %s: created %s (%d requests)", job_id, name, record.requests)
    else:
        name, state = found.name, found.state
        log.warning("job %s: adopted %s, created before a crash", job_id, name)
    record = record.model_copy(update={"name": name, "state": state, "submitted_at": time.time()})
    ledger.save(store, job_id, record)
    return record


def poll(backend: BatchBackend, store: Store, job_id: str, record: BatchRecord) -> BatchRecord:
    """Look at the batch once. SUCCEEDED counts as done only once its output is attached: the
    API has reported success before the results were there."""
    assert record.name is not None
    view = backend.get(record.name)
    now = time.time()
    waiting_output = view.state == "SUCCEEDED" and not view.has_output
    since = record.output_missing_since
    record = record.model_copy(
        update={
            "state": view.state,
            "last_poll_at": now,
            "polls": record.polls + 1,
            "succeeded": view.succeeded or record.succeeded,
            "failed": view.failed or record.failed,
            "output_missing_since": (since or now) if waiting_output else None,
            "server_error": view.error,
        }
    )
    ledger.save(store, job_id, record)
    return record


@dataclass
class Tally:
    """What one ingest made of a batch's results; the job counts each kind (`evalq status`)."""

    answered: int = 0  # responses stored
    failed: int = 0  # errors stored as the request's answer
    retried: int = 0  # transient errors and missing results: into the next batch
    unmatched: int = 0  # results with no key: never used for a verdict
    unknown: int = 0  # keys this batch never sent (or sent twice): ignored
    unreadable: int = 0  # entries that could not be read and named no key of the batch
    missing: int = 0  # requests the batch returned no result for
    online: int = 0  # requests left unanswered beside unmatched results: answered online once
    # What the results that were never used (no key, a key the batch never sent) billed: a
    # reply is paid for whether or not it can be matched, so its tokens count all the same.
    unused_calls: int = 0
    unused_usage: CallCost = field(default_factory=CallCost)

    def bill_unused(self, entry: ResultEntry) -> None:
        response = (entry.result or {}).get("response")
        usage = usage_in(response) if isinstance(response, dict) else None
        if usage is None:
            return
        self.unused_calls += 1
        self.unused_usage = CallCost(
            prompt_tokens=self.unused_usage.prompt_tokens + usage.prompt_tokens,
            output_tokens=self.unused_usage.output_tokens + usage.output_tokens,
            thought_tokens=self.unused_usage.thought_tokens + usage.thought_tokens,
            cached_tokens=self.unused_usage.cached_tokens + usage.cached_tokens,
        )

    def counters(self) -> dict[str, int]:
        return {
            "batch_results_unmatched": self.unmatched,
            "batch_results_unknown": self.unknown,
            "batch_results_unreadable": self.unreadable,
            "batch_results_missing": self.missing,
            "batch_requests_retried": self.retried,
            "batch_requests_online": self.online,
        }


class _Writer:
    """Results by digest, written 500 at a time, first write wins; a transient error (or no
    result) is held back for the next batch until the request has failed in retries_max + 1
    batches, then it is the request's answer."""

    def __init__(self, store: Store, job_id: str, batch_id: str, retries_max: int) -> None:
        self.store, self.job_id, self.batch_id = store, job_id, batch_id
        self.retries_max = retries_max
        self.chunk: dict[str, str] = {}
        self.tally = Tally()

    def put(self, digest: str, result: dict[str, Any]) -> None:
        if "error" in result:
            error = result["error"]
            if retryable(error):
                tries = self.store.batch_retry(self.job_id, digest, self.batch_id)
                if tries <= self.retries_max:
                    self.tally.retried += 1
                    return
                error = {**error, "message": f"{error.get('message')} (in {tries} batches)"}
                result = {"error": error}
            self.tally.failed += 1
        else:
            self.tally.answered += 1
        self.chunk[digest] = json.dumps(result, separators=(",", ":"))
        if len(self.chunk) >= INGEST_CHUNK:
            self.flush()

    def put_online(self, digest: str, reason: str) -> None:
        """The request is answered by one online call at its next sweep (worker.batch.judge),
        never by another batch."""
        self.tally.online += 1
        self.chunk[digest] = json.dumps({"online": reason}, separators=(",", ":"))
        if len(self.chunk) >= INGEST_CHUNK:
            self.flush()

    def flush(self) -> None:
        self.store.save_batch_replies(self.job_id, self.chunk)
        self.chunk = {}


def _store_results(writer: _Writer, entries: Iterator[ResultEntry], sent: set[str]) -> Tally:
    """Match each result to its request by key, never by position: an entry with no key, or
    a key this batch did not send, is never used for a verdict."""
    tally, seen = writer.tally, set()
    for entry in entries:
        if entry.key is None:
            if entry.problem is not None:
                tally.unreadable += 1
            else:
                tally.unmatched += 1
                tally.bill_unused(entry)
            continue
        if entry.key not in sent or entry.key in seen:
            tally.unknown += 1
            tally.bill_unused(entry)
            continue
        seen.add(entry.key)
        if entry.result is None:  # unreadable, yet its key is known: that request fails
            problem = entry.problem or "unreadable result"
            writer.put(
                entry.key, {"error": {"code": None, "status": "UNREADABLE", "message": problem}}
            )
        else:
            writer.put(entry.key, entry.result)
    unanswered = sorted(sent - seen)
    if tally.unmatched and unanswered:
        # Results came back that name no request: some of these requests were answered and
        # billed, and which is unknown. Another batch could buy them all again, and matching
        # by position is no answer; so each is asked online, once.
        reason = (
            f"{tally.unmatched} results of the batch came back without a key; matching by "
            "position is never done"
        )
        for digest in unanswered:
            writer.put_online(digest, reason)
    else:
        for digest in unanswered:
            tally.missing += 1
            writer.put(
                digest, {"error": no_result("the batch returned no result for this request")}
            )
    writer.flush()
    return tally


def ingest(
    backend: BatchBackend, store: Store, job_id: str, record: BatchRecord, settings: Settings
) -> BatchRecord | None:
    """Read a SUCCEEDED batch's results into the job's reply store, a chunk at a time: the
    results are streamed (to disk by the SDK on the Gemini API, from Cloud Storage on Vertex
    AI), up to EVALQ_BATCH_RESULTS_MAX_BYTES, and read line by line. None while the batch has
    no output attached yet (poll again)."""
    if record.ingested:
        return record
    assert record.name is not None
    peak_before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    view = backend.get(record.name)
    if not view.has_output:
        return None
    sent = {unit.split("\t", 1)[1] for unit in store.batch_units(job_id, record.id)}
    writer = _Writer(store, job_id, record.id, settings.batch_request_retries)
    tally = _store_results(writer, backend.results(view, settings.batch_results_max_bytes), sent)
    if any(tally.counters().values()):
        store.incr(job_id, **{k: v for k, v in tally.counters().items() if v})
    if tally.unused_calls and store.batch_first_serve(job_id, f"unused@{record.id}"):
        _account_unused(store, job_id, record.model, tally, settings)
    if tally.unmatched or tally.unknown or tally.unreadable:
        log.warning("job %s: batch %s results not matched: %s", job_id, record.name, tally)
    if tally.online:
        log.warning(
            "job %s: batch %s: %d results came back with no key; %d requests are answered "
            "online once instead of in another batch",
            job_id,
            record.name,
            tally.unmatched,
            tally.online,
        )
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    record = record.model_copy(
        update={
            "ingested": True,
            "state": view.state,
            "succeeded": tally.answered,
            "failed": tally.failed,
            "unmatched": tally.unmatched + tally.unknown + tally.unreadable,
            "ingest_peak_rss_kb": int(peak_kb),
            "ingest_start_peak_rss_kb": int(peak_before_kb),
        }
    )
    ledger.save(store, job_id, record)
    log.info("job %s: ingested %s: %s", job_id, record.name, tally)
    return record


def _account_unused(
    store: Store, job_id: str, model: str, tally: Tally, settings: Settings
) -> None:
    """Count what the unmatched results billed, once per batch, at the batch price, under
    the role "unmatched" (no request can be named), so cost and the spend cap see them."""
    spent = tally.unused_usage
    price = price_for(model, job_prices(store.config(job_id).prices))
    usage = priced_usage("unmatched", model, tally.unused_calls, spent, price, batch=True)
    counters = {
        "judge_calls": tally.unused_calls,
        "prompt_tokens": spent.prompt_tokens,
        "output_tokens": spent.output_tokens,
        "thought_tokens": spent.thought_tokens,
        "cached_tokens": spent.cached_tokens,
    }
    spend, cap = store.account(job_id, counters, usage)
    if usage.cost_nanos:
        pause_if_spent(store, job_id, spend, cap)


def cancel_all(backend: BatchBackend, store: Store, job_id: str) -> int:
    """Cancel every batch of the job still running on the server; returns how many."""
    cancelled = 0
    for record in ledger.records(store, job_id):
        if record.name is None or record.state in TERMINAL or record.ingested:
            continue
        backend.cancel(record.name)
        ledger.save(
            store,
            job_id,
            record.model_copy(update={"state": "CANCELLED", "cancelled_by_us": True}),
        )
        cancelled += 1
    return cancelled
