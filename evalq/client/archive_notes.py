"""What `evalq status` says of the archive, on standard error beside the summary (which prints
the same from Redis and from the archive): a write still pending and why, a job read from the
archive, and workers or this command pointed at different archives."""

from __future__ import annotations

import time

from evalq.client.output.formats import ago
from evalq.client.reads import JobReader
from evalq.worker.archive.mixed_archives import mixed_archives_warning, writers_fresh_s
from evalq.worker.archive.place import archive_place

ENDED = ("finished", "cancelled")


def archive_notes(reader: JobReader, job_id: str, status: str, live: bool) -> list[str]:
    place = archive_place(reader.settings.archive_url)
    notes: list[str] = []
    if not live:
        assert place is not None  # read from the archive, so there is one
        why = reader.redis_error or "Redis no longer has this job"
        notes.append(f"read from the archive at {place.shown}: {why}")
        return notes
    now = time.time()
    state = reader.job_reads.archive_state(job_id)
    if status in ENDED and state.due is not None:
        if state.tries:
            notes.append(
                f"archive: write pending, {state.tries} failed tries (last: {state.error}); "
                f"next try {_when(state.due, now)}. The job's keys are kept in Redis until "
                "it is written"
            )
        else:
            notes.append(f"archive: write pending (a worker writes it {_when(state.due, now)})")
    writers = reader.job_reads.archive_writers(
        since=now - writers_fresh_s(reader.settings.watchdog_interval_s)
    )
    mine = "off" if place is None else place.identity
    if (warning := mixed_archives_warning(writers, mine)) is not None:
        notes.append(f"warning: {warning}")
    return notes


def _when(due: float, now: float) -> str:
    return "now" if due <= now else f"in {ago(due - now)}"
