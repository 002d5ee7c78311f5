"""Every Redis key evalq writes, named in one place (as arq keeps its key names in one module).

The Store (worker.store) is the only module that talks to Redis; it, the call cache, the
limiter, the watchdog and the uploader take their key names from here. The domain never spells
a key: it names a shared entry by a digest (evalq.metrics.gecko.metric.rubric_cache_id), and the runtime turns
that into a key. The spellings are a stored format: a job written by an older evalq is read by
these names, so a name here changes only with a migration. Queue names are the broker's, not
ours, and live in worker.queues.

All job keys expire result_ttl_s after their last write; rubrics after rubric_ttl_s, replies
after call_cache_ttl_s.

    evalq:jobs                          ZSET  job id -> created_at
    evalq:jobs:active                   SET   jobs the watchdog looks after (running or paused)
    evalq:turns                         ZSET  job id -> created_at: online jobs with rows waiting
                                              for a turn or holding one (worker.turns)
    evalq:workers                       ZSET  worker name -> when its registration lapses
    evalq:workers:shares                HASH  worker name -> its share of the turns' window, rows
    evalq:job:{job}                     HASH  config (JSON), status, pause_reason, counters
                                              (rows_done, rows_scored/partial/failed,
                                              failed:{reason}, judge_calls, prompt_tokens,
                                              output_tokens, rubric_cache_hits, cache_hits,
                                              retries, rate_limited, limiter_wait_ms,
                                              simulated_calls, redriven, unit_tasks,
                                              units_inline), spent_nanos, budget_nanos,
                                              reserved_nanos, {status}_at; priority,
                                              max_in_flight (turns);
                                              calls_open_at_cancel; what escaped a
                                              task's code: task_errors (how many),
                                              task_error_last ("Type: message", clipped),
                                              task_error_task, task_error_at (epoch s)
    evalq:job:{job}:rows                LIST  every row's line, rejected lines included, in order
    evalq:job:{job}:waiting             LIST  lines waiting for a turn, in order (online mode)
    evalq:job:{job}:turns               SET   lines holding a turn: queued, running or retrying
    evalq:job:{job}:activity            ZSET  line -> last sign of life (the watchdog's clock)
    evalq:job:{job}:redrives            HASH  line -> "re-drives without progress:verdicts seen:
                                              when last re-driven"
    evalq:job:{job}:row:{line}          STRING RowInput JSON (what the producer validated)
    evalq:job:{job}:plan:{line}         STRING the row's Plan JSON (its rubric and units)
    evalq:job:{job}:verdicts:{line}     HASH  question index -> Verdict JSON (first write wins)
    evalq:job:{job}:done                SET   lines already counted
    evalq:job:{job}:results             HASH  line -> RowResult JSON
    evalq:job:{job}:unscored            HASH  reason -> unscored question count
    evalq:job:{job}:summary             STRING JobSummary JSON, written when the last row lands
    evalq:job:{job}:reservations        ZSET  "{id}:{estimated nanos}" -> expires at (ms, Redis
                                              time): the cost reserved by each judge call in
                                              flight of a job with a spend cap; the job hash's
                                              reserved_nanos is their sum (worker.budget)
    evalq:job:{job}:fatal               HASH  refusal (code, status, message) -> times seen; the
                                              job pauses when one reaches EVALQ_FATAL_ERROR_LIMIT;
                                              ~since: when the counts restarted (last resume)
    evalq:job:{job}:file:{sha256}       STRING a large media file's Files API record (name, URI)
    evalq:job:{job}:file:{sha256}:lock  STRING the worker uploading that file (owner token)
    evalq:job:{job}:batches             HASH  batch mode's ledger: local batch id (r{round}-{n})
                                              -> BatchRecord JSON (server name, model, state,
                                              request counts, submitted-at, last poll, ingested)
    evalq:job:{job}:batch:{id}:units    LIST  the batch's requests in order: "{line}\t{digest}"
    evalq:job:{job}:batch_replies       HASH  call digest -> a batch's result for it (response
                                              or error JSON), read by the next sweep
    evalq:job:{job}:batch_served        SET   digests whose reply was accounted once already;
                                              "unused@{batch}" once its unmatched results are
    evalq:job:{job}:batch_tries         HASH  digest -> batches a request failed in transiently
                                              (or got no result from); "{digest}@{batch}" -> 1
                                              marks each batch counted
    evalq:job:{job}:batch_meta          HASH  round, last_sweep_at, expired, fallback; the
                                              watchdog's re-attaches without progress:
                                              reattach_strikes, reattach_seen, reattach_at
    evalq:job:{job}:batch_lock          STRING the worker sweeping or submitting now
    evalq:rubric:{sha256}               STRING Rubric JSON, shared across jobs
    evalq:rubric:{sha256}:claim         STRING the worker writing that rubric (owner token): the
                                              prompt's other cells wait for it
    evalq:call:{sha256}                 STRING a judge reply, shared across jobs (call cache)
    evalq:limiter:{model}:requests|tokens STRING the global limiter's schedule (GCRA)
    evalq:watchdog:lock                 STRING which worker sweeps now
    evalq:archive:pending               ZSET  job id -> when its archive write is next due: set
                                              when the job ends (finished, cancelled), removed
                                              once written (worker.archiving)
    evalq:archive:writers               HASH  worker name -> "{archive}\t{epoch s}": the archive
                                              each live worker writes to, for the warning when
                                              they differ
The job hash also holds the archive's fields: archived_at (epoch s of the last write),
archive_error (the last failed write, with archive_tries) and archive_held (its keys made
persistent until the write succeeds).
"""

from __future__ import annotations

JOBS = "evalq:jobs"
ACTIVE_JOBS = "evalq:jobs:active"
TURNS = "evalq:turns"
WORKERS = "evalq:workers"
WORKER_SHARES = "evalq:workers:shares"
JOB_PREFIX = "evalq:job:"  # take_turns.lua builds each job's keys from it (see job())
WATCHDOG_LOCK = "evalq:watchdog:lock"
ARCHIVE_PENDING = "evalq:archive:pending"
ARCHIVE_WRITERS = "evalq:archive:writers"

# Fields of the job hash (job()) the archive keeps (worker.archiving).
ARCHIVED_AT = "archived_at"  # when the job was last written to the archive, epoch s
ARCHIVE_ERROR = "archive_error"  # why the last write failed
ARCHIVE_TRIES = "archive_tries"  # failed writes since the job ended
ARCHIVE_HELD = "archive_held"  # 1 while its keys are kept from expiring until it is written

# Fields of the job hash (job()) recording exceptions that escaped a task's code
# (Store.record_task_error, worker.task_errors).
TASK_ERRORS = "task_errors"  # how many
TASK_ERROR_LAST = "task_error_last"  # the last one: "Type: message", clipped
TASK_ERROR_TASK = "task_error_task"  # the task it escaped from
TASK_ERROR_AT = "task_error_at"  # when, epoch s

# Fields of batch_meta() the watchdog keeps on a batch-mode job it re-attaches.
REATTACH_STRIKES = "reattach_strikes"  # re-attaches in a row without progress
REATTACH_SEEN = "reattach_seen"  # the job's progress as of the last one counted
REATTACH_AT = "reattach_at"  # when that one was counted


def job(job_id: str, *parts: str) -> str:
    """The job's hash, or (with parts) one of the job's other keys."""
    return ":".join(("evalq:job", job_id, *parts))


def job_rows(job_id: str) -> str:
    return job(job_id, "rows")


def waiting(job_id: str) -> str:
    return job(job_id, "waiting")


def turns(job_id: str) -> str:
    return job(job_id, "turns")


def activity(job_id: str) -> str:
    return job(job_id, "activity")


def redrives(job_id: str) -> str:
    return job(job_id, "redrives")


def row(job_id: str, line: str) -> str:
    return job(job_id, "row", line)


def plan(job_id: str, line: str) -> str:
    return job(job_id, "plan", line)


def verdicts(job_id: str, line: str) -> str:
    return job(job_id, "verdicts", line)


def done(job_id: str) -> str:
    return job(job_id, "done")


def results(job_id: str) -> str:
    return job(job_id, "results")


def unscored(job_id: str) -> str:
    return job(job_id, "unscored")


def summary(job_id: str) -> str:
    return job(job_id, "summary")


def reservations(job_id: str) -> str:
    return job(job_id, "reservations")


def fatal(job_id: str) -> str:
    return job(job_id, "fatal")


def upload(job_id: str, digest: str) -> str:
    return job(job_id, "file", digest)


def upload_lock(job_id: str, digest: str) -> str:
    return upload(job_id, digest) + ":lock"


def rubric(digest: str) -> str:
    return f"evalq:rubric:{digest}"


def claim(entry_key: str) -> str:
    """Who is writing a shared entry (a rubric) now."""
    return entry_key + ":claim"


def call(digest: str) -> str:
    return f"evalq:call:{digest}"


def limiter(model: str) -> tuple[str, str]:
    """The model's request schedule and token schedule."""
    return f"evalq:limiter:{model}:requests", f"evalq:limiter:{model}:tokens"


def batches(job_id: str) -> str:
    return job(job_id, "batches")


def batch_units(job_id: str, batch: str) -> str:
    return job(job_id, "batch", batch, "units")


def batch_replies(job_id: str) -> str:
    return job(job_id, "batch_replies")


def batch_served(job_id: str) -> str:
    return job(job_id, "batch_served")


def batch_tries(job_id: str) -> str:
    return job(job_id, "batch_tries")


def batch_meta(job_id: str) -> str:
    return job(job_id, "batch_meta")


def batch_lock(job_id: str) -> str:
    return job(job_id, "batch_lock")
