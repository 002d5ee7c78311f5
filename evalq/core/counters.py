"""A job's counters as the store keeps them: rows counted by status, calls and tokens, cache
hits, retries, spend and cap, batch mode's figures, usage per role and model, and what escaped
a task's code. The store reads them typed (evalq.worker.store.counters); the summary, the status
view and the metrics exporter read these fields, never the stored hash."""

from __future__ import annotations

from pydantic import BaseModel, Field

from evalq.core.models import FailoverNote, TaskErrors
from evalq.core.pricing import Usage


class JobCounters(BaseModel):
    status: str = "unknown"
    pause_reason: str | None = None
    # When the job last moved to each status (epoch s).
    running_at: float | None = None
    paused_at: float | None = None
    cancelled_at: float | None = None
    finished_at: float | None = None
    # Judge calls sent and not answered when the job was cancelled (evalq.worker.dispatch.turns
    # keeps them few): those already running finish and are kept, the rest are skipped.
    calls_open_at_cancel: int | None = None
    # Judge calls the gate let through (evalq.worker.judges.budget): sent, or waiting in the rate
    # limiter to be sent. None passes once the job is cancelled or paused.
    calls_admitted: int = 0

    rows_done: int = 0
    rows_scored: int = 0
    rows_partial: int = 0
    rows_failed: int = 0
    failed_by_reason: dict[str, int] = Field(default_factory=dict)
    score_sum: float = 0.0  # of rows with a score, for the running mean
    score_count: int = 0

    judge_calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    cached_tokens: int = 0
    candidate_calls: int = 0
    candidate_prompt_tokens: int = 0
    candidate_output_tokens: int = 0
    candidate_thought_tokens: int = 0
    candidate_cached_tokens: int = 0
    rubric_cache_hits: int = 0
    cache_hits: int = 0
    retries: int = 0
    rate_limited: int = 0
    limiter_wait_ms: int = 0
    simulated_calls: int = 0
    redriven: int = 0
    redrive_capped: int = 0
    unit_tasks: int = 0
    units_inline: int = 0

    spent_nanos: int = 0
    budget_nanos: int | None = None  # the spend cap in force; None: no cap

    # Batch mode.
    batches_submitted: int = 0
    batches_ended: int = 0
    batches_resubmitted: int = 0
    batch_online_fallback: int = 0
    batch_results_unmatched: int = 0
    batch_results_unknown: int = 0
    batch_results_unreadable: int = 0
    batch_results_missing: int = 0
    batch_requests_retried: int = 0
    # Requests answered by one online call each because their batch's results came back with
    # no key (item: unmatched results are never bought in another batch).
    batch_requests_online: int = 0
    # Requests answered more than once in a batch's output: no answer used, asked again once
    # (then, answered twice again, unscored); objects beside the results files, never read.
    batch_results_conflicts: int = 0
    batch_results_conflicts_unscored: int = 0
    batch_output_ignored: int = 0

    usage: list[Usage] = Field(default_factory=list)  # per role and model
    task_errors: TaskErrors | None = None  # None: none escaped
    failover: FailoverNote | None = None  # None: no Redis failover seen while it ran

    @property
    def mean_score(self) -> float | None:
        """The mean of the scored rows so far (None before the first)."""
        return self.score_sum / self.score_count if self.score_count else None
