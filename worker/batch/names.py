"""Batch mode's task names, apart from the tasks: the client, the watchdog and the tasks
send them by name; and the display name a batch is created under."""

from __future__ import annotations

from collections.abc import Callable

SUBMIT_BATCH = "evalq.submit_batch"
POLL_BATCH = "evalq.poll_batch"
INGEST_BATCH = "evalq.ingest_batch"

# send(task name, args, countdown_s): how batch mode enqueues its next step.
Send = Callable[[str, tuple[object, ...], float | None], None]


def display_name(job_id: str, batch_id: str) -> str:
    """The name a batch is created under on the server: how evalq finds it again without its
    ledger (adopting one created just before a crash, cancelling one whose job is gone)."""
    return f"evalq-{job_id}-{batch_id}"
