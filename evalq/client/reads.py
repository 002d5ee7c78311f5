"""Reading a job back: its summary, results, stored rows and batches, Redis first and the archive
second, with the same texts either way. The part of the client the read-only commands need, so
they load no Celery app, no dataset loader and no google-genai."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from evalq.client.jobs.lookup import check_job_id
from evalq.core.candidates import cell_candidates
from evalq.core.errors import JobNotFound
from evalq.core.groups import check_group_columns, group_by_columns, group_summaries
from evalq.core.models import JobConfig, JobSummary, RowInput, RowResult
from evalq.worker.archive.filters import JobFilter
from evalq.worker.jobs.reads import REDIS_DOWN, JobReads
from evalq.worker.settings import Settings, get_settings

if TYPE_CHECKING:
    from evalq.client.question_sets import QuestionSets
    from evalq.worker.archive.archive import Archive
    from evalq.worker.archive.reader import ArchivedJob
    from evalq.worker.batch.ledger import BatchRecord
    from evalq.worker.jobs.control import JobControl

NEAR_LIMIT = 0.8  # of maxmemory: past it, `evalq status` warns
T = TypeVar("T")


def memory_warning(address: str, used: int, limit: int) -> str | None:
    """What to say when Redis nears its maxmemory: under noeviction it then refuses writes,
    so submits fail and tasks wait on it. None below NEAR_LIMIT or with no limit set."""
    if limit <= 0 or used < NEAR_LIMIT * limit:
        return None
    mib = 1024 * 1024
    return (
        f"Redis at {address} uses {used / mib:.0f} MiB of its maxmemory {limit / mib:.0f} MiB "
        f"({used / limit:.0%}); at the limit it refuses writes (submits fail, workers wait). "
        "Raise maxmemory (docs/operations/redis.md), let finished jobs expire sooner "
        "(EVALQ_RESULT_TTL_S), or wait for running jobs to finish before submitting more."
    )


def _place(config: JobConfig) -> Callable[[RowResult], tuple[int, str, int, str]]:
    """Results in dataset order, a multi-candidate job's cells in the order its candidates
    were named: the one order every reader shows, from Redis or the archive."""
    order = {c: i for i, c in enumerate(cell_candidates(config.metric, config.options) or [])}

    def place(r: RowResult) -> tuple[int, str, int, str]:
        candidate = r.candidate or ""
        return r.line, r.id, order.get(candidate, len(order)), candidate

    return place


class JobReader:
    """Reads of stored jobs; the Client builds on it. Redis is read through evalq.worker.jobs.reads
    alone, and steered through evalq.worker.jobs.control alone."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.job_reads = JobReads.from_settings(self.settings)
        self._archived: dict[str, ArchivedJob] = {}
        self.redis_error: str | None = None  # why Redis was passed over for the archive

    @cached_property
    def job_control(self) -> JobControl:
        """Steering the jobs of this Redis, built on first use: the read-only commands never
        load it, and a wait needs it only to finish a job whose last row's worker died."""
        return self.job_reads.control(self.settings)

    # ---- where a job is read from ----

    @cached_property
    def archive(self) -> Archive | None:
        """The archive EVALQ_ARCHIVE_URL names (None: off)."""
        from evalq.worker.archive.archive import Archive

        return Archive.at(self.settings.archive_url)

    def is_live(self, job_id: str) -> bool:
        """Whether Redis has the job now. With Redis out of reach, False when the archive has
        the job (an ended job reads the same from there), else the Redis error is raised."""
        try:
            return self.job_reads.exists(check_job_id(job_id))
        except REDIS_DOWN as exc:
            if self._from_archive(job_id) is None:
                raise
            self.redis_error = f"Redis at {self.redis_address()} did not answer ({exc})"
            return False

    def archived(self, job_id: str) -> ArchivedJob:
        """The job as the archive keeps it; JobNotFound naming both places when neither has it."""
        found = self._from_archive(check_job_id(job_id))
        if found is None:
            where = (
                "the archive is off (EVALQ_ARCHIVE_URL=off)"
                if self.archive is None
                else f"nor in the archive at {self.archive.place.shown}"
            )
            raise JobNotFound(
                f"no job {job_id!r} in Redis at {self.redis_address()} (never created there, "
                f"expired, or lost when Redis restarted without its append-only file), {where}"
            )
        return found

    def _from_archive(self, job_id: str) -> ArchivedJob | None:
        if job_id not in self._archived:
            found = None if self.archive is None else self.archive.job(job_id)
            if found is None:
                return None
            self._archived[job_id] = found
        return self._archived[job_id]

    def _read(self, job_id: str, live: Callable[[], T], archived: Callable[[ArchivedJob], T]) -> T:
        return live() if self.is_live(job_id) else archived(self.archived(job_id))

    def config(self, job_id: str) -> JobConfig:
        return self._read(job_id, lambda: self.job_reads.config(job_id), lambda job: job.config)

    # ---- a job's parts ----

    def summary(self, job_id: str, group_by: Sequence[str] | None = None) -> JobSummary:
        """The job's summary; `group_by` adds figures per value of those columns for this read
        (to the job's own --group-by), refusing a column no row has."""
        summary = self._read(
            job_id, lambda: self.job_reads.summary(job_id), lambda job: job.summary
        )
        if not group_by:
            return summary
        columns = list(dict.fromkeys([*summary.group_by, *group_by_columns(group_by)]))
        rows = self.results(job_id)
        check_group_columns(columns, rows)
        groups = group_summaries(rows, columns, self.candidates(job_id))
        return summary.model_copy(update={"group_by": columns, "groups": groups})

    def rows_total(self, job_id: str) -> int:
        """How many rows (cells) the job counts, as stored at submit."""
        return self.config(job_id).rows_total

    def results(self, job_id: str) -> list[RowResult]:
        """Every result so far, in dataset order (a multi-candidate job's cells in the order
        its candidates were named)."""
        config = self.config(job_id)  # raises JobNotFound
        rows = self._read(
            job_id, lambda: list(self.job_reads.results(job_id)), lambda job: job.results
        )
        return sorted(rows, key=_place(config))

    def candidates(self, job_id: str) -> list[str]:
        """A multi-candidate job's candidate columns, in the order given (empty otherwise)."""
        config = self.config(job_id)
        return cell_candidates(config.metric, config.options) or []

    def data_roots(self, job_id: str) -> list[str]:
        """The folders the job's local media may be read from (resolved at submit)."""
        return list(self.config(job_id).data_roots)

    def inputs(self, job_id: str, candidate: str | None = None) -> dict[str, RowInput]:
        """The validated rows as the producer stored them (for reports: media, prompts), by id;
        in a multi-candidate job, the cells of `candidate` (the first candidate's if None)."""
        out: dict[str, RowInput] = {}
        for row in self._read(job_id, lambda: self.job_reads.rows(job_id), lambda j: j.inputs):
            if candidate is not None and row.candidate != candidate:
                continue
            out.setdefault(row.id, row)
        return out

    def stored_inputs(self, job_id: str) -> list[RowInput]:
        """Every stored row (each cell of a multi-candidate job) in dataset order; a line
        refused at submit has none."""
        rows = self._read(job_id, lambda: self.job_reads.rows(job_id), lambda j: j.inputs)
        return sorted(rows, key=lambda row: (row.line, row.candidate or ""))

    def judged_texts(self, job_id: str, results: Sequence[RowResult]) -> list[dict[str, str]]:
        """What the judge was shown of each of `results` (the job's, in their order), under
        the dataset's column names: evalq.client.output.judged_texts. Every cell's stored row, from
        Redis or the archive."""
        from evalq.client.output.judged_texts import judged_texts

        rows = self._read(job_id, lambda: self.job_reads.rows(job_id), lambda j: j.inputs)
        return judged_texts(self.config(job_id), results, rows)

    def question_sets(self, job_id: str) -> QuestionSets:
        """The questions a Gecko job asked, by prompt (evalq.client.question_sets), for
        `--questions-from JOB`: from Redis, else the archive (which keeps them)."""
        from evalq.client.question_sets import QuestionSets, stored_question_sets

        def archived(job: ArchivedJob) -> QuestionSets:
            assert self.archive is not None
            return QuestionSets(job.config.metric, self.archive.question_sets(job_id))

        return self._read(job_id, lambda: stored_question_sets(self.job_reads, job_id), archived)

    def batches(self, job_id: str) -> list[BatchRecord]:
        """A batch-mode job's batches as its ledger records them (empty for online jobs)."""
        from evalq.worker.batch import ledger

        def archived(job: ArchivedJob) -> list[BatchRecord]:
            raw = json.loads(job.batches_json) if job.batches_json else []
            return [ledger.BatchRecord.model_validate(item) for item in raw]

        return self._read(job_id, lambda: self.job_reads.batches(job_id), archived)

    def batch_bound(self, job_id: str) -> int | None:
        """The most batches the job may send (EVALQ_BATCH_MAX_BATCHES as its workers apply
        it, recorded by each sweep); None before the first sweep."""

        return self._read(
            job_id, lambda: self.job_reads.max_batches(job_id), lambda job: job.batch_bound
        )

    # ---- many jobs ----

    def jobs(
        self, which: JobFilter | None = None, on_missing: Callable[[str], None] | None = None
    ) -> list[JobSummary]:
        """The history: live jobs (running or paused) on top, then ended ones from Redis and
        the archive, the newest first, each job once (Redis's copy when both have it). With
        `on_missing`, Redis or the archive out of reach is said to it and the other listed;
        without, the error is raised."""
        from evalq.worker.archive.errors import ArchiveUnavailable

        which = which or JobFilter()
        try:
            live = list(self._redis_jobs(which))
        except REDIS_DOWN as exc:
            if on_missing is None:
                raise
            on_missing(f"Redis at {self.redis_address()} did not answer ({exc}): ended jobs only")
            live = []
        seen = {s.job_id for s in live}
        try:
            archived = [] if self.archive is None else self.archive.summaries(which)
        except ArchiveUnavailable as exc:
            if on_missing is None:
                raise
            on_missing(f"{exc}; jobs in Redis only")
            archived = []
        merged = live + [s for s in archived if s.job_id not in seen]
        running = [s for s in merged if s.status in ("running", "paused")]
        ended = [s for s in merged if s.status not in ("running", "paused")]
        ended.sort(key=lambda s: (-(s.created_at or 0.0), s.job_id))
        out = running + ended
        return out if which.limit is None else out[: which.limit]

    def _redis_jobs(self, which: JobFilter) -> Iterator[JobSummary]:
        """Redis's jobs that `which` selects (checked on their config, read a page at a time,
        so only those selected have their summary read), the newest first."""
        found = 0
        ids = self.job_reads.job_ids(limit=0)  # 0: every id, newest first
        if which.id_prefix:  # only their configs are read
            ids = [job_id for job_id in ids if job_id.startswith(which.id_prefix)]
        for start in range(0, len(ids), 200):
            configs = self.job_reads.configs(ids[start : start + 200])
            for job_id, config in configs.items():
                if which.limit is not None and found >= which.limit:
                    return
                if not _selected(config, which):
                    continue
                try:
                    summary = self.job_reads.summary(job_id)
                except Exception:  # a job expiring as we read must not hide the others
                    continue
                if which.judge_version and which.judge_version not in judge_versions(summary):
                    continue
                found += 1
                yield summary

    def iter_jobs(self, limit: int = 50) -> Iterator[JobSummary]:
        yield from self.jobs(JobFilter(limit=limit))

    # ---- Redis itself ----

    def memory_warning(self) -> str | None:
        """A warning when Redis is near its maxmemory (one INFO memory), else None."""
        used, limit = self.job_reads.memory()
        return memory_warning(self.redis_address(), used, limit)

    def redis_address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        return self.job_reads.address()


def judge_versions(summary: JobSummary) -> set[str]:
    """Every judge model version the job's verdicts reported, whichever model answered."""
    from evalq.core.versions import setup_versions

    return set().union(*setup_versions(summary.judge_setup).values())


def _selected(config: JobConfig, which: JobFilter) -> bool:
    """JobFilter's rules applied to a job's config (the archive applies them in SQL)."""
    if which.metric and config.metric != which.metric:
        return False
    if which.name and which.exact_name and config.name != which.name:
        return False
    if (
        which.name
        and not which.exact_name
        and which.name.lower() not in (config.name or "").lower()
    ):
        return False
    if which.dataset and which.dataset.lower() not in config.dataset.lower():
        return False
    if which.id_prefix and not config.job_id.startswith(which.id_prefix):
        return False
    return which.since is None or config.created_at >= which.since
