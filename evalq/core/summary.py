"""The job summary, computed from stored row results and counters (pure: no Redis here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, cast

from evalq.core.candidates import cell_candidates
from evalq.core.counters import JobCounters
from evalq.core.groups import group_summaries
from evalq.core.judge_setup import judge_setup
from evalq.core.metric import get_metric
from evalq.core.models import CandidateSummary, JobConfig, JobSummary, RowResult
from evalq.core.noise_floor import noise_floor
from evalq.core.pricing import job_prices, summarize_cost, usd
from evalq.core.question_sets import job_question_set
from evalq.core.row_errors import row_errors
from evalq.core.scoring import score_figures, tag_values
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
    metric = get_metric(config.metric) if order or named else None
    for name in [*order, *named]:
        own = [r for r in rows if r.candidate == name]
        out[name] = CandidateSummary(
            rows_partial=sum(r.status == "partial" for r in own),
            rows_failed=sum(r.status == "failed" for r in own),
            **score_figures(own),
            metric_summary=metric.summarize(own) if metric is not None else {},
        )
    return out


def mean_scope(candidates: int) -> str:
    """What the job's one mean stands for. In a multi-candidate job it mixes every model's
    cells, a figure no model earned: it is labelled so wherever it is shown, and each
    candidate's own mean is the headline."""
    if candidates == 0:
        return "all rows"
    return f"pooled over {candidates} candidate{'s' if candidates > 1 else ''}"


def build_summary(
    config: JobConfig,
    counters: JobCounters,
    unscored: Mapping[str, int],
    results: Iterable[RowResult],
    now: float,
) -> JobSummary:
    """The job's summary from its counters (usage and task errors included), its unscored
    questions by reason and every row's result, as of `now`."""
    rows = list(results)
    c = counters
    candidates = candidate_summaries(rows, config)
    table = job_prices(config.prices)
    cost = summarize_cost(list(c.usage), table)
    overall = mean_interval([r.score for r in rows if r.score is not None])
    # Per tag, its own interval next to its row count: a tag seen in 3 rows is not read like
    # one seen in 300.
    by_tag = {tag: mean_interval(values) for tag, values in tag_values(rows).items()}
    status = c.status
    end = c.finished_at or now
    return JobSummary(
        job_id=config.job_id,
        metric=config.metric,
        status=cast(
            JobStatus,
            status if status in ("running", "finished", "cancelled", "paused") else "running",
        ),
        judge_model=config.judge_model,
        name=config.name,
        owner=config.owner,
        regrades=config.regrades,
        backend=config.backend,
        dataset=config.dataset,
        created_at=config.created_at,
        group_by=list(config.group_by),
        groups=group_summaries(rows, config.group_by, list(candidates)),
        column_map=dict(config.column_map),
        simulated=c.simulated_calls > 0 or any(r.simulated for r in rows),
        rows_total=config.rows_total,
        rows_done=c.rows_done,
        rows_scored=c.rows_scored,
        rows_partial=c.rows_partial,
        rows_failed=c.rows_failed,
        mean_score=overall.mean,
        ci95=overall.ci95,
        ci_method=overall.method,
        tag_scores={tag: t.mean for tag, t in by_tag.items() if t.mean is not None},
        tag_counts={tag: t.n for tag, t in by_tag.items()},
        tag_ci95={tag: t.ci95 for tag, t in by_tag.items()},
        tag_ci_method={tag: t.method for tag, t in by_tag.items()},
        candidates=candidates,
        mean_score_scope=mean_scope(len(candidates)),
        unscored_by_reason=dict(unscored),
        judged_units=get_metric(config.metric).judged_units,  # what unscored_by_reason counts
        rows_failed_by_reason=dict(c.failed_by_reason),
        judge_calls=c.judge_calls,
        prompt_tokens=c.prompt_tokens,
        output_tokens=c.output_tokens,
        rubric_cache_hits=c.rubric_cache_hits,
        cache_hits=c.cache_hits,
        retries=c.retries,
        rate_limited=c.rate_limited,
        limiter_wait_s=c.limiter_wait_ms / 1000,
        redriven=c.redriven,
        redrive_capped=c.redrive_capped,
        unit_tasks=c.unit_tasks,
        units_inline=c.units_inline,
        candidate_calls=c.candidate_calls,
        candidate_prompt_tokens=c.candidate_prompt_tokens,
        candidate_output_tokens=c.candidate_output_tokens,
        thought_tokens=c.thought_tokens,
        candidate_thought_tokens=c.candidate_thought_tokens,
        cached_tokens=c.cached_tokens + c.candidate_cached_tokens,
        thinking=roles_thinking(config, c.candidate_calls),
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
        max_cost_usd=usd(c.budget_nanos) if c.budget_nanos else None,
        mode=config.mode,
        batch=_batch_figures(config, c) if config.mode == "batch" else None,
        spent_usd=usd(c.spent_nanos),
        pause_reason=c.pause_reason if status == "paused" else None,
        calls_open_at_cancel=c.calls_open_at_cancel if status == "cancelled" else None,
        metric_summary=get_metric(config.metric).summarize(rows),
        human_agreement=_agreement(rows, config),
        warnings=config.warnings,
        elapsed_s=max(0.0, end - config.created_at),
        task_errors=c.task_errors,
        failover=c.failover,
        row_errors=row_errors(rows),  # the most common causes of failed rows, counted
        judge_setup=judge_setup(config, rows),  # models, versions, templates, thinking...
        question_set=job_question_set(rows),  # Gecko: every row's questions together
        noise_floor=noise_floor(rows, _human_column(config)),
    )


def spend_is_current(summary: JobSummary, counters: JobCounters) -> bool:
    """Whether a finished job's stored summary still holds all its spend. A call in flight when
    the job ended (a re-driven row's duplicate) is billed and counted after the summary was
    written; its cost must still show."""
    c, s = counters, summary
    now = (c.judge_calls, c.candidate_calls, c.prompt_tokens, c.output_tokens, usd(c.spent_nanos))
    return now == (s.judge_calls, s.candidate_calls, s.prompt_tokens, s.output_tokens, s.spent_usd)


def _batch_figures(config: JobConfig, c: JobCounters) -> dict[str, Any]:
    """Batch mode's figures, and what it does with a batch that ends unanswered (EXPIRED,
    FAILED, CANCELLED by the server): the summary states the choice."""
    on_expiry = (
        "sent again in a new batch"
        if config.on_expiry == "resubmit"
        else "sent online, one call per unit"
    )
    return {
        "submitted": c.batches_submitted,
        "ended_unanswered": c.batches_ended,
        "resubmitted": c.batches_resubmitted,
        "online_fallback": c.batch_online_fallback,
        # Results matched to no request of their batch (no key, a key it never sent, an
        # unreadable line): never used for a verdict. Requests it returned nothing for, and
        # requests sent again after a transient error or a missing result.
        "results_unmatched": c.batch_results_unmatched,
        "results_unknown_key": c.batch_results_unknown,
        "results_unreadable": c.batch_results_unreadable,
        "results_missing": c.batch_results_missing,
        "requests_retried": c.batch_requests_retried,
        "requests_online": c.batch_requests_online,
        # Requests answered more than once in a batch's output (none of those answers used),
        # and objects found beside the results files (never read).
        "results_conflicts": c.batch_results_conflicts,
        "results_conflicts_unscored": c.batch_results_conflicts_unscored,
        "output_ignored": c.batch_output_ignored,
        "on_expiry": config.on_expiry,
        "on_expiry_means": f"requests of a batch that ends unanswered are {on_expiry}",
        "price": "batch rate (50% of the standard price)",
    }


def _agreement(rows: list[RowResult], config: JobConfig) -> Any:
    """The judge's agreement with the dataset's human labels (evalq.core.human.agreement),
    imported only for a job that has labels: reading a stored summary, or building one for a
    job without labels (`evalq status` of a running job), does not load its statistics
    (numpy)."""
    from evalq.core.human.labels import label_sources

    sources = label_sources(rows, config)
    if not sources:
        return None
    from evalq.core.human.agreement import human_agreement

    return human_agreement(rows, config, sources)


def _human_column(config: JobConfig) -> str | None:
    column = config.options.get("human")
    return column if isinstance(column, str) and column else None


def roles_thinking(config: JobConfig, candidate_calls: int) -> dict[str, Any]:
    """The job's thinking settings for the roles its metric calls (and the model under test's,
    once it was called): the others were never used, and listing them would describe the job
    in another metric's words."""
    used = set(get_metric(config.metric).judge_roles) | (
        {"candidate"} if candidate_calls else set()
    )
    return {role: value for role, value in config.thinking.items() if role in used}
