"""The archive's errors: what a reading command says and the archiver retries on, whichever
database is behind it."""

from __future__ import annotations

from evalq.core.errors import EvalqError


class ArchiveUnavailable(EvalqError):
    """The archive can not be reached, opened or written: the job stays in Redis and its
    write is retried (evalq.worker.jobs.archiving); a reading command says so."""


class ArchiveSchemaTooNew(ArchiveUnavailable):
    """The archive was moved forward by a newer evalq than this one."""
