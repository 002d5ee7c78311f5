"""The Archive: one database, opened on first use (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.engine import Engine

from evalq.core.models import JobSummary, Question, RowResult
from evalq.worker.archive.engine import archive_errors, open_archive, reopen
from evalq.worker.archive.errors import ArchiveUnavailable
from evalq.worker.archive.filters import JobFilter
from evalq.worker.archive.place import ArchivePlace, archive_place
from evalq.worker.archive.reader import ArchivedJob
from evalq.worker.archive.record import JobRecord


class Archive:
    """One archive, opened on first use; every method raises ArchiveUnavailable (one line
    naming the archive) when the database can not be reached or used."""

    def __init__(self, place: ArchivePlace) -> None:
        self.place = place

    @classmethod
    def at(cls, setting: str | None) -> Archive | None:
        """The archive EVALQ_ARCHIVE_URL (or a flag) names; None when it is "off"."""
        place = archive_place(setting)
        return None if place is None else cls(place)

    @property
    def engine(self) -> Engine:
        """The process's engine for this archive (one per URL), its schema checked: again
        after a write that could not be confirmed dropped it (evalq.worker.archive.confirm)."""
        return open_archive(self.place)

    def open(self) -> None:
        """Open it now (schema created or upgraded): ArchiveUnavailable if it can't be."""
        with archive_errors(self.place):
            _ = self.engine

    def write(self, record: JobRecord) -> None:
        """Write the job's record and confirm it reads back where readers look (Unconfirmed,
        an ArchiveUnavailable, when it does not)."""
        from evalq.worker.archive.confirm import check_folder, confirm
        from evalq.worker.archive.writer import write_record

        check_folder(self.place)
        try:
            with archive_errors(self.place):
                written = write_record(self.engine, record)
        except ArchiveUnavailable:
            reopen(self.place)  # the next try opens afresh (a file made anew needs its schema)
            raise
        confirm(self.place, record, written)

    def job(self, job_id: str) -> ArchivedJob | None:
        from evalq.worker.archive.reader import load_job

        with archive_errors(self.place):
            return load_job(self.engine, job_id)

    def summaries(self, which: JobFilter) -> list[JobSummary]:
        from evalq.worker.archive.reader import list_summaries

        with archive_errors(self.place):
            return list_summaries(self.engine, which)

    def ids_with_prefix(self, prefix: str) -> list[str]:
        from evalq.worker.archive.reader import job_ids_with_prefix

        with archive_errors(self.place):
            return job_ids_with_prefix(self.engine, prefix)

    def question_sets(self, job_id: str) -> dict[str, list[Question]]:
        from evalq.worker.archive.reader import question_sets

        with archive_errors(self.place):
            return question_sets(self.engine, job_id)

    def rows(self, which: JobFilter) -> Iterator[tuple[JobSummary, RowResult]]:
        from evalq.worker.archive.reader import iter_rows

        with archive_errors(self.place):
            yield from iter_rows(self.engine, which)

    def delete(self, *job_ids: str) -> None:
        from evalq.worker.archive.writer import delete_jobs

        with archive_errors(self.place):
            delete_jobs(self.engine, job_ids)
