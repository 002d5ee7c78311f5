"""Job-level steps shared by tasks and the client: counting a finished (or failed) row,
writing the summary. (A row's own end, scored or failed: evalq.worker.lifecycle.ending.)"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from evalq.core.counters import JobCounters
from evalq.core.models import JobConfig, JobSummary, RowResult
from evalq.core.summary import build_summary, spend_is_current
from evalq.core.verdicts import failed_row
from evalq.worker.store import RowRef, Store

log = logging.getLogger(__name__)

# What this process does with a job it has just ended: a worker writes it to the archive
# (evalq.worker.jobs.archiving, installed when the worker starts); a client leaves that to the
# workers.
_end_hooks: list[Callable[[str], object]] = []


def on_job_end(hook: Callable[[str], object]) -> None:
    """Run `hook(job_id)` in this process after each job it finishes (replacing any before)."""
    _end_hooks[:] = [hook]


def current_summary(store: Store, job_id: str) -> JobSummary:
    """The stored final summary if the job finished, else one computed from what is there now.
    A finished job billed again after its summary was written (a call in flight at its end) is
    computed again, so its cost counts that call too."""
    counters = store.counters(job_id)
    if counters.status == "finished" and (stored := store.summary_json(job_id)):
        summary = JobSummary.model_validate_json(stored)
        if spend_is_current(summary, counters):
            return summary
    return _summary_from_store(store, job_id, store.config(job_id), counters)


def finalize(store: Store, job_id: str) -> JobSummary:
    """Finish the job and write its summary once every row is counted; safe to run twice (the
    summary is computed from stored results only). While rows are missing it changes nothing
    and returns the summary so far: whoever asks, a job is never finished with rows missing."""
    config = store.config(job_id)
    if not store.mark_finished(job_id, config.rows_total).complete:
        log.warning("job %s: not finished, rows are still missing", job_id)
        return current_summary(store, job_id)
    store.deactivate(job_id)
    summary = _summary_from_store(store, job_id, config, store.counters(job_id))
    store.save_summary(job_id, summary.model_dump_json())
    store.settle_expiry(job_id)
    for hook in _end_hooks:
        hook(job_id)
    return summary


def refresh_summary(store: Store, job_id: str) -> None:
    """Write a finished job's summary again from what is stored now: its counters changed
    after it ended (spend restored after a Redis failover, evalq.worker.jobs.failover)."""
    counters = store.counters(job_id)
    if counters.status == "finished":
        summary = _summary_from_store(store, job_id, store.config(job_id), counters)
        store.save_summary(job_id, summary.model_dump_json())


def finish_row(store: Store, job_id: str, result: RowResult, rows_total: int) -> None:
    """Count the row once; the call that counts the last row writes the job summary."""
    done = store.finish_row(job_id, result)
    if done >= rows_total:
        finalize(store, job_id)


def redrive(
    store: Store,
    send: Callable[[str, str], None],
    job_id: str,
    lines: list[str],
    *,
    at: float | None = None,
) -> int:
    """Enqueue prepare_row again for rows not yet counted. Safe with duplicates: stored
    plans and verdicts are reused and a row is counted once. `at` is the sign of life written
    for them (the watchdog's re-drive time, which Store.count_redrives compares with later
    ones)."""
    if not lines:
        return 0
    store.touch(job_id, *lines, at=at)
    for line in lines:
        send(job_id, line)
    store.incr(job_id, redriven=len(lines))
    return len(lines)


def give_up(store: Store, row: RowRef, redrives: int) -> None:
    """Fail a row the watchdog drove again `redrives` times in a row without progress, and
    count it (summary: redrive_capped). A task that finishes it later changes nothing."""
    given = store.row(row)
    error = (
        f"row {given.id}: gave up after {redrives} re-drives without a new verdict "
        "(EVALQ_MAX_REDRIVES): every task that took this row died or hung"
    )
    result = failed_row(
        given.id,
        given.line,
        given.prompt,
        "judge_error",
        error,
        candidate=given.candidate,
        extra=given.extra,
    )
    done = store.finish_row(row.job_id, result)
    if done < 0:
        return  # counted meanwhile
    store.incr(row.job_id, redrive_capped=1)
    if done >= store.config(row.job_id).rows_total:
        finalize(store, row.job_id)


def _summary_from_store(
    store: Store, job_id: str, config: JobConfig, counters: JobCounters
) -> JobSummary:
    """The summary computed now from what is stored: the counters, the unscored reasons and
    every row's result."""
    summary = build_summary(
        config, counters, store.unscored_counts(job_id), store.iter_results(job_id), time.time()
    )
    turns = store.turn_state(job_id)
    return summary.model_copy(
        update={
            "priority": turns.priority,
            "max_in_flight": turns.max_in_flight,
            "rows_in_flight": turns.holding,
            "rows_waiting": turns.waiting,
        }
    )
