"""`evalq archive`: write ended jobs to the archive by hand, for jobs that ended before the
archive existed or whose write a person wants done at once, with the outcome printed."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.client.jobs.lookup import check_job_id
from evalq.client.reads import JobReader
from evalq.core.errors import EvalqError
from evalq.worker.jobs.archiving import ENDED


@dataclass(frozen=True)
class Archived:
    job_id: str
    status: str
    rows: int
    where: str


def archive_job(reader: JobReader, job_id: str) -> Archived:
    """Write one ended job from Redis to the reader's archive (replacing any earlier record);
    a running or paused job is refused: it is written when it ends."""
    reads, archive = reader.job_reads, reader.archive
    if archive is None:
        raise EvalqError("the archive is off (EVALQ_ARCHIVE_URL=off): nothing to write to")
    status = reads.status(check_job_id(job_id))
    if status == "unknown":
        if archive.job(job_id) is not None:
            return Archived(job_id, "archived", 0, archive.place.shown)
        raise EvalqError(
            f"no job {job_id!r} in Redis at {reads.address()}: only a job Redis still has can "
            f"be archived (the archive at {archive.place.shown} does not have it either)"
        )
    if status not in ENDED:
        raise EvalqError(
            f"job {job_id} is {status}: a job is archived when it ends (finished or cancelled); "
            f"`evalq cancel {job_id}` ends it now"
        )
    record = reader.job_control.archive(job_id, archive, written_by="evalq archive")
    return Archived(job_id, status, len(record.rows), archive.place.shown)


def ended_in_redis(reader: JobReader) -> list[str]:
    """Every ended job Redis has (for `evalq archive --all`), oldest first."""
    out = []
    for job_id in reversed(reader.job_reads.job_ids(limit=0)):
        if reader.job_reads.status(job_id) in ENDED:
            out.append(job_id)
    return out
