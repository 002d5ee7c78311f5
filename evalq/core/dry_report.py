"""The dry run's report: the planned calls per role and model with their tokens and cost, the
time at the configured quota, the rows a real run would fail, and the notes on what is
estimated. Built from a DryEnv once every row is planned (evalq.core.dry_run)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pydantic import BaseModel, Field

from evalq.core.dry_run import CallTally, DryEnv
from evalq.core.models import JobConfig
from evalq.core.pricing import describe, price_for, usd


class PlannedCalls(BaseModel):
    role: str
    model: str
    calls: int
    prompt_tokens: int
    output_tokens: int  # the answers (evalq's estimate per call kind)
    thought_tokens: int  # the thinking allowance of the role, billed as output
    cost_usd: float | None  # None: no price known for the model
    price: str | None = None


class RejectedRow(BaseModel):
    line: int
    id: str
    reason: str = "input_error"
    error: str


class DryRunReport(BaseModel):
    """What `evalq run --dry-run` prints: the plan, its tokens, cost and time, and the rows a
    real run would fail. Nothing was enqueued and no generate call was made."""

    metric: str
    dataset: str
    dry_run: bool = True
    rows_total: int
    rows_planned: int
    rows_rejected: int
    rejected: list[RejectedRow] = Field(default_factory=list)
    # Every row would fail: why (and the fix, when it is the media's place); a run refuses
    # what this says when it is about the media, and runs to no scored row otherwise.
    refusal: str | None = None
    warnings: list[str] = Field(default_factory=list)
    judge_models: list[str] = Field(default_factory=list)
    thinking: dict[str, int | str] = Field(default_factory=dict)
    calls: list[PlannedCalls] = Field(default_factory=list)
    calls_total: int = 0
    # With adaptive repeats (--samples auto), the calls and cost if every verdict is decided
    # at the minimum; calls_total and cost_usd are the top (every verdict asked to the
    # maximum), what a spend cap must allow. None: every call is certain.
    calls_min: int | None = None
    cost_usd_min: float | None = None
    prompt_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    cost_usd: float | None = None
    cost_usd_batch: float | None = None  # the same calls at Batch API prices (not yet used)
    cost_by_role: dict[str, float | None] = Field(default_factory=dict)
    cost_note: str | None = None
    price_date: str | None = None
    # On Vertex AI: the prices are the Gemini API's, not Vertex's (pricing.vertex_price_note).
    price_note: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)  # rubrics, questions, samples, pairs
    time_s: float | None = None  # at the configured quota (a lower bound)
    time_by_model_s: dict[str, float | None] = Field(default_factory=dict)
    time_note: str | None = None
    token_method: str = ""
    notes: list[str] = Field(default_factory=list)


QuotaLookup = Callable[[str], tuple[int | None, int | None]]  # model -> (rpm, tpm)


def quota_time(
    tallies: Mapping[tuple[str, str], CallTally], quota: QuotaLookup
) -> tuple[float | None, dict[str, float | None], str]:
    """Seconds the calls take at the configured quota: per model the slower of requests and
    input tokens per minute; models are paced apart, so the job takes the slowest one. A lower
    bound (latency, workers and retries add to it)."""
    per_model: dict[str, list[int]] = {}
    for (_, model), tally in tallies.items():
        entry = per_model.setdefault(model, [0, 0])
        entry[0] += tally.calls
        entry[1] += tally.prompt
    times: dict[str, float | None] = {}
    missing: list[str] = []
    for model, (calls, tokens) in sorted(per_model.items()):
        rpm, tpm = quota(model)
        if rpm is None and tpm is None:
            times[model] = None
            missing.append(model)
            continue
        minutes = max(calls / rpm if rpm else 0.0, tokens / tpm if tpm else 0.0)
        times[model] = minutes * 60
    if missing:
        note = (
            f"no quota configured for {', '.join(missing)} (EVALQ_RATE_LIMITS): the time depends "
            "on the judges' latency and the workers, so it is not estimated"
        )
        return None, times, note
    total = max((t for t in times.values() if t is not None), default=0.0)
    note = "at the configured quota (EVALQ_RATE_LIMITS): a lower bound; latency adds to it"
    return total, times, note


def report(
    *,
    metric: str,
    dataset: str,
    job: JobConfig,
    env: DryEnv,
    rows_total: int,
    planned: int,
    rejected: Iterable[RejectedRow],
    warnings: list[str],
    quota: QuotaLookup,
) -> DryRunReport:
    calls: list[PlannedCalls] = []
    unknown: set[str] = set()
    by_role: dict[str, float | None] = {}
    total, batch = 0, 0
    optional_calls = sum(tally.optional_calls for tally in env.tallies.values())
    optional_nanos = sum(tally.optional_nanos for tally in env.tallies.values())
    for (role, model), tally in sorted(env.tallies.items()):
        price = price_for(model, env.prices)
        cost = usd(tally.cost_nanos) if price is not None else None
        if price is None:
            unknown.add(model)
        else:
            total += tally.cost_nanos
            batch += tally.batch_nanos
        before = by_role.get(role, 0.0)
        by_role[role] = None if before is None or cost is None else before + cost
        calls.append(
            PlannedCalls(
                role=role,
                model=model,
                calls=tally.calls,
                prompt_tokens=tally.prompt,
                output_tokens=tally.output,
                thought_tokens=tally.thought,
                cost_usd=cost,
                price=describe(price) if price is not None else None,
            )
        )
    dates = sorted(
        {p.date for c in calls if (p := price_for(c.model, env.prices)) is not None and p.date}
    )
    time_s, by_model, time_note = quota_time(env.tallies, quota)
    rejected_rows = list(rejected)
    return DryRunReport(
        metric=metric,
        dataset=dataset,
        rows_total=rows_total,
        rows_planned=planned,
        rows_rejected=len(rejected_rows),
        rejected=rejected_rows,
        warnings=warnings,
        judge_models=list(job.judge_models or [job.judge_model]),
        thinking=dict(job.thinking),
        calls=calls,
        calls_total=sum(c.calls for c in calls),
        calls_min=(sum(c.calls for c in calls) - optional_calls if optional_calls else None),
        cost_usd_min=None if unknown or not optional_calls else usd(total - optional_nanos),
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        thought_tokens=sum(c.thought_tokens for c in calls),
        cost_usd=None if unknown else usd(total),
        cost_usd_batch=None if unknown else usd(batch),
        cost_by_role=by_role,
        cost_note=(
            f"no price known for {', '.join(sorted(unknown))}: its tokens are shown, its cost "
            "and the total are unknown (set EVALQ_PRICES to price it)"
            if unknown
            else None
        ),
        price_date=", ".join(dates) or None,
        counts=dict(sorted(env.counters.items())),
        time_s=time_s,
        time_by_model_s=by_model,
        time_note=time_note,
        token_method=env.counter.method,
        notes=env.notes,
    )
