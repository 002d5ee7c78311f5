"""Batch mode's steps against the Batch API, each safe to run again after a crash: submit a
round (adopting a batch created just before a crash instead of creating it twice), poll one
batch, ingest its results in chunks, cancel a job's batches."""

from __future__ import annotations

import json
import logging
import resource
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google import genai
from google.genai import types

from worker.batch import ledger
from worker.batch.judge import Collector, Group
from worker.batch.ledger import TERMINAL, BatchRecord
from worker.batch.names import display_name
from worker.batch.wire import error_result, retryable
from worker.gemini import make_client
from worker.settings import Settings
from worker.store import Store

log = logging.getLogger(__name__)
INGEST_CHUNK = 500  # results written to Redis per round trip; never all of them at once
_ADOPT_PAGES = 5  # how far back the server's list is searched for a batch made before a crash


class VertexNotSupported(ValueError):
    """Vertex AI batches read from Cloud Storage or BigQuery, which evalq does not write."""


def check_backend(settings: Settings) -> None:
    if settings.use_vertexai:
        raise VertexNotSupported(
            "--mode batch is not available on Vertex AI: Vertex batches read their requests "
            "from Cloud Storage or BigQuery, which evalq does not write. Use the Gemini "
            "Developer API (GEMINI_API_KEY) for batch mode, or run this job online."
        )


def client_for(settings: Settings) -> genai.Client:
    check_backend(settings)
    return make_client(settings)


def new_collector(settings: Settings, client: genai.Client) -> Collector:
    return Collector(client, settings.max_output_tokens, settings.batch_inline_max_bytes)


def _state(job: types.BatchJob) -> str:
    value = job.state.value if job.state is not None else "JOB_STATE_UNSPECIFIED"
    return value.removeprefix("JOB_STATE_")


def _find(client: genai.Client, display_name: str) -> types.BatchJob | None:
    pager = client.batches.list(config={"page_size": 100})
    for seen, job in enumerate(pager):
        if job.display_name == display_name:
            return job
        if seen >= _ADOPT_PAGES * 100:
            break
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
            source="inline" if group.inline is not None else "file",
            requests=len(group.units),
        )
        store.save_batch_units(job_id, batch_id, group.units)
        ledger.save(store, job_id, record)
        made.append(record)
    return made


def create(
    client: genai.Client, store: Store, job_id: str, record: BatchRecord, group: Group | None
) -> BatchRecord:
    """Create the batch, or adopt the one a crashed attempt already created (same display
    name). Without its requests (the attempt that collected them died before creating it),
    a batch not on the server is ABANDONED: the next sweep collects its requests again."""
    if record.name is not None:
        return record
    found = _find(client, record.display_name)
    if found is None:
        if group is None:
            record = record.model_copy(update={"state": "ABANDONED"})
            ledger.save(store, job_id, record)
            return record
        config = types.CreateBatchJobConfig(display_name=record.display_name)
        if group.inline is not None:
            found = client.batches.create(model=group.model, src=group.inline, config=config)
        else:
            upload = types.UploadFileConfig(
                mime_type="application/jsonl", display_name=record.display_name
            )
            uploaded = client.files.upload(file=group.path, config=upload)
            if uploaded.name is None:
                raise RuntimeError("the Files API gave the uploaded requests no name")
            found = client.batches.create(model=group.model, src=uploaded.name, config=config)
        log.info(
            "job %s: created %s (%d requests, %s)",
            job_id,
            found.name,
            record.requests,
            record.source,
        )
    else:
        log.warning("job %s: adopted %s, created before a crash", job_id, found.name)
    record = record.model_copy(
        update={"name": found.name, "state": _state(found), "submitted_at": time.time()}
    )
    ledger.save(store, job_id, record)
    return record


def poll(client: genai.Client, store: Store, job_id: str, record: BatchRecord) -> BatchRecord:
    assert record.name is not None
    job = client.batches.get(name=record.name)
    succeeded = failed = 0
    stats = getattr(job, "completion_stats", None)
    if stats is not None:
        succeeded = int(getattr(stats, "successful_count", 0) or 0)
        failed = int(getattr(stats, "failed_count", 0) or 0)
    elif job.dest is not None and job.dest.inlined_responses is not None:
        failed = sum(1 for r in job.dest.inlined_responses if r.error is not None)
        succeeded = len(job.dest.inlined_responses) - failed
    record = record.model_copy(
        update={
            "state": _state(job),
            "last_poll_at": time.time(),
            "polls": record.polls + 1,
            "succeeded": succeeded or record.succeeded,
            "failed": failed or record.failed,
        }
    )
    ledger.save(store, job_id, record)
    return record


def _store_results(
    store: Store, job_id: str, results: Iterator[tuple[str, dict[str, Any]]]
) -> tuple[int, int]:
    """Write results by digest in chunks; a retryable error is dropped once (its request goes
    into the next batch), the second time it is the request's answer."""
    chunk: dict[str, str] = {}
    ok = failed = 0
    for digest, result in results:
        if "error" in result:
            if retryable(result["error"]) and store.batch_retry_once(job_id, digest):
                continue
            failed += 1
        else:
            ok += 1
        chunk[digest] = json.dumps(result, separators=(",", ":"))
        if len(chunk) >= INGEST_CHUNK:
            store.save_batch_replies(job_id, chunk)
            chunk = {}
    store.save_batch_replies(job_id, chunk)
    return ok, failed


def _inline_results(job: types.BatchJob, units: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    responses = job.dest.inlined_responses if job.dest is not None else None
    for index, item in enumerate(responses or []):
        key = (item.metadata or {}).get("key")
        digest = str(key) if key else units[index].split("\t")[1]
        if item.error is not None:
            yield digest, {"error": error_result(item.error)}
        elif item.response is not None:
            yield digest, {"response": item.response.model_dump(mode="json", exclude_none=True)}


def _file_results(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with path.open("r", encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            entry = json.loads(line)
            key = entry.get("key")
            if not key:
                continue
            if entry.get("response") is not None:
                yield str(key), {"response": entry["response"]}
            else:
                yield (
                    str(key),
                    {"error": error_result(entry.get("error") or entry.get("status") or {})},
                )


def ingest(client: genai.Client, store: Store, job_id: str, record: BatchRecord) -> BatchRecord:
    """Read a SUCCEEDED batch's results into the job's reply store, a chunk at a time: a file
    batch's results are streamed to disk by the SDK and read line by line."""
    if record.ingested:
        return record
    assert record.name is not None
    peak_before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    job = client.batches.get(name=record.name)
    if job.dest is not None and job.dest.file_name:
        with tempfile.TemporaryDirectory(prefix="evalq-results-") as folder:
            path = Path(folder) / "results.jsonl"
            client.files.download(file=job.dest.file_name, destination=str(path))
            ok, failed = _store_results(store, job_id, _file_results(path))
    else:
        units = store.batch_units(job_id, record.id)
        ok, failed = _store_results(store, job_id, _inline_results(job, units))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    record = record.model_copy(
        update={
            "ingested": True,
            "state": _state(job),
            "succeeded": ok,
            "failed": failed,
            "ingest_peak_rss_kb": int(peak_kb),
            "ingest_start_peak_rss_kb": int(peak_before_kb),
        }
    )
    ledger.save(store, job_id, record)
    log.info("job %s: ingested %s (%d answered, %d failed)", job_id, record.name, ok, failed)
    return record


def cancel_all(client: genai.Client, store: Store, job_id: str) -> int:
    """Cancel every batch of the job still running on the server; returns how many."""
    cancelled = 0
    for record in ledger.records(store, job_id):
        if record.name is None or record.state in TERMINAL or record.ingested:
            continue
        client.batches.cancel(name=record.name)
        ledger.save(
            store,
            job_id,
            record.model_copy(update={"state": "CANCELLED", "cancelled_by_us": True}),
        )
        cancelled += 1
    return cancelled
