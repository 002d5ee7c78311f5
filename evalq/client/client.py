"""The client side of a job: submit a dataset, watch it, read it back. The client reaches Redis
through evalq.worker.jobs.reads and evalq.worker.jobs.control only, never the Store."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any, Unpack

from evalq.client import control, submit, watch
from evalq.client import dry_run as client_dry_run
from evalq.client.reads import JobReader
from evalq.client.regrade import RegradeSpec
from evalq.client.submit import JobSpec, Submitted
from evalq.core.dry_report import DryRunReport
from evalq.core.errors import DatasetError, EvalqError
from evalq.core.models import JobSummary
from evalq.worker.jobs.control import Transition, TurnState
from evalq.worker.settings import Settings

__all__ = ["Client"]


class Client(JobReader):
    """A facade: the checks and enqueueing are in evalq.client.submit, the dry run in
    evalq.client.dry_run, resume and cancel in evalq.client.control, waiting in
    evalq.client.watch, the reads in evalq.client.reads (which the read-only commands use alone)."""

    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__(settings)

    @cached_property
    def app(self) -> Any:
        """The Celery app, for sending only, bound to these settings (built on first send)."""
        from evalq.worker.celery_app.app import create_app

        return create_app(self.settings)

    def submit(
        self,
        metric: str,
        dataset: str | Path,
        *,
        mode: str = "online",
        on_expiry: str = "resubmit",
        vertex_batch_prefix: str | None = None,
        **job: Unpack[JobSpec],
    ) -> Submitted:
        """Validate every row, store the job, enqueue one task per good row; bad rows fail now.

        The job's settings are JobSpec's (judges, options, media roots, thinking, spend cap).
        `mode="batch"` sends the judge calls through Gemini's Batch API at the batch price
        (evalq.worker.batch); `on_expiry` ("resubmit" or "online") says where the unanswered
        requests of a batch that ends EXPIRED, FAILED or CANCELLED go. On Vertex AI, batch mode goes
        through Cloud Storage under `vertex_batch_prefix` (gs://BUCKET/FOLDER; default
        EVALQ_VERTEX_BATCH_PREFIX), checked here before anything is stored."""
        mode_of = self._mode(mode, on_expiry, vertex_batch_prefix)
        prepared = submit.prepare(self.settings, metric, dataset, job, self)
        if why := submit.never_stored(prepared, dataset):
            raise DatasetError(why)
        config = prepared.config.model_copy(update=mode_of)
        submit.store_and_enqueue(self.job_control, self.app, config, prepared.dataset)
        return Submitted(job_id=config.job_id, dataset=prepared.dataset)

    def regrade(
        self,
        job_id: str,
        *,
        mode: str = "online",
        on_expiry: str = "resubmit",
        vertex_batch_prefix: str | None = None,
        **wanted: Unpack[RegradeSpec],
    ) -> Submitted:
        """A new job judging an ended job's stored inputs again (evalq.client.regrade): its
        metric, options, questions and responses, with the judges, thinking, samples or rows
        `wanted` names; it records the job it regrades (JobConfig.regrades)."""
        from evalq.client.jobs.lookup import resolve
        from evalq.client.regrade import regrade_inputs

        mode_of = self._mode(mode, on_expiry, vertex_batch_prefix)
        source = resolve(self, job_id)
        asked = regrade_inputs(self, source, wanted)
        prepared = submit.prepare_loaded(
            self.settings,
            asked.source.metric,
            asked.source.dataset,
            asked.loaded,
            asked.options,
            asked.spec,
            asked.rules,
        )
        config = prepared.config.model_copy(update={**mode_of, "regrades": source})
        submit.store_and_enqueue(self.job_control, self.app, config, prepared.dataset)
        return Submitted(job_id=config.job_id, dataset=prepared.dataset)

    def _mode(self, mode: str, on_expiry: str, vertex_batch_prefix: str | None) -> dict[str, Any]:
        """A job's mode fields, checked (on Vertex AI, batch mode's Cloud Storage prefix)."""
        submit.check_mode(mode, on_expiry)
        prefix = None
        if mode == "batch":
            from evalq.worker.batch.service import BatchSetupError, batch_prefix

            try:
                prefix = batch_prefix(self.settings, vertex_batch_prefix)
            except BatchSetupError as exc:
                raise EvalqError(str(exc)) from None
        return {"mode": mode, "on_expiry": on_expiry, "vertex_batch_prefix": prefix}

    def plan(
        self,
        metric: str,
        dataset: str | Path,
        *,
        count_tokens: bool = False,
        **job: Unpack[JobSpec],
    ) -> DryRunReport:
        """A dry run: the same checks as submit, then every call the job would make planned,
        its tokens, cost and time at the quota estimated, and nothing stored, enqueued or
        asked. Rubrics already in the cache are read (Redis), never written. `count_tokens`
        counts text with Gemini's count_tokens endpoint (requests, but no generate call)."""
        prepared = submit.prepare(self.settings, metric, dataset, job, self)
        report = client_dry_run.plan(
            self.settings, self.job_reads, prepared, count_tokens=count_tokens
        )
        if report.rows_total and not report.rows_planned:  # a real run: nothing scored
            first = report.rejected[0] if report.rejected else None
            said = f" (line {first.line}: {first.error})" if first else ""
            refusal = submit.never_stored(prepared, dataset) or f"every row would fail{said}"
            report = report.model_copy(update={"refusal": refusal})
        return report

    @cached_property
    def user(self) -> str:
        """Who this client is: its jobs' owner, and whose jobs it steers without force
        (evalq.client.owner)."""
        from evalq.client.owner import current_user

        return current_user(self.settings.redis_url)

    def acting(self, force: bool = False, flag: str = "force=True") -> control.Acting:
        """This client's user asking, forcing or not (`flag`: how a refusal says to force)."""
        return control.Acting(self.user, force, flag)

    def resume(self, job_id: str, *, max_cost_usd: float | None = None, force: bool = False) -> int:
        """Continue a paused, stopped or interrupted job (evalq.client.control.resume);
        another user's job only with `force=True`."""
        return control.resume(self.job_control, self.app, job_id, max_cost_usd, self.acting(force))

    def cancel(self, job_id: str, *, force: bool = False) -> JobSummary:
        """Stop a job: queued tasks skip it, rows already counted stay, the rest are not run.
        Another user's job only with `force=True`."""
        self.try_cancel(job_id, force=force)
        return self.summary(job_id)

    def set_turns(
        self,
        job_id: str,
        *,
        priority: str | None = None,
        max_in_flight: int | None = None,
        force: bool = False,
    ) -> TurnState:
        """Change a job's priority or cap on rows in flight (evalq.client.control.set_turns);
        another user's job only with `force=True`."""
        return control.set_turns(
            self.job_control,
            self.app,
            job_id,
            self.acting(force),
            priority=priority,
            max_in_flight=max_in_flight,
        )

    def try_cancel(
        self, job_id: str, *, force: bool = False, flag: str = "force=True"
    ) -> Transition:
        """Cancel unless the job is already finished or cancelled; says which it found."""
        return control.try_cancel(self.job_control, job_id, self.acting(force, flag))

    def wait(
        self,
        job_id: str,
        *,
        poll_s: float = 0.5,
        on_progress: Callable[[int, int], None] | None = None,
        on_redis: watch.OnRedis | None = None,
        timeout_s: float | None = None,
        on_workers: watch.OnWorkers | None = None,
    ) -> JobSummary:
        """Poll until the job is finished, cancelled or paused (evalq.client.watch.wait)."""
        return watch.wait(
            self,
            job_id,
            poll_s=poll_s,
            on_progress=on_progress,
            on_redis=on_redis,
            timeout_s=timeout_s,
            on_workers=on_workers,
        )

    def serve_metrics(self, host: str, port: int) -> None:
        """Serve the job-level figures for Prometheus (evalq.worker.jobs.metrics_exporter) until
        stopped."""
        self.job_reads.serve_metrics(host, port)
