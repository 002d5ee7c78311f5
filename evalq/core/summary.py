"""The job summary, computed from stored row results and counters (pure: no Redis here)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, cast

from evalq.core.candidates import cell_candidates
from evalq.core.metric import get_metric
from evalq.core.models import CandidateSummary, JobConfig, JobSummary, RowResult
from evalq.core.pricing import Usage, job_prices, summarize_cost, usd
from evalq.core.scoring import tag_values
from evalq.stats.intervals import mean_interval

JobStatus = Literal["running", "finished", "cancelled", "paused"]


def candidate_summaries(
    rows: Sequence[RowResult], config: JobConfig
) -> dict[str, CandidateSummary]:
    """Each candidate's mean with its interval, per tag too, from its own cells only (results
    of a multi-candidate job carry their candidate column)."""
    order = cell_candidates(config.metric, config.options) or []
    named = sorted({r.candidate for r in rows if r.candidate is not None} - set(order))
    out: dict[str, CandidateSummary] = {}
    for name in [*order, *named]:
        own = [r for r in rows if r.candidate == name]
        overall = mean_interval([r.score for r in own if r.score is not None])
        by_tag = {tag: mean_interval(values) for tag, values in tag_values(own).items()}
        out[name] = CandidateSummary(
            rows=len(own),
            rows_scored=sum(r.status == "scored" for r in own),
            rows_partial=sum(r.status == "partial" for r in own),
            rows_failed=sum(r.status == "failed" for r in own),
            mean_score=overall.mean,
            ci95=overall.ci95,
            ci_method=overall.method,
            tag_scores={tag: t.mean for tag, t in by_tag.items() if t.mean is not None},
            tag_counts={tag: t.n for tag, t in by_tag.items()},
        )
    return out


def build_summary(
    config: JobConfig,
    job_hash: Mapping[str, str],
    unscored: Mapping[str, int],
    results: Iterable[RowResult],
    now: float,
    usage: Iterable[Usage] = (),
) -> JobSummary:
    rows = list(results)
    table = job_prices(config.prices)
    cost = summarize_cost(list(usage), table)
    cap = job_hash.get("budget_nanos")
    overall = mean_interval([r.score for r in rows if r.score is not None])
    # Per tag, its own interval next to its row count: a tag seen in 3 rows is not read like
    # one seen in 300.
    by_tag = {tag: mean_interval(values) for tag, values in tag_values(rows).items()}

    def count(name: str) -> int:
        return int(job_hash.get(name, 0) or 0)

    status = job_hash.get("status", "running")
    failed_by_reason = {
        k.removeprefix("failed:"): int(v)
        for k, v in sorted(job_hash.items())
        if k.startswith("failed:")
    }
    end = float(job_hash.get("finished_at") or now)
    return JobSummary(
        job_id=config.job_id,
        metric=config.metric,
        status=cast(
            JobStatus,
            status if status in ("running", "finished", "cancelled", "paused") else "running",
        ),
        judge_model=config.judge_model,
        simulated=count("simulated_calls") > 0 or any(r.simulated for r in rows),
        rows_total=config.rows_total,
        rows_done=count("rows_done"),
        rows_scored=count("rows_scored"),
        rows_partial=count("rows_partial"),
        rows_failed=count("rows_failed"),
        mean_score=overall.mean,
        ci95=overall.ci95,
        ci_method=overall.method,
        tag_scores={tag: t.mean for tag, t in by_tag.items() if t.mean is not None},
        tag_counts={tag: t.n for tag, t in by_tag.items()},
        tag_ci95={tag: t.ci95 for tag, t in by_tag.items()},
        tag_ci_method={tag: t.method for tag, t in by_tag.items()},
        candidates=candidate_summaries(rows, config),
        unscored_by_reason=dict(unscored),
        rows_failed_by_reason=failed_by_reason,
        judge_calls=count("judge_calls"),
        prompt_tokens=count("prompt_tokens"),
        output_tokens=count("output_tokens"),
        rubric_cache_hits=count("rubric_cache_hits"),
        cache_hits=count("cache_hits"),
        retries=count("retries"),
        rate_limited=count("rate_limited"),
        limiter_wait_s=count("limiter_wait_ms") / 1000,
        redriven=count("redriven"),
        redrive_capped=count("redrive_capped"),
        unit_tasks=count("unit_tasks"),
        units_inline=count("units_inline"),
        candidate_calls=count("candidate_calls"),
        candidate_prompt_tokens=count("candidate_prompt_tokens"),
        candidate_output_tokens=count("candidate_output_tokens"),
        thought_tokens=count("thought_tokens"),
        candidate_thought_tokens=count("candidate_thought_tokens"),
        cached_tokens=count("cached_tokens") + count("candidate_cached_tokens"),
        thinking=config.thinking,
        cost_usd=cost.cost_usd,
        cost_by_role=cost.by_role,
        cost_by_model=cost.by_model,
        tokens_by_role=cost.tokens_by_role,
        tokens_by_model=cost.tokens_by_model,
        usage=cost.rows,
        prices_known=not cost.unknown,
        price_date=cost.price_date,
        prices=cost.prices,
        cost_note=cost.note,
        max_cost_usd=usd(int(cap)) if cap else None,
        mode=config.mode,
        batch=_batch_figures(config, count) if config.mode == "batch" else None,
        spent_usd=usd(count("spent_nanos")),
        pause_reason=job_hash.get("pause_reason") if status == "paused" else None,
        metric_summary=get_metric(config.metric).summarize(rows),
        warnings=config.warnings,
        elapsed_s=max(0.0, end - config.created_at),
    )


def _batch_figures(config: JobConfig, count: Callable[[str], int]) -> dict[str, Any]:
    """Batch mode's figures, and what it does with a batch that ends unanswered (EXPIRED,
    FAILED, CANCELLED by the server): the summary states the choice."""
    on_expiry = (
        "sent again in a new batch"
        if config.on_expiry == "resubmit"
        else "sent online, one call per unit"
    )
    return {
        "submitted": count("batches_submitted"),
        "ended_unanswered": count("batches_ended"),
        "resubmitted": count("batches_resubmitted"),
        "online_fallback": count("batch_online_fallback"),
        # Results matched to no request of their batch (no key, a key it never sent, an
        # unreadable line): never used for a verdict. Requests it returned nothing for, and
        # requests sent again after a transient error or a missing result.
        "results_unmatched": count("batch_results_unmatched"),
        "results_unknown_key": count("batch_results_unknown"),
        "results_unreadable": count("batch_results_unreadable"),
        "results_missing": count("batch_results_missing"),
        "requests_retried": count("batch_requests_retried"),
        "on_expiry": config.on_expiry,
        "on_expiry_means": f"requests of a batch that ends unanswered are {on_expiry}",
        "price": "batch rate (50% of the standard price)",
    }
