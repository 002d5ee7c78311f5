"""Batch mode's steps, each safe to run again after a crash: submit a round (adopting a batch
created just before a crash), poll one batch, ingest its results in chunks, cancel a job's
batches; the same steps on either service (evalq.worker.batch.backends)."""

from __future__ import annotations

import json
import logging
import resource
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from evalq.core.errors import CallCost
from evalq.core.pricing import job_prices, price_for, priced_usage
from evalq.worker.batch import gcs, ledger
from evalq.worker.batch.backends import BatchBackend, GeminiApiBackend
from evalq.worker.batch.judge import Collector, Group
from evalq.worker.batch.ledger import TERMINAL, BatchRecord
from evalq.worker.batch.reading import BatchView, ResultEntry
from evalq.worker.batch.vertex import VertexBackend
from evalq.worker.batch.wire import no_result, retryable
from evalq.worker.judges.budget import pause_if_spent
from evalq.worker.judges.gemini import make_client
from evalq.worker.judges.reply_reading import usage_in
from evalq.worker.settings import Settings
from evalq.worker.store import Store

log = logging.getLogger(__name__)
INGEST_CHUNK = 500  # results written to Redis per round trip; never all of them at once
_ADOPT_PAGES = 5  # how far back the server's list is searched for a batch made before a crash


class BatchSetupError(ValueError):
    """Batch mode can't run with these settings (Vertex AI without a usable Cloud Storage
    prefix): one line that names the setting to change, said before anything is stored."""


def outside_prefix(settings: Settings, given: str) -> str | None:
    """Why a job's own prefix may not be used by these settings' workers, or None: it must lie
    under EVALQ_VERTEX_BATCH_PREFIX when that is set (a job's flag could otherwise point the
    workers' credentials at any folder they can write). One line naming both."""
    if not settings.vertex_batch_prefix:
        return None
    root = gcs.GcsPath.parse(settings.vertex_batch_prefix)
    try:
        inside = gcs.GcsPath.parse(given, gcs.PREFIX_FLAG).within(root)
    except gcs.StorageSetupError as exc:
        return str(exc)
    if inside:
        return None
    return (
        f"{gcs.PREFIX_FLAG}={given} is not under {gcs.PREFIX_SETTING}={root.uri}, the prefix "
        "the workers write batches under: name a folder under it, or leave the flag out"
    )


def batch_prefix(settings: Settings, flag: str | None) -> str | None:
    """The job's Cloud Storage prefix on Vertex AI, checked (under EVALQ_VERTEX_BATCH_PREFIX
    when that is set; the bucket exists and can be listed): the flag wins over the setting.
    None on the Gemini API."""
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
    if flag and (refusal := outside_prefix(settings, flag)) is not None:
        raise BatchSetupError(refusal)
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
    unknown: int = 0  # keys this batch never sent: ignored
    unreadable: int = 0  # entries that could not be read and named no key of the batch
    missing: int = 0  # requests the batch returned no result for
    online: int = 0  # requests left unanswered beside unmatched results: answered online once
    # Requests answered more than once in the batch's output (in one file or across files):
    # neither answer is used; asked again once in the next batch, then unscored.
    conflicts: int = 0
    conflicts_unscored: int = 0  # answered twice again on their re-ask: unscored with a reason
    ignored: int = 0  # objects in the output folder that are not the service's results files
    # What the results that were never used (no key, a key the batch never sent) billed: a
    # reply is paid for whether or not it can be matched, so its tokens count all the same.
    unused_calls: int = 0
    unused_usage: CallCost = field(default_factory=CallCost)

    def bill_unused(self, entry: ResultEntry) -> None:
        self.bill(billed(entry))

    def bill(self, usage: CallCost | None) -> None:
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
            "batch_results_conflicts": self.conflicts,
            "batch_results_conflicts_unscored": self.conflicts_unscored,
            "batch_output_ignored": self.ignored,
        }


def billed(entry: ResultEntry) -> CallCost | None:
    """What a results line says it billed (None for an error or an unreadable line)."""
    response = (entry.result or {}).get("response")
    usage = usage_in(response) if isinstance(response, dict) else None
    if usage is None:
        return None
    return CallCost(
        prompt_tokens=usage.prompt_tokens,
        output_tokens=usage.output_tokens,
        thought_tokens=usage.thought_tokens,
        cached_tokens=usage.cached_tokens,
    )


def _smaller(a: CallCost | None, b: CallCost | None) -> CallCost | None:
    if a is None or b is None:
        return a if b is None else b
    return a if _total(a) <= _total(b) else b


def _total(cost: CallCost) -> int:
    return cost.prompt_tokens + cost.output_tokens + cost.thought_tokens


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

    def put_conflict(self, digest: str) -> None:
        """The request was answered more than once in the batch's output: neither answer is
        used. The first time (counted per batch, so ingesting again counts it once) nothing is
        stored and the next sweep puts it into a new batch; a second time it is unscored."""
        tries = self.store.batch_retry(self.job_id, f"conflict:{digest}", self.batch_id)
        if tries <= 1:
            self.tally.conflicts += 1
            return
        self.tally.conflicts_unscored += 1
        self.tally.failed += 1
        message = (
            f"answered more than once in the output of {tries} batches (results whoever can "
            "write the batch's folder may have added); neither answer was used"
        )
        error = {"code": None, "status": "CONFLICTING_RESULTS", "message": message}
        self.chunk[digest] = json.dumps({"error": error}, separators=(",", ":"))
        if len(self.chunk) >= INGEST_CHUNK:
            self.flush()

    def put_online(self, digest: str, reason: str) -> None:
        """The request is answered by one online call at its next sweep (evalq.worker.batch.judge),
        never by another batch."""
        self.tally.online += 1
        self.chunk[digest] = json.dumps({"online": reason}, separators=(",", ":"))
        if len(self.chunk) >= INGEST_CHUNK:
            self.flush()

    def flush(self) -> None:
        self.store.save_batch_replies(self.job_id, self.chunk)
        self.chunk = {}


def _spool(entries: Iterator[ResultEntry], sent: set[str], spool: IO[str]) -> set[str]:
    """Write the results to a temporary file (never all in memory); the keys of the batch
    that were answered more than once."""
    answers: dict[str, int] = {}
    for entry in entries:
        spool.write(json.dumps(asdict(entry), separators=(",", ":")) + "\n")
        if entry.key is not None and entry.key in sent:
            answers[entry.key] = answers.get(entry.key, 0) + 1
    spool.seek(0)
    return {key for key, count in answers.items() if count > 1}


def _store_results(writer: _Writer, entries: Iterator[ResultEntry], sent: set[str]) -> Tally:
    """Match each result to its request by key, never by position: an entry with no key, or
    a key this batch did not send, is never used for a verdict. A key answered more than once
    is a conflict: no answer of it is used (writer.put_conflict). Of its lines, only the
    smallest usage any of them claims is billed (as unused): Vertex bills its own line, and a
    line someone else added must neither stand for an answer nor raise what the job pays."""
    tally, seen = writer.tally, set()
    conflict_usage: dict[str, CallCost | None] = {}
    with tempfile.TemporaryFile("w+", encoding="utf-8", prefix="evalq-results-") as spool:
        twice = _spool(entries, sent, spool)
        for raw in spool:
            entry = ResultEntry(**json.loads(raw))
            if entry.key is None:
                if entry.problem is not None:
                    tally.unreadable += 1
                else:
                    tally.unmatched += 1
                    tally.bill_unused(entry)
                continue
            if entry.key in twice:
                usage = billed(entry)
                conflict_usage[entry.key] = (
                    _smaller(conflict_usage[entry.key], usage)
                    if entry.key in conflict_usage
                    else usage
                )
                continue
            if entry.key not in sent:
                tally.unknown += 1
                tally.bill_unused(entry)
                continue
            seen.add(entry.key)
            if entry.result is None:  # unreadable, yet its key is known: that request fails
                problem = entry.problem or "unreadable result"
                writer.put(
                    entry.key,
                    {"error": {"code": None, "status": "UNREADABLE", "message": problem}},
                )
            else:
                writer.put(entry.key, entry.result)
    for digest in sorted(twice):
        tally.bill(conflict_usage.get(digest))
        writer.put_conflict(digest)
    unanswered = sorted(sent - seen - twice)
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
    ignored = backend.ignored_objects(view)
    tally.ignored = len(ignored)
    if ignored:
        log.warning(
            "job %s: batch %s: %d objects in its output folder ignored: %s",
            job_id,
            record.name,
            len(ignored),
            ", ".join(ignored[: gcs.IGNORED_SHOWN]),
        )
    if tally.conflicts or tally.conflicts_unscored:
        log.warning(
            "job %s: batch %s: %d requests answered more than once in its output; none of "
            "those answers used",
            job_id,
            record.name,
            tally.conflicts + tally.conflicts_unscored,
        )
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
            "conflicts": tally.conflicts + tally.conflicts_unscored,
            "ignored_objects": tally.ignored,
            "ignored_names": list(ignored[: gcs.IGNORED_SHOWN]),
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
