"""Batch mode's flow over a job's life: submit a round, poll each batch, ingest its results,
and when a round is over, sweep again; plus re-attaching after a crash. Every step reads the
ledger first, so a step run twice, or after a crash, neither sends a batch twice nor loses one.
"""

from __future__ import annotations

import logging
import time
import uuid

from evalq.core.models import JobConfig
from evalq.worker.batch import ledger, service
from evalq.worker.batch.backends import BatchBackend
from evalq.worker.batch.ledger import TERMINAL
from evalq.worker.batch.names import INGEST_BATCH, POLL_BATCH, SUBMIT_BATCH, Send
from evalq.worker.batch.reading import OutputElsewhere, TooLarge
from evalq.worker.batch.sweep import sweep
from evalq.worker.dispatch.queues import PREPARE_ROW
from evalq.worker.lifecycle.job_end import finalize
from evalq.worker.runtime import Runtime
from evalq.worker.settings import Settings
from evalq.worker.store import Store

log = logging.getLogger(__name__)
HELD_RECHECK_S = 5.0


def _backend(rt: Runtime, job_id: str) -> BatchBackend:
    """The job's batch service, with its own Cloud Storage prefix on Vertex AI."""
    return service.backend_for(rt.settings, rt.store.config(job_id).vertex_batch_prefix)


def submit_round(rt: Runtime, job_id: str, send: Send) -> str:
    """Sweep the job and send what it found unanswered as the next round of batches."""
    store, settings = rt.store, rt.settings
    owner = uuid.uuid4().hex
    if not store.claim_batch_lock(job_id, owner, int(settings.task_time_limit_s)):
        return "busy"  # another worker is submitting this job now
    try:
        return _submit_locked(rt, job_id, send)
    finally:
        store.release_batch_lock(job_id, owner)


def _submit_locked(rt: Runtime, job_id: str, send: Send) -> str:
    store, settings = rt.store, rt.settings
    if store.status(job_id) != "running":
        return "idle"
    if store.batch_meta(job_id).get("fallback") == "online":
        return "online"
    if _refused_prefix(rt, job_id):
        return "paused"
    backend = _backend(rt, job_id)
    for record in ledger.in_flight(store, job_id):
        if record.name is None:  # recorded, then the submitter died: adopt it or abandon it
            made = service.create(backend, store, job_id, record, None)
            if made.name is not None:
                _start_polling(store, job_id, made, send, settings.batch_poll_initial_s)
    if ledger.in_flight(store, job_id):
        return "in flight"
    collector = service.new_collector(settings, backend)
    try:
        store.set_batch_meta(
            job_id, last_sweep_at=time.time(), max_batches=settings.batch_max_batches
        )
        result = sweep(
            rt,
            job_id,
            collector,
            time_budget_s=settings.task_time_limit_s / 2,
            max_requests=settings.batch_max_requests,
        )
        store.set_batch_meta(job_id, last_sweep_at=time.time())
        if result.paused:
            return "paused"
        if collector.empty:
            if result.cut_short:  # out of time on rows that needed no request: go on
                send(SUBMIT_BATCH, (job_id,), None)
                return "more"
            if result.rows_held:
                send(SUBMIT_BATCH, (job_id,), HELD_RECHECK_S)
                return "held"
            finalize(store, job_id)
            return "done"
        made_so_far = len(ledger.records(store, job_id))
        if made_so_far + len(collector.groups) > settings.batch_max_batches:
            store.pause(
                job_id,
                f"the job has sent {made_so_far} batches and the next round needs "
                f"{len(collector.groups)} more, over EVALQ_BATCH_MAX_BATCHES="
                f"{settings.batch_max_batches}: raise it, then `evalq resume {job_id}`",
            )
            return "paused"
        round_number = store.incr_batch_meta(job_id, "round")
        records = service.plan_round(store, job_id, collector, round_number)
        for record, group in zip(records, collector.groups.values(), strict=True):
            made = service.create(backend, store, job_id, record, group)
            store.incr(job_id, batches_submitted=1)
            _start_polling(store, job_id, made, send, settings.batch_poll_initial_s)
        return "submitted"
    finally:
        collector.cleanup()


def _refused_prefix(rt: Runtime, job_id: str) -> bool:
    """A job whose own Cloud Storage prefix lies outside the workers' EVALQ_VERTEX_BATCH_PREFIX
    is paused with the reason, before anything is written there (a client that did not know
    the setting could not refuse it at submit)."""
    prefix = rt.store.config(job_id).vertex_batch_prefix
    if not rt.settings.use_vertexai or not prefix:
        return False
    refusal = service.outside_prefix(rt.settings, prefix)
    if refusal is None:
        return False
    rt.store.pause(job_id, f"{refusal}; then `evalq resume {job_id}`")
    return True


def _start_polling(
    store: Store, job_id: str, record: ledger.BatchRecord, send: Send, countdown_s: float | None
) -> None:
    chain = uuid.uuid4().hex[:12]
    ledger.save(store, job_id, record.model_copy(update={"poll_chain": chain}))
    send(POLL_BATCH, (job_id, record.id, chain), countdown_s)


def poll_one(rt: Runtime, job_id: str, batch_id: str, chain: str, send: Send) -> bool:
    """Poll a batch once; True while it is still running (poll again later)."""
    store = rt.store
    record = ledger.get(store, job_id, batch_id)
    if record is None or record.finished or record.name is None:
        return False
    if record.poll_chain and chain != record.poll_chain:
        return False  # a newer chain polls this batch
    backend = _backend(rt, job_id)
    if store.status(job_id) == "cancelled":
        service.cancel_all(backend, store, job_id)
        return False
    record = service.poll(backend, store, job_id, record)
    if record.state not in TERMINAL:
        return True
    if record.awaiting_output:
        return _awaiting_output(rt, job_id, record)
    if record.state == "SUCCEEDED":
        send(INGEST_BATCH, (job_id, batch_id), None)
        return False
    if record.cancelled_by_us or store.status(job_id) == "cancelled":
        return False
    _ended_unanswered(rt, job_id, record, send)
    return False


def _awaiting_output(rt: Runtime, job_id: str, record: ledger.BatchRecord) -> bool:
    """SUCCEEDED, yet no results attached: the API has said so before the output was there.
    Poll again (with the usual backoff) for EVALQ_BATCH_OUTPUT_WAIT_S; then pause the job.
    Its requests are never sent in a new batch meanwhile: this one may still answer them."""
    waited = time.time() - (record.output_missing_since or time.time())
    if waited < rt.settings.batch_output_wait_s:
        return True
    ledger.save(rt.store, job_id, record.model_copy(update={"output_missing_since": None}))
    rt.store.pause(
        job_id,
        f"batch {record.name} reported SUCCEEDED but no results were attached after "
        f"{waited:.0f} s (EVALQ_BATCH_OUTPUT_WAIT_S={rt.settings.batch_output_wait_s:g}); "
        f"`evalq resume {job_id}` looks again (nothing is sent twice)",
    )
    return False


def _ended_unanswered(rt: Runtime, job_id: str, record: ledger.BatchRecord, send: Send) -> None:
    """A batch EXPIRED, FAILED or CANCELLED by the server: its unanswered requests go into a
    new batch (the next sweep collects them), or online with --on-expiry online."""
    store, settings = rt.store, rt.settings
    ended = store.incr_batch_meta(job_id, "ended")
    store.incr(job_id, batches_ended=1)
    config = store.config(job_id)
    log.warning("job %s: batch %s ended %s", job_id, record.name, record.state)
    if config.on_expiry == "online":
        store.set_batch_meta(job_id, fallback="online")
        store.incr(job_id, batch_online_fallback=1)
        pending = store.not_done(job_id)
        store.touch(job_id, *pending)
        for row in pending:
            send(PREPARE_ROW, (job_id, row), None)
        return
    if ended > settings.batch_max_resubmits:
        store.pause(
            job_id,
            f"batches ended EXPIRED/FAILED/CANCELLED {ended} times (EVALQ_BATCH_MAX_RESUBMITS="
            f"{settings.batch_max_resubmits}): `evalq resume {job_id}` sends the rest again",
        )
        return
    store.incr(job_id, batches_resubmitted=1)
    round_over(store, job_id, send)


def ingest_one(rt: Runtime, job_id: str, batch_id: str, send: Send) -> None:
    store = rt.store
    record = ledger.get(store, job_id, batch_id)
    if record is not None and not record.ingested and record.name is not None:
        if _refused_prefix(rt, job_id):
            return
        backend = _backend(rt, job_id)
        try:
            done = service.ingest(backend, store, job_id, record, rt.settings)
        except OutputElsewhere as exc:
            store.pause(job_id, f"batch {record.name}: {exc}; `evalq resume {job_id}` looks again")
            return
        except TooLarge as exc:
            store.pause(
                job_id,
                f"batch {record.name}: {exc} (EVALQ_BATCH_RESULTS_MAX_BYTES="
                f"{rt.settings.batch_results_max_bytes}); raise it, then `evalq resume {job_id}`",
            )
            return
        if done is None:  # no output attached after all: poll it again, never send it again
            _start_polling(store, job_id, record, send, rt.settings.batch_poll_initial_s)
            return
    round_over(store, job_id, send)


def round_over(store: Store, job_id: str, send: Send) -> None:
    """When every batch of the round is done with, the next sweep (the next stage) starts."""
    if not ledger.in_flight(store, job_id):
        send(SUBMIT_BATCH, (job_id,), None)


def reattach(
    store: Store, settings: Settings, send: Send, job_id: str, now: float, *, force: bool = False
) -> bool:
    """Pick a batch-mode job up where its tasks left it (after a crash, or on resume): poll
    batches in flight, ingest finished ones, adopt or re-sweep unsubmitted ones. Never creates
    a batch by itself. False for jobs batch mode does not drive (the watchdog handles rows)."""
    config: JobConfig = store.config(job_id)
    if config.mode != "batch":
        return False
    meta = store.batch_meta(job_id)
    if meta.get("fallback") == "online":
        return False
    if store.status(job_id) != "running":
        return True
    if force:  # a resumed job gets its full allowance of resubmits again
        store.set_batch_meta(job_id, ended=0)
    # A live poll chain looks at its batch at least every batch_poll_max_s.
    stale_poll_s = max(settings.stall_timeout_s, 2 * settings.batch_poll_max_s)
    last_sweep = float(meta.get("last_sweep_at") or 0)
    unfinished = ledger.in_flight(store, job_id)
    for record in unfinished:
        seen = record.last_poll_at or record.submitted_at or last_sweep
        if record.name is None:
            if force or now - last_sweep > settings.stall_timeout_s:
                send(SUBMIT_BATCH, (job_id,), None)
        elif force or now - seen > stale_poll_s:
            _start_polling(store, job_id, record, send, None)
    if not unfinished and (force or now - last_sweep > settings.stall_timeout_s):
        send(SUBMIT_BATCH, (job_id,), None)
    return True
