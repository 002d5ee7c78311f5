"""The batch ledger's records: what evalq knows of each batch it sent, kept in Redis
(evalq.worker.store's batch methods) so any worker, after any crash, can pick a batch up again."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel

from evalq.worker.store import Store

# Batch states as google-genai reports them, less the JOB_STATE_ prefix; SUBMITTING is ours:
# recorded before the create call, so a crash between the two is found and adopted.
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED"})
ENDED_UNANSWERED = frozenset({"FAILED", "CANCELLED", "EXPIRED"})
# Ours too: recorded but never created (its submitter died first); its requests are swept again.
ABANDONED = "ABANDONED"


class BatchRecord(BaseModel):
    """One batch: its round, model, name on the server, and how far evalq got with it."""

    id: str  # r{round}-{n}: unique in the job
    round: int
    model: str
    display_name: str  # evalq-{job}-{id}: how a batch created just before a crash is found
    source: Literal["inline", "file"]  # every batch sent is "file"; "inline" is still read
    requests: int
    name: str | None = None  # batches/{id} once created
    state: str = "SUBMITTING"
    submitted_at: float | None = None
    last_poll_at: float | None = None
    polls: int = 0
    succeeded: int = 0
    failed: int = 0
    ingested: bool = False
    cancelled_by_us: bool = False
    # The poll chain that owns this batch: a re-attach starts a new one, and a poll task of
    # an older chain (a duplicate left by a crash) stops at its next turn.
    poll_chain: str = ""
    # The ingesting process's peak resident memory (KiB, getrusage) when it finished: what
    # reading the results in chunks costs, reported by `evalq status`.
    ingest_peak_rss_kb: int | None = None
    ingest_start_peak_rss_kb: int | None = None  # the same peak just before ingesting began
    # When a poll first found the batch SUCCEEDED with no output attached (None once it is):
    # it is polled again, for EVALQ_BATCH_OUTPUT_WAIT_S, and never sent again meanwhile.
    output_missing_since: float | None = None
    server_error: str | None = None  # the batch's own error, as the server gave it (JSON)
    unmatched: int = 0  # results that named no request of this batch: never used
    conflicts: int = 0  # requests answered more than once in its output: no answer used
    # Objects in its output folder that are not the service's results files: never read; how
    # many, and the first few names (relative to the folder), for `evalq status`.
    ignored_objects: int = 0
    ignored_names: list[str] = []
    # The last time a poll or an ingest of this batch failed (epoch s), and why: `evalq status`
    # shows it beside the time since the last poll that answered.
    last_error: str | None = None
    last_error_at: float | None = None

    @property
    def awaiting_output(self) -> bool:
        return self.state == "SUCCEEDED" and self.output_missing_since is not None

    @property
    def finished(self) -> bool:
        """Nothing more will come of it: ingested, or ended without answers."""
        return self.ingested or self.state in ENDED_UNANSWERED or self.state == ABANDONED

    def age_s(self, now: float | None = None) -> float | None:
        if self.submitted_at is None:
            return None
        return (time.time() if now is None else now) - self.submitted_at


def records(store: Store, job_id: str) -> list[BatchRecord]:
    """The job's batches, oldest round first."""
    found = [BatchRecord.model_validate_json(raw) for raw in store.batch_records(job_id).values()]
    return sorted(found, key=lambda r: (r.round, r.id))


def save(store: Store, job_id: str, record: BatchRecord) -> None:
    store.save_batch_record(job_id, record.id, record.model_dump_json())


def get(store: Store, job_id: str, batch_id: str) -> BatchRecord | None:
    raw = store.batch_records(job_id).get(batch_id)
    return BatchRecord.model_validate_json(raw) if raw else None


def current_round(store: Store, job_id: str) -> list[BatchRecord]:
    """The batches of the latest round (empty before the first)."""
    found = records(store, job_id)
    if not found:
        return []
    latest = max(r.round for r in found)
    return [r for r in found if r.round == latest]


def in_flight(store: Store, job_id: str) -> list[BatchRecord]:
    return [r for r in current_round(store, job_id) if not r.finished]


def next_poll_s(interval_s: float, max_s: float) -> float:
    """The poll interval backs off by half each time, up to max_s."""
    return min(max_s, interval_s * 1.5)


def by_state(all_records: list[BatchRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in all_records:
        state = "INGESTED" if record.ingested else record.state
        counts[state] = counts.get(state, 0) + 1
    return counts


def note_error(store: Store, job_id: str, batch_id: str, error: str, at: float) -> None:
    """Record that a poll or an ingest of the batch failed with `error` (a batch no longer in
    the ledger is left alone: its job is gone)."""
    record = get(store, job_id, batch_id)
    if record is not None:
        save(store, job_id, record.model_copy(update={"last_error": error, "last_error_at": at}))
