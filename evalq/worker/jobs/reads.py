"""What the client side may read of jobs and of their Redis, one interface over the Store
(nothing here writes); kept light to import: `evalq status` loads this and not batch mode,
Celery or the metrics, which are imported when read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from evalq.core.counters import JobCounters
from evalq.core.judge import JudgeRequest
from evalq.core.metric import PlanT
from evalq.core.models import JobConfig, JobSummary, RowInput, RowResult
from evalq.core.shared_cache import KeyValue
from evalq.worker.lifecycle.job_end import current_summary
from evalq.worker.settings import Settings
from evalq.worker.store import REDIS_DOWN, REDIS_ERROR, ArchiveState, RowRef, Store, TurnState

if TYPE_CHECKING:
    from evalq.worker.batch.ledger import BatchRecord
    from evalq.worker.jobs.control import JobControl

__all__ = ["REDIS_DOWN", "REDIS_ERROR", "ArchiveState", "JobReads", "TurnState"]


class JobReads:
    """Reads of the jobs in one Redis (the one `settings` name, for from_settings)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @classmethod
    def from_settings(cls, settings: Settings) -> JobReads:
        return cls(Store.from_settings(settings))

    def control(self, settings: Settings) -> JobControl:
        """Steering the same jobs over these reads' connection pool: a client keeps one pool
        (and one connection at rest), as it did before reads and control were apart; a second
        pool would hold connections of its own that the sizing figures count as the client's."""
        from evalq.worker.jobs.control import JobControl

        return JobControl(self._store, settings)

    # ---- Redis itself ----

    def address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        return self._store.address()

    def ping(self) -> None:
        """Raises a Redis error when Redis can't be reached."""
        self._store.ping()

    def memory(self) -> tuple[int, int]:
        """Bytes Redis uses and its maxmemory (0: no limit)."""
        return self._store.memory()

    def live_workers(self) -> int:
        """Workers whose registration has not lapsed (evalq.worker.dispatch.turns.register)."""
        return self._store.live_workers()

    # ---- which jobs ----

    def exists(self, job_id: str) -> bool:
        """Whether Redis has the job (its config) now."""
        return self._store.job_exists(job_id)

    def job_ids(self, limit: int = 50) -> list[str]:
        """The newest `limit` jobs' ids, the newest first (0: every one)."""
        return self._store.list_jobs(limit)

    def configs(self, job_ids: Sequence[str]) -> dict[str, JobConfig]:
        """The configs of those of `job_ids` Redis still has, in one round trip."""
        return self._store.configs(job_ids)

    # ---- a job ----

    def config(self, job_id: str) -> JobConfig:
        """JobNotFound when Redis does not have the job."""
        return self._store.config(job_id)

    def status(self, job_id: str) -> str:
        """running, paused, finished, cancelled; `unknown` when Redis does not have it."""
        return self._store.status(job_id)

    def progress(self, job_id: str) -> tuple[JobCounters, int]:
        """The job's counters and how many rows its row list holds, read together."""
        return self._store.job_progress(job_id)

    def summary(self, job_id: str) -> JobSummary:
        """The stored final summary of a finished job, else one from what is there now."""
        return current_summary(self._store, job_id)

    def results(self, job_id: str) -> Iterator[RowResult]:
        """Every result so far, in no particular order."""
        return self._store.iter_results(job_id)

    def row_keys(self, job_id: str) -> list[str]:
        """Every row's key (its line; `7/flux` for a candidate's cell), in dataset order."""
        return self._store.row_keys(job_id)

    def row(self, job_id: str, key: str) -> RowInput:
        """A stored row; JobNotFound for a line rejected at load (it has none)."""
        return self._store.row(RowRef(job_id, key))

    def rows(self, job_id: str) -> list[RowInput]:
        """Every stored row, read in bulk (a line rejected at load has none)."""
        found = self._store.raw_rows(job_id, self._store.row_keys(job_id))
        return [RowInput.model_validate_json(raw) for raw in found if raw is not None]

    def plan(self, job_id: str, key: str, model: type[PlanT]) -> PlanT | None:
        """A row's stored plan (None before it was planned)."""
        return self._store.row_plan(RowRef(job_id, key), model)

    def turn_state(self, job_id: str) -> TurnState:
        """The job's priority, cap on rows in flight, and rows holding or waiting for a turn."""
        return self._store.turn_state(job_id)

    def batches(self, job_id: str) -> list[BatchRecord]:
        """A batch-mode job's batches as its ledger records them (empty for online jobs)."""
        from evalq.worker.batch import ledger

        return ledger.records(self._store, job_id)

    def max_batches(self, job_id: str) -> int | None:
        """The most batches the job may send; None before its first sweep."""
        return self._store.max_batches(job_id)

    def archive_state(self, job_id: str) -> ArchiveState:
        """Whether the job's archive write is pending, and how the last ones went."""
        return self._store.archive_state(job_id)

    def archive_writers(self, since: float) -> dict[str, str]:
        """worker -> the archive it writes to, for workers that said so since `since`."""
        return self._store.archive_writers(since)

    # ---- what jobs share ----

    def rubrics(self) -> KeyValue:
        """The shared rubric cache, by rubric digest (a dry run reads it, never writes)."""
        return self._store.rubrics()

    def has_cached_reply(self, model: str, request: JudgeRequest) -> bool:
        """Whether the judge-call cache holds this request's reply."""
        from evalq.worker.judges.call_cache import call_digest

        return self._store.has_cached_call(call_digest(model, request))

    def serve_metrics(self, host: str, port: int) -> None:
        """Serve the job-level figures for Prometheus (evalq.worker.jobs.metrics_exporter) until
        stopped."""
        from evalq.worker.jobs.metrics_exporter import serve

        serve(self._store, host, port)
