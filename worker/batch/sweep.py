"""One sweep of a batch-mode job: drive every row not yet done as far as the stored batch
results allow, and collect the requests still unanswered for the next round.

It is the online row's life in one loop (plan, each unit, aggregate), with the metric's own
code: verdicts are first-write-wins, rows are counted by the same finish_row, so a sweep run
twice (a worker killed mid-sweep) changes nothing the first run wrote.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from evalq.core.errors import InputError, JudgeError, SharedWorkPending, policy_of
from evalq.core.metric import Plan, check_plan_size, get_metric
from evalq.core.verdicts import unscored
from worker.batch.judge import AwaitingBatch, Collector, batch_row_context
from worker.jobs import aggregate_and_count, fail_row
from worker.runtime import Runtime, record_unit
from worker.unit_writes import UnitWrites

log = logging.getLogger(__name__)
_IDLE = ("cancelled", "paused")


@dataclass
class SweepResult:
    rows_seen: int = 0
    rows_finished: int = 0
    rows_waiting: int = 0  # on a batch reply
    rows_held: int = 0  # on work another task is doing (a shared rubric): look again later
    paused: bool = False
    cut_short: bool = False  # stopped at the time or request budget: the rest waits a round


def _pause(rt: Runtime, job_id: str, exc: JudgeError) -> None:
    if rt.store.pause(job_id, f"paused in batch mode: {exc.message}"):
        log.warning("job %s paused: %s", job_id, exc.message)


def sweep(
    rt: Runtime,
    job_id: str,
    collector: Collector,
    *,
    time_budget_s: float = float("inf"),
    max_requests: int | None = None,
) -> SweepResult:
    """Advance every row not done. It stops early, leaving the rest for the next round, once
    it has run time_budget_s (a task must end well inside its time limit) or collected
    max_requests requests (one round's batches stay a bounded size)."""
    result = SweepResult()
    metric = get_metric(rt.store.config(job_id).metric)
    started = time.monotonic()
    for row in rt.store.not_done(job_id):
        if rt.store.status(job_id) in _IDLE:
            result.paused = True
            break
        over_time = time.monotonic() - started > time_budget_s
        if over_time or (max_requests is not None and collector.requests >= max_requests):
            result.cut_short = True
            break
        result.rows_seen += 1
        outcome = _advance_row(rt, job_id, row, metric, collector)
        if outcome == "paused":
            result.paused = True
            break
        if outcome == "finished":
            result.rows_finished += 1
        elif outcome == "waiting":
            result.rows_waiting += 1
        elif outcome == "held":
            result.rows_held += 1
    collector.finish()
    return result


def _advance_row(rt: Runtime, job_id: str, row: str, metric: Any, collector: Collector) -> str:
    ctx = batch_row_context(rt, job_id, row, collector)
    try:
        plan: Plan[Any] = rt.store.row_plan(job_id, row, metric.plan_model) or metric.plan(ctx)
        check_plan_size(plan, ctx.row.id, rt.settings.max_plan_bytes)
    except AwaitingBatch:
        return "waiting"
    except InputError as exc:
        fail_row(rt.store, job_id, row, "input_error", f"bad input: {exc}")
        return "finished"
    except JudgeError as exc:
        if policy_of(exc) == "pause":
            _pause(rt, job_id, exc)
            return "paused"
        if isinstance(exc, SharedWorkPending) or policy_of(exc) == "countdown":
            return "held"
        fail_row(rt.store, job_id, row, exc.reason, f"preparing the row failed: {exc.message}")
        return "finished"
    plan = rt.store.keep_row_plan(job_id, row, plan)  # first write wins
    if not plan.units:
        nothing = InputError(ctx.row.id, "(row)", "nothing to judge")
        fail_row(rt.store, job_id, row, "input_error", f"bad input: {nothing}")
        return "finished"
    waiting = held = False
    for unit in plan.units:
        if rt.store.verdict(job_id, row, unit.index) is not None:
            continue
        try:
            verdict = metric.run_unit(ctx, plan, unit)
        except AwaitingBatch:
            waiting = True
            continue
        except JudgeError as exc:
            if policy_of(exc) == "pause":
                _pause(rt, job_id, exc)
                return "paused"
            if policy_of(exc) == "countdown":
                held = True
                continue
            verdict = unscored(unit.index, exc.reason, exc.message)
        # The online write path: first write wins, the row's sign of life with it. The batch
        # judges have accounted their calls already, so the unit's writes hold nothing else.
        record_unit(rt, job_id, row, verdict, UnitWrites())
    if waiting:
        return "waiting"
    if held:
        return "held"
    aggregate_and_count(rt.store, job_id, row, plan, rt.store.verdicts(job_id, row))
    return "finished"
