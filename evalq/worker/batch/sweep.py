"""One sweep of a batch-mode job: drive every row not yet done as far as the stored batch
results allow, through the online row's life (evalq.worker.lifecycle), and collect the requests
still unanswered; a sweep run twice changes nothing the first run wrote."""

from __future__ import annotations

import time
from dataclasses import dataclass

from evalq.core.models import Verdict
from evalq.worker.batch.judge import Collector, batch_row_context
from evalq.worker.lifecycle.ending import aggregate_and_count
from evalq.worker.lifecycle.modes import BATCH
from evalq.worker.lifecycle.online import IDLE
from evalq.worker.lifecycle.outcomes import Finished, Held, Outcome, Paused, Planned, Waiting
from evalq.worker.lifecycle.planning import plan_row
from evalq.worker.lifecycle.units import answer_unit, record_unit
from evalq.worker.runtime import Runtime
from evalq.worker.store import RowRef
from evalq.worker.store.unit_writes import UnitWrites


@dataclass
class SweepResult:
    rows_seen: int = 0
    rows_finished: int = 0
    rows_waiting: int = 0  # on a batch reply
    rows_held: int = 0  # on work another task is doing (a shared rubric): look again later
    paused: bool = False
    cut_short: bool = False  # stopped at the time or request budget: the rest waits a round


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
    started = time.monotonic()
    for line in rt.store.not_done(job_id):
        if rt.store.status(job_id) in IDLE:
            result.paused = True
            break
        over_time = time.monotonic() - started > time_budget_s
        if over_time or (max_requests is not None and collector.requests >= max_requests):
            result.cut_short = True
            break
        result.rows_seen += 1
        outcome = _advance_row(rt, RowRef(job_id, line), collector)
        if isinstance(outcome, Paused):
            result.paused = True
            break
        result.rows_finished += isinstance(outcome, Finished)
        result.rows_waiting += isinstance(outcome, Waiting)
        result.rows_held += isinstance(outcome, Held)
    collector.finish()
    return result


def _advance_row(rt: Runtime, row: RowRef, collector: Collector) -> Outcome:
    """The online row's life (evalq.worker.lifecycle) with the batch judges: every unit not answered
    is asked, and the row is scored once none waits or is held."""
    versions: set[str] = set()  # of the replies read since it was last emptied
    ctx = batch_row_context(rt, row, collector, versions)
    planned = plan_row(rt, row, ctx, BATCH)
    if not isinstance(planned, Planned):
        return planned
    waiting = held = False
    for unit in planned.plan.units:
        if rt.store.verdict(row, unit.index) is not None:
            continue
        versions.clear()  # the unit's own replies only, as a unit task's writes hold them
        answer = answer_unit(rt, row, ctx, planned.plan, unit, BATCH)
        if isinstance(answer, Paused):
            return answer
        waiting = waiting or isinstance(answer, Waiting)
        held = held or isinstance(answer, Held)
        if isinstance(answer, Verdict):
            # The online write path: first write wins, the row's sign of life with it. The
            # batch judges have accounted their calls already, so the writes hold only the
            # replies' versions, which the verdict is stamped with.
            record_unit(rt, row, answer, UnitWrites(versions=set(versions)))
    if waiting:
        return Waiting()
    if held:
        return Held()
    verdicts = rt.store.verdicts(row)
    return aggregate_and_count(rt.store, row, planned.plan, verdicts)
