"""The bodies of the three row tasks (evalq.tasks.rows), Celery aside. prepare plans the row and
answers what it can from the call cache; the units left each become a run_unit task, and
aggregate scores the row once they have ended."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from evalq.core.metric import Plan, get_metric
from evalq.core.models import Verdict
from evalq.worker.lifecycle.ending import aggregate_and_count
from evalq.worker.lifecycle.inline_units import resolve_inline
from evalq.worker.lifecycle.modes import Online
from evalq.worker.lifecycle.outcomes import (
    Answered,
    Duplicate,
    OnlineOutcome,
    Planned,
    RetryAfter,
    Skipped,
    online_only,
)
from evalq.worker.lifecycle.planning import plan_row
from evalq.worker.lifecycle.units import answer_unit, record_unit
from evalq.worker.runtime import Runtime, row_context
from evalq.worker.store import RowRef
from evalq.worker.store.unit_writes import UnitWrites

IDLE = ("cancelled", "paused")
EARLY_CALLBACK_DELAY_S = 2.0


def prepare(rt: Runtime, row: RowRef, attempt: Online) -> OnlineOutcome:
    """Planned with the units still to ask (counted as sent), or the row finished here (every
    unit answered), failed, skipped, paused or to retry."""
    # Read now, not cached: a row skipped for a pause that a resume has just lifted would wait
    # for the watchdog.
    if rt.store.is_done(row) or rt.store.status(row.job_id) in IDLE:
        return Skipped()
    rt.store.touch(row.job_id, row.line)
    planned = plan_row(rt, row, row_context(rt, row), attempt)
    if not isinstance(planned, Planned):
        return online_only(planned)
    asked = resolve_inline(rt, row, planned.plan)
    if not asked:  # every unit answered: no chord (an empty header is not allowed)
        verdicts = rt.store.verdicts(row)
        return replace(aggregate_and_count(rt.store, row, planned.plan, verdicts), units=0)
    # Counted as sent: a redelivered prepare_row sends the units still unanswered again.
    rt.store.incr(row.job_id, unit_tasks=len(asked))
    return Planned(planned.plan, asked)


def run_unit(
    rt: Runtime, row: RowRef, index: int, writes: UnitWrites, attempt: Online
) -> OnlineOutcome:
    """One read (UnitInputs), the metric's call(s), one write (record_unit) on every way out
    but a duplicate or an idle job: a verdict, a countdown retry, a pause."""
    seen = rt.store.unit_inputs(row, index, lambda c: get_metric(c.metric).plan_model)
    if seen.verdict is not None:
        return Duplicate(seen.verdict.status)
    if seen.status in IDLE:
        return Skipped()  # left unanswered for `evalq resume`
    if seen.plan is None:
        raise RuntimeError(f"row {row.line} has no stored plan")
    ctx = row_context(rt, row, writes)  # config and row: read with the inputs
    answer = answer_unit(rt, row, ctx, seen.plan, seen.plan.units[index], attempt)
    if isinstance(answer, Verdict):
        record_unit(rt, row, answer, writes)
        return Answered(answer.status)
    if isinstance(answer, RetryAfter):  # what the unit's calls spent (a 429 counts), with
        writes.touch_at = time.time() + answer.delay_s  # the row's sign of life ahead
    record_unit(rt, row, None, writes)  # what the unit spent before the retry or pause
    return online_only(answer)


def aggregate(rt: Runtime, row: RowRef, *, early_retries_left: bool) -> OnlineOutcome:
    """Score the row and count it (once); Skipped when the job is idle with units unanswered
    (not counted: resume finishes it)."""
    if rt.store.is_done(row):
        return Duplicate()
    plan, verdicts = stored_plan(rt, row), rt.store.verdicts(row)
    if len(verdicts) < len(plan.units):
        if rt.store.status(row.job_id) in IDLE:
            return Skipped()
        # A redelivered header part can complete the chord early; wait for the stragglers a little.
        if early_retries_left:
            return RetryAfter(EARLY_CALLBACK_DELAY_S)
    return aggregate_and_count(rt.store, row, plan, verdicts)


def stored_plan(rt: Runtime, row: RowRef) -> Plan[Any]:
    model = get_metric(rt.store.config(row.job_id).metric).plan_model
    plan: Plan[Any] | None = rt.store.row_plan(row, model)
    if plan is None:
        raise RuntimeError(f"row {row.line} has no stored plan")
    return plan
