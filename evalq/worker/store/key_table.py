"""What each Redis key of evalq.worker.store.keys holds: the table the manual's Redis key reference
shows (docs/reference/redis-keys.md, generated at build time by devtools/reference/keys_page.py).
Every shape here is made by calling evalq.worker.store.keys, and
tests/unit/worker/store/test_key_table.py checks that every key evalq.worker.store.keys makes has
its row and that no row names a key it does not make; tests/unit/docs checks that the built page
shows every one."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass

from evalq.worker.store import keys

# What a key's shape shows in place of each argument of its function in evalq.worker.store.keys.
JOB, LINE, SHA, MODEL, BATCH = "{job}", "{line}", "{sha256}", "{model}", "{batch}"
PLACEHOLDERS = {
    "job_id": JOB,
    "line": LINE,
    "digest": SHA,
    "model": MODEL,
    "batch": BATCH,
    "entry_key": keys.rubric(SHA),  # claims are taken on rubrics
}


@dataclass(frozen=True)
class Row:
    shapes: tuple[str, ...]
    type: str
    holds: str


def _row(shape: str | tuple[str, ...], kind: str, holds: str) -> Row:
    return Row(shape if isinstance(shape, tuple) else (shape,), kind, holds)


ROWS = (
    _row(keys.JOBS, "ZSET", "job id -> created_at"),
    _row(keys.ACTIVE_JOBS, "SET", "jobs the watchdog looks after (running or paused)"),
    _row(
        keys.TURNS,
        "ZSET",
        "job id -> created_at: online jobs with rows waiting for a turn or holding one "
        "(evalq.worker.dispatch.turns)",
    ),
    _row(keys.WORKERS, "ZSET", "worker name -> when its registration lapses"),
    _row(keys.WORKER_SHARES, "HASH", "worker name -> its share of the turns' window, rows"),
    _row(
        keys.job(JOB),
        "HASH",
        "config (JSON; its owner: who submitted it), status, pause_reason, `{status}_at`, ttl_s; counters (rows_done, "
        "rows_scored/partial/failed, `failed:{reason}`, judge_calls, prompt_tokens, "
        "output_tokens, rubric_cache_hits, cache_hits, retries, rate_limited, limiter_wait_ms, "
        "simulated_calls, redriven, unit_tasks, units_inline); spent_nanos, budget_nanos, "
        "reserved_nanos, calls_admitted; priority, max_in_flight (turns); calls_open_at_cancel; what escaped a "
        "task's code: task_errors (how many), task_error_last (`Type: message`, clipped), "
        "task_error_task, task_error_at (epoch s); the archive's: archived_at (its last "
        "write), archive_error and archive_tries (the last failed write), archive_held (its "
        "keys kept until the write succeeds); a Redis failover it lived through: failover_at, "
        "failover_calls_restored, failover_calls_unconfirmed",
    ),
    _row(
        keys.job_rows(JOB),
        "LIST",
        "every row's line, rejected lines included, in dataset order",
    ),
    _row(keys.waiting(JOB), "LIST", "lines waiting for a turn, in order (online mode)"),
    _row(keys.turns(JOB), "SET", "lines holding a turn: queued, running or retrying"),
    _row(keys.activity(JOB), "ZSET", "line -> last sign of life (the watchdog's clock)"),
    _row(
        keys.redrives(JOB),
        "HASH",
        "line -> `re-drives without progress:verdicts seen:when last re-driven`",
    ),
    _row(keys.row(JOB, LINE), "STRING", "RowInput JSON (the row as the producer validated it)"),
    _row(
        keys.plan(JOB, LINE),
        "STRING",
        "the row's Plan JSON (its rubric, generated response, units)",
    ),
    _row(
        keys.verdicts(JOB, LINE),
        "HASH",
        "question index -> Verdict JSON (first write wins)",
    ),
    _row(keys.done(JOB), "SET", "lines already counted"),
    _row(keys.results(JOB), "HASH", "line -> RowResult JSON"),
    _row(keys.unscored(JOB), "HASH", "reason -> unscored question count"),
    _row(keys.summary(JOB), "STRING", "JobSummary JSON, written when the last row lands"),
    _row(
        keys.reservations(JOB),
        "ZSET",
        "`{id}:{estimated nanos}` -> expires at (ms, Redis time): the cost reserved by each "
        "judge call in flight of a job with a spend cap; the job hash's reserved_nanos is "
        "their sum (evalq.worker.judges.budget)",
    ),
    _row(
        keys.fatal(JOB),
        "HASH",
        "refusal (code, status, message) -> times seen; the job pauses when one reaches "
        "EVALQ_FATAL_ERROR_LIMIT; `~since`: when the counts restarted (the last resume)",
    ),
    _row(
        keys.upload(JOB, SHA),
        "STRING",
        "a large media file's Files API record (name, URI), once per job",
    ),
    _row(keys.upload_lock(JOB, SHA), "STRING", "the worker uploading that file (owner token)"),
    _row(
        keys.batches(JOB),
        "HASH",
        "batch mode's ledger: local batch id (`r{round}-{n}`) -> BatchRecord JSON (server "
        "name, model, state, request counts, submitted-at, last poll, ingested)",
    ),
    _row(
        keys.batch_units(JOB, BATCH),
        "LIST",
        "the batch's requests in order: `{line}\\t{digest}`",
    ),
    _row(
        keys.batch_replies(JOB),
        "HASH",
        "call digest -> a batch's result for it (response or error JSON), read by the next sweep",
    ),
    _row(
        keys.batch_served(JOB),
        "SET",
        "digests whose reply was accounted once already; `unused@{batch}` once its unmatched "
        "results are",
    ),
    _row(
        keys.batch_tries(JOB),
        "HASH",
        "digest -> batches a request failed in transiently (or got no result from); "
        "`{digest}@{batch}` -> 1 marks each batch counted",
    ),
    _row(
        keys.batch_meta(JOB),
        "HASH",
        "round, ended (batches that ended unanswered), last_sweep_at, max_batches, fallback; "
        "the watchdog's re-attaches without progress: reattach_strikes, reattach_seen, "
        "reattach_at",
    ),
    _row(keys.batch_lock(JOB), "STRING", "the worker sweeping or submitting now"),
    _row(
        keys.spent_by(JOB),
        "HASH",
        "`{worker process}/{counter}` -> the spend that process wrote: after a Redis failover "
        "each process adds back what its own tallies hold beyond it (evalq.worker.store.tallies)",
    ),
    _row(
        keys.rubric(SHA),
        "STRING",
        "Rubric JSON, shared across jobs (EVALQ_RUBRIC_TTL_S)",
    ),
    _row(
        keys.claim(keys.rubric(SHA)),
        "STRING",
        "the worker writing that rubric (owner token): the prompt's other cells wait for it",
    ),
    _row(
        keys.call(SHA),
        "STRING",
        "a judge reply, shared across jobs: the call cache (EVALQ_CALL_CACHE_TTL_S)",
    ),
    _row(keys.limiter(MODEL), "STRING", "the global limiter's schedules (GCRA)"),
    _row(keys.WATCHDOG_LOCK, "STRING", "which worker sweeps now"),
    _row(
        keys.FAILOVERS,
        "HASH",
        "`{run_id}:{master_replid}` -> when a worker first found Redis changed to it: the "
        "first to record one re-drives the jobs' rows (evalq.worker.jobs.failover); kept for "
        "EVALQ_RESULT_TTL_S after the last",
    ),
    _row(
        keys.ARCHIVE_PENDING,
        "ZSET",
        "job id -> when its archive write is next due: set when the job ends (finished, "
        "cancelled), removed once written (evalq.worker.jobs.archiving)",
    ),
    _row(
        keys.ARCHIVE_WRITERS,
        "HASH",
        "worker name -> `{archive}\\t{epoch s}`: the archive each live worker writes to, for "
        "the warning when they differ",
    ),
)


def every_key_shape() -> set[str]:
    """The shape of every key evalq.worker.store.keys makes: each constant naming a key, and each
    public function called with the placeholders of its arguments (PLACEHOLDERS)."""
    return set(_shapes())


def _shapes() -> Iterator[str]:
    for name, value in vars(keys).items():
        if name.startswith("_"):
            continue
        if isinstance(value, str) and value.startswith(f"{keys.PREFIX}:"):
            yield value
        elif inspect.isfunction(value) and value.__module__ == keys.__name__:
            params = inspect.signature(value).parameters.values()
            args = [PLACEHOLDERS[p.name] for p in params if p.kind != p.VAR_POSITIONAL]
            made = value(*args)
            yield from made if isinstance(made, tuple) else (made,)
