"""The client's dry run: the checks a submit makes, then every call the job would make
planned against the dry media loader, the rubric cache (read, never written) and the call
cache, without storing, enqueueing or asking anything (evalq.core.dry_run holds the plan)."""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalq.client.submit import Prepared
from evalq.core.dry_report import DryRunReport, RejectedRow
from evalq.core.dry_report import report as dry_report
from evalq.core.dry_run import DryEnv, local_counter
from evalq.core.errors import InputError
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.media import MediaRules, allowed_types, load_media
from evalq.core.metric import get_metric
from evalq.core.models import RowInput
from evalq.core.pricing import vertex_price_note
from evalq.core.shared_cache import KeyValue
from evalq.worker.jobs.reads import REDIS_DOWN, JobReads
from evalq.worker.settings import Settings


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


def plan(
    settings: Settings,
    reads: JobReads,
    prepared: Prepared,
    *,
    count_tokens: bool = False,
) -> DryRunReport:
    """A prepared job's dry run: each good row planned by its metric's dry_plan (a row whose
    plan meets bad input is rejected as a run would reject it), then the report."""
    config, loaded = prepared.config, prepared.dataset
    notes: list[str] = []
    counter: Any
    if count_tokens:
        from evalq.worker.judges.token_count import ApiTokenCounter

        counter = ApiTokenCounter(settings)
    else:
        counter, reason = local_counter()
        if reason:
            notes.append(reason)
    kv: KeyValue | None = reads.rubrics()
    try:
        reads.ping()
    except REDIS_DOWN as exc:
        kv = None
        notes.append(
            f"the rubric cache was not read (Redis at {reads.address()}: {exc}): "
            "every rubric is counted as to write"
        )

    def cached_call(model: str, request: JudgeRequest) -> bool:
        """Whether the judge-call cache holds this request's reply."""
        return reads.has_cached_reply(model, request)

    env = DryEnv(
        job=config,
        counter=counter,
        prices=prepared.prices,
        media_loader=dry_media_loader(prepared.rules, notes),
        kv=kv,
        cache_probe=None if kv is None else cached_call,
        answer_allowance=settings.max_output_tokens,
    )
    spec = get_metric(config.metric)
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
    limits = settings.rate_limits

    def quota(model: str) -> tuple[int | None, int | None]:
        limit = limits.get(model) or limits.get("*")
        return (limit.rpm, limit.tpm) if limit is not None else (None, None)

    report = dry_report(
        metric=config.metric,
        dataset=str(Path(config.dataset)),
        job=config,
        env=env,
        rows_total=loaded.total,
        planned=planned,
        rejected=sorted(rejected, key=lambda r: r.line),
        warnings=config.warnings,
        quota=quota,
    )
    if settings.use_vertexai:  # the workers' backend, read as they read it
        report.price_note = vertex_price_note([c.model for c in report.calls], env.prices)
    cap = config.max_cost_usd
    if cap is not None and report.cost_usd is not None:
        over = report.cost_usd > cap
        top = " (every verdict asked to the maximum)" if report.calls_min is not None else ""
        report.notes.append(
            f"--max-cost-usd {cap:g}: the estimate{top} is "
            + ("over it: the job would pause before it finishes" if over else "within it")
        )
    return report
