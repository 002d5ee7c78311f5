"""Every Redis key evalq writes, named in one place; the Lua scripts are given theirs as KEYS
and ARGV, and the domain never spells one (it names a shared entry by a digest). Queue names
are the broker's, in evalq.worker.dispatch.queues."""

from __future__ import annotations

from collections.abc import Callable

PREFIX = "evalq"  # every key's first part: the ACLs give evalq's users `evalq:*` (docs/operations/security.md)


def _key(*parts: str) -> str:
    # The spellings are a stored format: jobs written by an older evalq are read by these names,
    # so a name changes only with a migration.
    return ":".join((PREFIX, *parts))


JOBS = _key("jobs")
ACTIVE_JOBS = _key("jobs", "active")
TURNS = _key("turns")
WORKERS = _key("workers")
WORKER_SHARES = _key("workers", "shares")
WATCHDOG_LOCK = _key("watchdog", "lock")
ARCHIVE_PENDING = _key("archive", "pending")
ARCHIVE_WRITERS = _key("archive", "writers")
FAILOVERS = _key("failovers")

# Fields of the job hash (job()) the archive keeps (evalq.worker.jobs.archiving).
ARCHIVED_AT = "archived_at"  # when the job was last written to the archive, epoch s
ARCHIVE_ERROR = "archive_error"  # why the last write failed
ARCHIVE_TRIES = "archive_tries"  # failed writes since the job ended
ARCHIVE_HELD = "archive_held"  # 1 while its keys are kept from expiring until it is written

# Fields of the job hash (job()) recording exceptions that escaped a task's code
# (Store.record_task_error, evalq.worker.celery_app.task_errors).
TASK_ERRORS = "task_errors"  # how many
TASK_ERROR_LAST = "task_error_last"  # the last one: "Type: message", clipped
TASK_ERROR_TASK = "task_error_task"  # the task it escaped from
TASK_ERROR_AT = "task_error_at"  # when, epoch s

# Fields of the job hash (job()) noting a Redis failover the job lived through
# (evalq.worker.jobs.failover, Store.reconcile_spend).
FAILOVER_AT = "failover_at"  # when a worker first saw it, epoch s
FAILOVER_CALLS_RESTORED = "failover_calls_restored"  # calls whose lost spend was added back
FAILOVER_CALLS_UNCONFIRMED = "failover_calls_unconfirmed"  # calls whose spend may be missing

# Fields of batch_meta() the watchdog keeps on a batch-mode job it re-attaches.
REATTACH_STRIKES = "reattach_strikes"  # re-attaches in a row without progress
REATTACH_SEEN = "reattach_seen"  # the job's progress as of the last one counted
REATTACH_AT = "reattach_at"  # when that one was counted


def job(job_id: str, *parts: str) -> str:
    """The job's hash, or (with parts) one of the job's other keys."""
    return _key("job", job_id, *parts)


def _of_job(part: str) -> Callable[[str], str]:
    """The key of one of a job's parts, by the job's id: `evalq:job:{job}:{part}`."""

    def key(job_id: str) -> str:
        return job(job_id, part)

    key.__name__ = key.__qualname__ = part
    return key


def _of_row(part: str) -> Callable[[str, str], str]:
    """The key of one of a row's parts, by its job's id and its line: `...:{part}:{line}`."""

    def key(job_id: str, line: str) -> str:
        return job(job_id, part, line)

    key.__name__ = key.__qualname__ = part
    return key


job_rows = _of_job("rows")
waiting = _of_job("waiting")
turns = _of_job("turns")
activity = _of_job("activity")
redrives = _of_job("redrives")
done = _of_job("done")
results = _of_job("results")
unscored = _of_job("unscored")
summary = _of_job("summary")
reservations = _of_job("reservations")
fatal = _of_job("fatal")
batches = _of_job("batches")
batch_replies = _of_job("batch_replies")
batch_served = _of_job("batch_served")
batch_tries = _of_job("batch_tries")
batch_meta = _of_job("batch_meta")
batch_lock = _of_job("batch_lock")
spent_by = _of_job("spent_by")

row = _of_row("row")
plan = _of_row("plan")
verdicts = _of_row("verdicts")


def upload(job_id: str, digest: str) -> str:
    return job(job_id, "file", digest)


def upload_lock(job_id: str, digest: str) -> str:
    return upload(job_id, digest) + ":lock"


def batch_units(job_id: str, batch: str) -> str:
    return job(job_id, "batch", batch, "units")


def rubric(digest: str) -> str:
    return _key("rubric", digest)


def claim(entry_key: str) -> str:
    """Who is writing a shared entry (a rubric) now."""
    return entry_key + ":claim"


def call(digest: str) -> str:
    return _key("call", digest)


def limiter(model: str) -> tuple[str, str]:
    """The model's request schedule and token schedule."""
    return _key("limiter", model, "requests"), _key("limiter", model, "tokens")
