"""The client side of a job: submit a dataset, watch it, read it back. The one evalq module
(with the CLI that calls it) that touches Redis and Celery, through worker.store and tasks."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalq.dataset import LoadedDataset, load_dataset
from evalq.errors import DatasetError, EvalqError, JobGone, JobNotFound, RedisUnavailable
from evalq.gecko import failed_row
from evalq.media import media_rules_in_force
from evalq.metric import get_metric
from evalq.models import JobConfig, JobSummary, RowInput, RowResult
from evalq.thinking import Setting, ThinkingError
from evalq.thinking import check_job as check_thinking
from evalq.thinking import effective as thinking_effective
from worker.app import PREPARE_ROW, QUEUE_ROWS, create_app
from worker.files import media_rules
from worker.jobs import current_summary, finalize
from worker.settings import Settings, get_settings
from worker.store import REDIS_DOWN, Store, Transition, row_key

T = TypeVar("T")
JOB_ID = re.compile(r"[0-9a-f]{12}")
OnRedis = Callable[[str | None], None]


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def check_job_id(job_id: str) -> str:
    """Refuse what new_job_id could not have made before it reaches Redis: the id becomes part
    of key names, so `X:row:Y` would read some other key (of another type, or another job's)."""
    if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
        raise JobNotFound(
            f"{job_id!r} is not a job id: a job id is 12 hex digits (0-9, a-f), "
            "as `evalq run` and `evalq jobs` print it"
        )
    return job_id


def _gone_message(job_id: str) -> str:
    return (
        f"job {job_id} is gone from Redis while it ran: Redis lost its data, most likely "
        "because it restarted without persistence (it may also have been flushed, or run out "
        "of memory). Run Redis with its append-only file (`appendonly yes`, as "
        "docker-compose.yml does) so jobs survive a restart, then submit the dataset again."
    )


@dataclass
class Submitted:
    job_id: str
    dataset: LoadedDataset


def job_thinking_settings(
    configured: Mapping[str, Setting],
    per_job: Mapping[str, Setting] | None,
    judges: list[str],
    options: Mapping[str, Any],
    judge_model: str,
) -> tuple[dict[str, Setting], list[str]]:
    """The job's thinking per role, checked against every model that may play each role."""
    try:
        chosen = thinking_effective(configured, per_job)
        candidates = [str(options.get("candidate_model") or judge_model)]
        if options.get("prompt_template"):  # rank: candidates without guidance name models
            guided = options.get("candidate_prompts") or {}
            candidates += [str(c) for c in options.get("candidates", []) if c not in guided]
        roles = {"rubric": judges, "validator": judges, "judge": judges, "candidate": candidates}
        return chosen, check_thinking(chosen, roles)
    except ThinkingError as exc:
        raise DatasetError(str(exc)) from None


class Client:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.store = Store.from_settings(self.settings)
        self.app = create_app(self.settings)  # for sending only, bound to these settings

    def submit(
        self,
        metric: str,
        dataset: str | Path,
        *,
        judge_model: str | None = None,
        judge_models: list[str] | None = None,
        options: dict[str, Any] | None = None,
        use_cache: bool = True,
        max_field_bytes: int | None = None,
        data_roots: list[str | Path] | None = None,
        thinking: Mapping[str, Setting] | None = None,
    ) -> Submitted:
        """Validate every row, store the job, enqueue one task per good row; bad rows fail now.

        `judge_models` (several judges) is for the metrics that use them; the first one is the
        job's main judge. `max_field_bytes` defaults to EVALQ_MAX_FIELD_BYTES. Local media are
        read only under `data_roots` (default: EVALQ_DATA_ROOTS, else the dataset's folder).
        `thinking` ({role: setting}) goes over EVALQ_THINKING and evalq's defaults; a setting a
        model would refuse is a DatasetError naming model and range."""
        get_metric(metric)  # an unknown metric fails before anything else
        options = dict(options or {})
        if max_field_bytes is None:
            max_field_bytes = self.settings.max_field_bytes
        roots = [str(r) for r in data_roots or self.settings.data_roots or [Path(dataset).parent]]
        rules = media_rules(self.settings, roots)
        with media_rules_in_force(rules):
            loaded = load_dataset(dataset, metric, options, max_field_bytes=max_field_bytes)
        judges = list(judge_models or ([judge_model] if judge_model else []))
        judge_model = judges[0] if judges else self.settings.judge_model
        job_thinking, thinking_warnings = job_thinking_settings(
            self.settings.thinking, thinking, judges or [judge_model], options, judge_model
        )
        job_id = new_job_id()
        warnings = loaded.warnings[:50] + (
            [f"... {len(loaded.warnings) - 50} more"] if len(loaded.warnings) > 50 else []
        )
        warnings += thinking_warnings
        config = JobConfig(
            job_id=job_id,
            metric=metric,
            judge_model=judge_model,
            judge_models=judges or [judge_model],
            options=options,
            dataset=str(Path(dataset).resolve()),
            rows_total=loaded.total,
            created_at=time.time(),
            use_cache=use_cache,
            warnings=warnings,
            data_roots=[str(root) for root in rules.roots.roots],
            thinking=job_thinking,
        )
        rejected = [
            failed_row(err.row_id, line, "", "input_error", str(err)) for line, err in loaded.errors
        ]
        self.store.create_job(config, loaded.rows, rejected)  # rejected lines counted already
        if not loaded.rows:
            finalize(self.store, job_id)
        self._enqueue(job_id, [row_key(row) for row in loaded.rows])
        return Submitted(job_id=job_id, dataset=loaded)

    def _enqueue(self, job_id: str, rows: list[str]) -> None:
        with self.app.producer_or_acquire() as producer:
            for row in rows:
                self.app.send_task(
                    PREPARE_ROW,
                    (job_id, row),
                    queue=QUEUE_ROWS,
                    producer=producer,
                )

    def resume(self, job_id: str) -> int:
        """Continue a paused, stopped or interrupted job with the rows not yet counted; returns
        how many rows were enqueued. Stored rubrics, verdicts and cached calls are reused."""
        self.store.config(check_job_id(job_id))  # raises JobNotFound
        if not self.store.transition(job_id, "running").changed:
            return 0  # finished: nothing to resume
        self.store.clear_fatal(job_id)
        pending = self.store.not_done(job_id)
        if not pending:
            finalize(self.store, job_id)
            return 0
        self.store.touch(job_id, *pending)
        self._enqueue(job_id, pending)
        return len(pending)

    def cancel(self, job_id: str) -> JobSummary:
        """Stop a job: queued tasks skip it, rows already counted stay, the rest are not run."""
        self.try_cancel(job_id)
        return self.summary(job_id)

    def try_cancel(self, job_id: str) -> Transition:
        """Cancel unless the job is already finished or cancelled; says which it found."""
        self.store.config(check_job_id(job_id))
        return self.store.transition(job_id, "cancelled")

    def summary(self, job_id: str) -> JobSummary:
        return current_summary(self.store, check_job_id(job_id))

    def wait(
        self,
        job_id: str,
        *,
        poll_s: float = 0.5,
        on_progress: Callable[[int, int], None] | None = None,
        on_redis: OnRedis | None = None,
        timeout_s: float | None = None,
    ) -> JobSummary:
        """Poll until the job is finished, cancelled or paused; return its summary.

        It never waits on a job that can not finish: one that vanished (Redis lost its data)
        raises JobGone, one whose row list is gone raises EvalqError. While Redis is out of
        reach it keeps trying for up to redis_retry_max_s, telling `on_redis` why (and None
        once Redis answers again), then raises RedisUnavailable."""
        check_job_id(job_id)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        total = self._reachable(lambda: self.store.config(job_id), on_redis, deadline).rows_total
        while True:
            try:
                job, listed = self._reachable(
                    lambda: self.store.progress(job_id), on_redis, deadline
                )
            except JobNotFound:
                raise JobGone(_gone_message(job_id)) from None
            done, status = int(job.get("rows_done", 0)), job.get("status", "running")
            if on_progress:
                on_progress(done, total)
            if status in ("finished", "cancelled", "paused"):
                break
            if done >= total:  # the worker that counted the last row may have died
                return self._reachable(lambda: finalize(self.store, job_id), on_redis, deadline)
            if listed < total:
                raise EvalqError(
                    f"job {job_id} can not finish: only {listed} of its {total} rows are "
                    "listed in Redis (the list expired or was lost), so nothing can drive the "
                    "rest; rows already done stay readable with `evalq results`"
                )
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id}: {done}/{total} rows done after {timeout_s} s")
            time.sleep(poll_s)
        return self._reachable(lambda: self.summary(job_id), on_redis, deadline)

    def _reachable(
        self, read: Callable[[], T], on_redis: OnRedis | None, deadline: float | None
    ) -> T:
        """`read()`, tried again with backoff while Redis is out of reach (at most
        redis_retry_max_s, and never past `deadline`)."""
        down_since: float | None = None
        pause_s = 0.5
        while True:
            try:
                value = read()
            except REDIS_DOWN as exc:
                now = time.monotonic()
                down_since = now if down_since is None else down_since
                where = self.redis_address()
                if now - down_since >= self.settings.redis_retry_max_s:
                    raise RedisUnavailable(
                        f"Redis at {where} out of reach for {now - down_since:.0f} s ({exc}); "
                        "the job goes on if workers reach it: check again with `evalq status`"
                    ) from None
                if deadline is not None and now > deadline:
                    raise TimeoutError(f"Redis at {where} out of reach ({exc})") from None
                if on_redis:
                    on_redis(f"waiting for Redis at {where}: {exc}")
                time.sleep(pause_s)
                pause_s = min(pause_s * 2, 5.0)
                continue
            if down_since is not None and on_redis:
                on_redis(None)
            return value

    def redis_address(self) -> str:
        """host:port of Redis, without any password the URL may hold."""
        return self.store.address()

    def results(self, job_id: str) -> list[RowResult]:
        self.store.config(check_job_id(job_id))  # raises JobNotFound
        return sorted(self.store.iter_results(job_id), key=lambda r: (r.line, r.id))

    def inputs(self, job_id: str) -> dict[str, RowInput]:
        """The validated rows as the producer stored them (for reports: media, prompts), by id."""
        out = {}
        for key in self.store.row_keys(check_job_id(job_id)):
            try:
                row = self.store.row(job_id, key)
            except JobNotFound:  # a rejected line: no row was stored
                continue
            out[row.id] = row
        return out

    def iter_jobs(self, limit: int = 50) -> Iterator[JobSummary]:
        for job_id in self.store.list_jobs(limit):
            try:
                yield self.summary(job_id)
            except Exception:  # an expired or half-written job must not hide the others
                continue
