"""A row's plan: the stored one, or the metric's (rubric or candidate generation), checked for
size and stored first-write-wins, so a redelivered or re-driven row keeps its numbering."""

from __future__ import annotations

import time

from evalq.core.errors import InputError, JudgeError
from evalq.core.metric import RowContext, check_plan_size, get_metric
from evalq.worker.lifecycle.ending import fail_row
from evalq.worker.lifecycle.judge_errors import on_judge_error
from evalq.worker.lifecycle.modes import Mode
from evalq.worker.lifecycle.outcomes import (
    AwaitingReply,
    Finished,
    GaveUp,
    Held,
    Paused,
    Planned,
    RetryAfter,
    Waiting,
)
from evalq.worker.runtime import Runtime
from evalq.worker.store import RowRef


def plan_row(
    rt: Runtime, row: RowRef, ctx: RowContext, mode: Mode
) -> Planned | Finished | Paused | RetryAfter | Held | Waiting:
    """Planned with every unit's index; a row that cannot be planned fails (Finished), and a
    judge error goes by its policy (evalq.worker.lifecycle.judge_errors)."""
    metric = get_metric(ctx.job.metric)
    plan = rt.store.row_plan(row, metric.plan_model)
    if plan is None:
        try:
            plan = metric.plan(ctx)
            check_plan_size(plan, ctx.row.id, rt.settings.max_plan_bytes)
        except AwaitingReply:
            return Waiting()
        except InputError as exc:
            return fail_row(rt.store, row, "input_error", f"bad input: {exc}")
        except JudgeError as exc:
            decided = on_judge_error(rt, row.job_id, exc, mode)
            if isinstance(decided, GaveUp):
                why = f"preparing the row failed: {decided.why}"
                return fail_row(rt.store, row, exc.reason, why)
            if isinstance(decided, RetryAfter):  # waiting, not stalled
                rt.store.touch(row.job_id, row.line, at=time.time() + decided.delay_s)
            return decided
        # First write wins: a redelivery keeps the indexes the first delivery sent.
        plan = rt.store.keep_row_plan(row, plan)
    if not plan.units:
        nothing = InputError(ctx.row.id, "(row)", "nothing to judge")
        return fail_row(rt.store, row, "input_error", f"bad input: {nothing}")
    return Planned(plan, [unit.index for unit in plan.units])
