"""Batch mode's task names, apart from the tasks: the client, the watchdog and the tasks
send them by name."""

from __future__ import annotations

from collections.abc import Callable

SUBMIT_BATCH = "evalq.submit_batch"
POLL_BATCH = "evalq.poll_batch"
INGEST_BATCH = "evalq.ingest_batch"

# send(task name, args, countdown_s): how batch mode enqueues its next step.
Send = Callable[[str, tuple[object, ...], float | None], None]
