"""One unit of a row: the metric's call(s), a judge error going by its policy, and the unit's
outcome written in one round trip (Store.record_units) with what its calls held."""

from __future__ import annotations

from typing import Any

from evalq.core.errors import JudgeError
from evalq.core.metric import Plan, RowContext, Unit, get_metric
from evalq.core.models import Verdict
from evalq.core.verdicts import unscored
from evalq.worker.judges.budget import pause_if_spent
from evalq.worker.lifecycle.judge_errors import on_judge_error
from evalq.worker.lifecycle.modes import Mode
from evalq.worker.lifecycle.outcomes import AwaitingReply, GaveUp, Held, Paused, RetryAfter, Waiting
from evalq.worker.runtime import Runtime
from evalq.worker.store import RowRef
from evalq.worker.store.unit_writes import UnitWrites


def answer_unit(
    rt: Runtime,
    row: RowRef,
    ctx: RowContext,
    plan: Plan[Any],
    unit: Unit,
    mode: Mode,
) -> Verdict | Paused | RetryAfter | Held | Waiting:
    """The unit's verdict (unscored when a judge error gives up), or why it has none yet.
    Nothing is written: the caller records it, with what the unit's calls held."""
    try:
        return get_metric(ctx.job.metric).run_unit(ctx, plan, unit)
    except AwaitingReply:
        return Waiting()
    except JudgeError as exc:
        decided = on_judge_error(rt, row.job_id, exc, mode)
        if isinstance(decided, GaveUp):
            return unscored(unit.index, exc.reason, decided.why)
        return decided


def record_unit(rt: Runtime, row: RowRef, verdict: Verdict | None, writes: UnitWrites) -> bool:
    """Write a unit's outcome in one round trip (Store.record_unit), then pause the job if its
    calls brought the spend to the cap. True when `verdict` is the one stored."""
    return record_units(rt, row, [(verdict, writes)])[0]


def record_units(
    rt: Runtime, row: RowRef, outcomes: list[tuple[Verdict | None, UnitWrites]]
) -> list[bool]:
    """record_unit for several units of a row at once (Store.record_units: one round trip,
    which settles their calls' cost reservations with their spend). Every verdict is stamped
    here with the model version(s) its unit's replies reported: every way a verdict is
    stored (a unit task, prepare_row's cached units, a batch sweep) passes this point."""
    stamped = [(with_version(verdict, writes), writes) for verdict, writes in outcomes]
    recorded = rt.store.record_units(row, stamped)
    for (_, writes), outcome in zip(outcomes, recorded, strict=True):
        cost = writes.cost_nanos()
        writes.clear()
        if cost:
            pause_if_spent(rt.store, row.job_id, outcome.spent_nanos, outcome.cap_nanos)
    return [outcome.written for outcome in recorded]


def with_version(verdict: Verdict | None, writes: UnitWrites) -> Verdict | None:
    """The verdict with its unit's reply version(s), unless its metric recorded one itself."""
    version = writes.version()
    if verdict is None or verdict.model_version is not None or version is None:
        return verdict
    return verdict.model_copy(update={"model_version": version})
