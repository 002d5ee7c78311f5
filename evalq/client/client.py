"""The client side of a job: submit a dataset, watch it, read it back. The one evalq module
(with the CLI that calls it) that touches Redis and Celery, through worker.store and tasks."""

from __future__ import annotations

import logging
import mimetypes
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalq.core.candidates import candidate_of, cell_candidates
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.dry_run import DryEnv, DryRunReport, RejectedRow, local_counter
from evalq.core.dry_run import report as dry_report
from evalq.core.errors import (
    DatasetError,
    EvalqError,
    InputError,
    JobGone,
    JobNotFound,
    RedisUnavailable,
)
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.kv import KeyValue
from evalq.core.media import (
    MediaRules,
    allowed_types,
    load_media,
    media_rules_in_force,
)
from evalq.core.metric import get_metric
from evalq.core.models import JobConfig, JobSummary, RowInput, RowResult
from evalq.core.pricing import Price, job_prices, nanos, price_for, usd
from evalq.core.thinking import Setting, ThinkingError
from evalq.core.thinking import check_job as check_thinking
from evalq.core.thinking import effective as thinking_effective
from evalq.core.verdicts import failed_row
from worker.app import create_app
from worker.batch import ledger as batch_ledger
from worker.batch.flow import reattach
from worker.batch.ledger import BatchRecord
from worker.batch.names import SUBMIT_BATCH
from worker.batch.service import VertexNotSupported
from worker.batch.service import cancel_all as cancel_batches
from worker.batch.service import check_backend as check_batch_backend
from worker.batch.service import client_for as batch_client
from worker.call_cache import call_digest
from worker.files import media_rules
from worker.jobs import current_summary, finalize
from worker.queues import PREPARE_ROW, queue_for
from worker.settings import Settings, get_settings
from worker.store import REDIS_DOWN, Store, Transition, row_key

T = TypeVar("T")
JOB_ID = re.compile(r"[0-9a-f]{12}")
OnRedis = Callable[[str | None], None]

log = logging.getLogger(__name__)


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


@dataclass
class Prepared:
    """A job that passed every check, not yet stored."""

    config: JobConfig
    dataset: LoadedDataset
    rules: MediaRules
    prices: dict[str, Price]


def dry_media_loader(rules: MediaRules, notes: list[str]) -> Callable[[RowInput, str], MediaPart]:
    """Media as a worker would load it, minus the network: local files and inline data are
    read, type checked and decoded (a bad one fails its row, as it would when run); gs:// URIs
    are checked as the worker checks them; http(s) URLs are not fetched in a dry run."""
    memo: dict[tuple[str, str, str], MediaPart] = {}

    def load(row: RowInput, field: str) -> MediaPart:
        ref = row.media.get(field)
        if ref is None:
            raise InputError(row.id, field, "missing")
        allowed = allowed_types(field)
        if ref.kind == "url":
            note = "media at http(s) URLs is not fetched in a dry run: not checked, sized by rule"
            if note not in notes:
                notes.append(note)
            mime = ref.mime_type or mimetypes.guess_type(ref.value.split("?", 1)[0])[0]
            fallback = {"image": "image/*", "video": "video/*"}.get(field, "application/pdf")
            return MediaPart(mime_type=mime or fallback, uri=ref.value)
        key = (ref.kind, ref.value, field)
        if key not in memo:
            memo[key] = load_media(ref, row.id, field, rules, allowed)
        return memo[key]

    return load


def models_by_role(
    judges: list[str], options: Mapping[str, Any], judge_model: str
) -> dict[str, list[str]]:
    """Every model that may play each role in a job."""
    candidates = [str(options.get("candidate_model") or judge_model)]
    if options.get("prompt_template"):  # rank: candidates without guidance name models
        guided = options.get("candidate_prompts") or {}
        candidates += [str(c) for c in options.get("candidates", []) if c not in guided]
    rubric = [str(options["rubric_model"])] if options.get("rubric_model") else judges
    return {"rubric": rubric, "validator": judges, "judge": judges, "candidate": candidates}


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
        return chosen, check_thinking(chosen, models_by_role(judges, options, judge_model))
    except ThinkingError as exc:
        raise DatasetError(str(exc)) from None


def check_cap(
    max_cost_usd: float | None, table: Mapping[str, Price], models: Mapping[str, list[str]]
) -> None:
    """A spend cap needs a price for every model the job may call: a call with no price adds
    nothing to the spend, so the cap could not hold."""
    if max_cost_usd is None:
        return
    if isinstance(max_cost_usd, bool) or not max_cost_usd > 0:
        raise DatasetError(f"--max-cost-usd must be a positive amount, got {max_cost_usd!r}")
    unpriced = sorted(
        {m for names in models.values() for m in names if price_for(m, table) is None}
    )
    if unpriced:
        raise DatasetError(
            f"--max-cost-usd {max_cost_usd:g}: no price is known for {', '.join(unpriced)}, so "
            "its spend could not be counted against the cap; give its price in EVALQ_PRICES "
            '(JSON: {"model": {"input": USD_PER_1M, "output": USD_PER_1M}})'
        )


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
        max_cost_usd: float | None = None,
        mode: str = "online",
        on_expiry: str = "resubmit",
    ) -> Submitted:
        """Validate every row, store the job, enqueue one task per good row; bad rows fail now.

        `judge_models` (several judges) is for the metrics that use them; the first one is the
        job's main judge. `max_field_bytes` defaults to EVALQ_MAX_FIELD_BYTES. Local media are
        read only under `data_roots` (default: EVALQ_DATA_ROOTS, else the dataset's folder).
        `thinking` ({role: setting}) goes over EVALQ_THINKING and evalq's defaults; a setting a
        model would refuse is a DatasetError naming model and range. `max_cost_usd` pauses the
        job once its priced spend reaches it (every model it calls needs a known price).
        `mode="batch"` sends the judge calls through Gemini's Batch API at the batch price
        (worker.batch); `on_expiry` ("resubmit" or "online") says where the unanswered requests
        of a batch that ends EXPIRED, FAILED or CANCELLED go."""
        if mode not in ("online", "batch"):
            raise EvalqError(f"mode must be 'online' or 'batch', not {mode!r}")
        if on_expiry not in ("resubmit", "online"):
            raise EvalqError(f"on_expiry must be 'resubmit' or 'online', not {on_expiry!r}")
        if mode == "batch":
            try:
                check_batch_backend(self.settings)
            except VertexNotSupported as exc:
                raise EvalqError(str(exc)) from None
        prepared = self._prepare(
            metric,
            dataset,
            judge_model=judge_model,
            judge_models=judge_models,
            options=options,
            use_cache=use_cache,
            max_field_bytes=max_field_bytes,
            data_roots=data_roots,
            thinking=thinking,
            max_cost_usd=max_cost_usd,
        )
        config, loaded = prepared.config, prepared.dataset
        config = config.model_copy(update={"mode": mode, "on_expiry": on_expiry})
        rejected = [
            failed_row(err.row_id, line, "", "input_error", str(err), candidate=candidate_of(err))
            for line, err in loaded.errors
        ]
        self.store.create_job(config, loaded.rows, rejected)  # rejected lines counted already
        if not loaded.rows:
            finalize(self.store, config.job_id)
        elif mode == "batch":
            self._send(SUBMIT_BATCH, (config.job_id,), None)
        else:
            self._enqueue(config.job_id, [row_key(row) for row in loaded.rows])
        return Submitted(job_id=config.job_id, dataset=loaded)

    def _prepare(
        self,
        metric: str,
        dataset: str | Path,
        *,
        judge_model: str | None,
        judge_models: list[str] | None,
        options: dict[str, Any] | None,
        use_cache: bool,
        max_field_bytes: int | None,
        data_roots: list[str | Path] | None,
        thinking: Mapping[str, Setting] | None,
        max_cost_usd: float | None,
    ) -> Prepared:
        """Every check a job passes before it is stored, shared by submit and the dry run:
        the metric, every row, thinking settings against the models, the spend cap."""
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
        prices = self.settings.price_table()
        check_cap(
            max_cost_usd, prices, models_by_role(judges or [judge_model], options, judge_model)
        )
        warnings = loaded.warnings[:50] + (
            [f"... {len(loaded.warnings) - 50} more"] if len(loaded.warnings) > 50 else []
        )
        warnings += thinking_warnings
        config = JobConfig(
            job_id=new_job_id(),
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
            prices={model: price.to_json() for model, price in prices.items()},
            max_cost_usd=max_cost_usd,
        )
        return Prepared(config=config, dataset=loaded, rules=rules, prices=prices)

    def plan(
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
        max_cost_usd: float | None = None,
        count_tokens: bool = False,
    ) -> DryRunReport:
        """A dry run: the same checks as submit, then every call the job would make planned,
        its tokens, cost and time at the quota estimated, and nothing stored, enqueued or
        asked. Rubrics already in the cache are read (Redis), never written. `count_tokens`
        counts text with Gemini's count_tokens endpoint (requests, but no generate call)."""
        prepared = self._prepare(
            metric,
            dataset,
            judge_model=judge_model,
            judge_models=judge_models,
            options=options,
            use_cache=use_cache,
            max_field_bytes=max_field_bytes,
            data_roots=data_roots,
            thinking=thinking,
            max_cost_usd=max_cost_usd,
        )
        config, loaded = prepared.config, prepared.dataset
        notes: list[str] = []
        counter: Any
        if count_tokens:
            from worker.token_count import ApiTokenCounter

            counter = ApiTokenCounter(self.settings)
        else:
            counter, reason = local_counter()
            if reason:
                notes.append(reason)
        kv: KeyValue | None = self.store.rubrics()
        try:
            self.store.ping()
        except REDIS_DOWN as exc:
            kv = None
            notes.append(
                f"the rubric cache was not read (Redis at {self.redis_address()}: {exc}): "
                "every rubric is counted as to write"
            )
        env = DryEnv(
            job=config,
            counter=counter,
            prices=prepared.prices,
            media_loader=dry_media_loader(prepared.rules, notes),
            kv=kv,
            cache_probe=None if kv is None else self._cached_call,
            answer_allowance=self.settings.max_output_tokens,
        )
        spec = get_metric(metric)
        rejected = [
            RejectedRow(line=line, id=err.row_id, error=str(err)) for line, err in loaded.errors
        ]
        planned = 0
        for row in loaded.rows:
            mark = env.mark()
            try:
                spec.dry_plan(row, env)
            except InputError as exc:
                env.rollback(mark)
                rejected.append(RejectedRow(line=row.line, id=row.id, error=f"bad input: {exc}"))
                continue
            planned += 1
        notes += [n for n in getattr(counter, "failures", []) if n not in notes]
        for note in notes:
            env.note(note)
        limits = self.settings.rate_limits

        def quota(model: str) -> tuple[int | None, int | None]:
            limit = limits.get(model) or limits.get("*")
            return (limit.rpm, limit.tpm) if limit is not None else (None, None)

        plan = dry_report(
            metric=metric,
            dataset=str(Path(dataset).resolve()),
            job=config,
            env=env,
            rows_total=loaded.total,
            planned=planned,
            rejected=sorted(rejected, key=lambda r: r.line),
            warnings=config.warnings,
            quota=quota,
        )
        if max_cost_usd is not None and plan.cost_usd is not None:
            over = plan.cost_usd > max_cost_usd
            plan.notes.append(
                f"--max-cost-usd {max_cost_usd:g}: the estimate is "
                + ("over it: the job would pause before it finishes" if over else "within it")
            )
        return plan

    def _cached_call(self, model: str, request: JudgeRequest) -> bool:
        """Whether the judge-call cache holds this request's reply (a dry run's probe)."""
        return self.store.has_cached_call(call_digest(model, request))

    def _send(self, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        """Enqueue one task by name (batch mode's steps; a row on the rows queue)."""
        self.app.send_task(name, args, countdown=countdown_s, queue=queue_for(name))

    def batches(self, job_id: str) -> list[BatchRecord]:
        """A batch-mode job's batches as its ledger records them (empty for online jobs)."""
        return batch_ledger.records(self.store, check_job_id(job_id))

    def batch_bound(self, job_id: str) -> int | None:
        """The most batches the job may send (EVALQ_BATCH_MAX_BATCHES as its workers apply
        it, recorded by each sweep); None before the first sweep."""
        value = self.store.batch_meta(check_job_id(job_id)).get("max_batches")
        return int(value) if value else None

    def _enqueue(self, job_id: str, rows: list[str]) -> None:
        with self.app.producer_or_acquire() as producer:
            for row in rows:
                self.app.send_task(
                    PREPARE_ROW,
                    (job_id, row),
                    queue=queue_for(PREPARE_ROW),
                    producer=producer,
                )

    def resume(self, job_id: str, *, max_cost_usd: float | None = None) -> int:
        """Continue a paused, stopped or interrupted job with the rows not yet counted; returns
        how many rows were enqueued. Stored rubrics, verdicts and cached calls are reused.
        `max_cost_usd` sets a new spend cap (the total, spend so far included); a job whose
        spend already reached its cap needs one."""
        config = self.store.config(check_job_id(job_id))  # raises JobNotFound
        if self.store.status(job_id) == "finished":
            return 0
        spent, cap = self.store.budget(job_id)
        if max_cost_usd is not None:
            table = job_prices(config.prices)
            judges = config.judge_models or [config.judge_model]
            check_cap(max_cost_usd, table, models_by_role(judges, config.options, judges[0]))
            if nanos(max_cost_usd) <= spent:
                raise EvalqError(
                    f"job {job_id} has already spent ${usd(spent):.4f}: a cap of "
                    f"${max_cost_usd:g} would pause it again at once; give a larger "
                    "--max-cost-usd (the total, spend so far included)"
                )
            cap = nanos(max_cost_usd)
        elif cap is not None and spent >= cap:
            raise EvalqError(
                f"job {job_id} has spent ${usd(spent):.4f}, its cap of ${usd(cap):.4f} "
                "(--max-cost-usd): resume it with a larger cap, "
                f"`evalq resume {job_id} --max-cost-usd Y`"
            )
        self.store.set_budget(job_id, cap)
        if not self.store.transition(job_id, "running").changed:
            return 0  # finished meanwhile: nothing to resume
        self.store.clear_fatal(job_id)
        pending = self.store.not_done(job_id)
        if not pending:
            finalize(self.store, job_id)
            return 0
        self.store.touch(job_id, *pending)
        if reattach(self.store, self.settings, self._send, job_id, time.time(), force=True):
            return len(pending)  # batch mode: batches in flight are polled, never sent again
        self._enqueue(job_id, pending)
        return len(pending)

    def cancel(self, job_id: str) -> JobSummary:
        """Stop a job: queued tasks skip it, rows already counted stay, the rest are not run."""
        self.try_cancel(job_id)
        return self.summary(job_id)

    def try_cancel(self, job_id: str) -> Transition:
        """Cancel unless the job is already finished or cancelled; says which it found."""
        config = self.store.config(check_job_id(job_id))
        transition = self.store.transition(job_id, "cancelled")
        if config.mode == "batch" and transition.changed:
            self._cancel_batches(job_id)
        return transition

    def _cancel_batches(self, job_id: str) -> None:
        """Cancel the job's batches on the server now; a poll that finds the job cancelled
        does the same, so a failure here only delays it."""
        try:
            cancel_batches(batch_client(self.settings), self.store, job_id)
        except Exception as exc:  # the API out of reach: the next poll cancels them
            log.warning("job %s: cancelling its batches failed (%s); a poll will", job_id, exc)

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
                    lambda: self.store.job_progress(job_id), on_redis, deadline
                )
            except JobNotFound:
                raise JobGone(_gone_message(job_id)) from None
            done, status = job.rows_done, job.status
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
