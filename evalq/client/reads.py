"""Reading a job back: its summary, results, stored rows and batches. The part of the client
`evalq status`, `results`, `jobs` and `report` need, so they load no Celery app, no dataset
loader and no google-genai."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from evalq.client.job_ids import check_job_id
from evalq.core.candidates import cell_candidates
from evalq.core.errors import JobNotFound
from evalq.core.groups import check_group_columns, group_summaries
from evalq.core.models import JobSummary, RowInput, RowResult
from worker.jobs import current_summary
from worker.settings import Settings, get_settings
from worker.store import Store

if TYPE_CHECKING:
    from worker.batch.ledger import BatchRecord

NEAR_LIMIT = 0.8  # of maxmemory: past it, `evalq status` warns


def memory_warning(address: str, used: int, limit: int) -> str | None:
    """What to say when Redis nears its maxmemory: under noeviction it then refuses writes,
    so submits fail and tasks wait on it. None below NEAR_LIMIT or with no limit set."""
    if limit <= 0 or used < NEAR_LIMIT * limit:
        return None
    mib = 1024 * 1024
    return (
        f"Redis at {address} uses {used / mib:.0f} MiB of its maxmemory {limit / mib:.0f} MiB "
        f"({used / limit:.0%}); at the limit it refuses writes (submits fail, workers wait). "
        "Raise maxmemory (README: Sizing Redis), let finished jobs expire sooner "
        "(EVALQ_RESULT_TTL_S), or wait for running jobs to finish before submitting more."
    )


class JobReader:
    """Reads of stored jobs; the Client builds on it. `store` is read at each call, so a test
    may swap it."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.store = Store.from_settings(self.settings)

    def summary(self, job_id: str, group_by: Sequence[str] | None = None) -> JobSummary:
        """The job's summary; `group_by` adds figures per value of those columns for this read
        (to the job's own --group-by), refusing a column no row has."""
        summary = current_summary(self.store, check_job_id(job_id))
        if not group_by:
            return summary
        columns = list(dict.fromkeys([*summary.group_by, *group_by]))
        rows = self.results(job_id)
        check_group_columns(columns, rows)
        groups = group_summaries(rows, columns, self.candidates(job_id))
        return summary.model_copy(update={"group_by": columns, "groups": groups})

    def rows_total(self, job_id: str) -> int:
        """How many rows (cells) the job counts, as stored at submit."""
        return self.store.config(check_job_id(job_id)).rows_total

    def results(self, job_id: str) -> list[RowResult]:
        """Every result so far, in dataset order (a multi-candidate job's cells in the order
        its candidates were named)."""
        config = self.store.config(check_job_id(job_id))  # raises JobNotFound
        order = {c: i for i, c in enumerate(cell_candidates(config.metric, config.options) or [])}

        def place(r: RowResult) -> tuple[int, str, int, str]:
            candidate = r.candidate or ""
            return r.line, r.id, order.get(candidate, len(order)), candidate

        return sorted(self.store.iter_results(job_id), key=place)

    def candidates(self, job_id: str) -> list[str]:
        """A multi-candidate job's candidate columns, in the order given (empty otherwise)."""
        config = self.store.config(check_job_id(job_id))
        return cell_candidates(config.metric, config.options) or []

    def data_roots(self, job_id: str) -> list[str]:
        """The folders the job's local media may be read from (resolved at submit)."""
        return list(self.store.config(check_job_id(job_id)).data_roots)

    def inputs(self, job_id: str, candidate: str | None = None) -> dict[str, RowInput]:
        """The validated rows as the producer stored them (for reports: media, prompts), by id;
        in a multi-candidate job, the cells of `candidate` (the first candidate's if None)."""
        out: dict[str, RowInput] = {}
        for key in self.store.row_keys(check_job_id(job_id)):
            try:
                row = self.store.row(job_id, key)
            except JobNotFound:  # a rejected line: no row was stored
                continue
            if candidate is not None and row.candidate != candidate:
                continue
            out.setdefault(row.id, row)
        return out

    def iter_jobs(self, limit: int = 50) -> Iterator[JobSummary]:
        for job_id in self.store.list_jobs(limit):
            try:
                yield self.summary(job_id)
            except Exception:  # an expired or half-written job must not hide the others
                continue

    def batches(self, job_id: str) -> list[BatchRecord]:
        """A batch-mode job's batches as its ledger records them (empty for online jobs)."""
        from worker.batch import ledger

        return ledger.records(self.store, check_job_id(job_id))

    def batch_bound(self, job_id: str) -> int | None:
        """The most batches the job may send (EVALQ_BATCH_MAX_BATCHES as its workers apply
        it, recorded by each sweep); None before the first sweep."""
        value = self.store.batch_meta(check_job_id(job_id)).get("max_batches")
        return int(value) if value else None

    def memory_warning(self) -> str | None:
        """A warning when Redis is near its maxmemory (one INFO memory), else None."""
        used, limit = self.store.memory()
        return memory_warning(self.store.address(), used, limit)

    def redis_address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        return self.store.address()
