"""Units prepare_row answers itself, so cached work does not become tasks: a unit with a stored
verdict, or whose every reply is in the call cache, is answered here; only the rest become run_unit
tasks."""

from __future__ import annotations

from typing import Any

from evalq.core.errors import JudgeError
from evalq.core.metric import Metric, Plan, Unit, get_metric
from evalq.core.models import Verdict
from evalq.worker.judges.stack import CacheOnly
from evalq.worker.lifecycle.units import record_units
from evalq.worker.runtime import CacheProbe, Runtime, row_context
from evalq.worker.store import RowRef
from evalq.worker.store.unit_writes import NotCached, UnitWrites


def resolve_inline(rt: Runtime, row: RowRef, plan: Plan[Any]) -> list[int]:
    """The indexes of the units that still need a judge call (a run_unit task each). The row's
    cache reads go out as one MGET (CacheProbe): a first pass notes each unit's first call's key,
    and only units whose first reply was found run again, through cache-only judges, to finish.
    A miss (NotCached), or any judge error, leaves the unit to its task and drops what its attempt
    held: nothing was spent. Hits and `units_inline` count only with the unit's new verdict, so a
    redelivered prepare_row counts nothing twice."""
    answered = rt.store.answered(row)
    left = [unit for unit in plan.units if unit.index not in answered]
    config = rt.store.config(row.job_id)
    if not left or not config.use_cache:
        return [unit.index for unit in left]
    metric = get_metric(config.metric)
    probe = CacheProbe(rt.store)
    asked: list[int] = []
    answered_here: list[tuple[Verdict | None, UnitWrites]] = []
    found: list[tuple[Unit, list[str]]] = []
    for unit in left:
        start = len(probe.wanted)
        answer = _attempt(rt, row, metric, plan, unit, probe)
        if isinstance(answer, tuple):  # answered without a judge call
            answered_here.append(answer)
        elif answer == "probe" and len(probe.wanted) > start:
            found.append((unit, probe.wanted[start:]))
        else:
            asked.append(unit.index)
    probe.fetch()
    for unit, wanted in found:
        if any(probe.known.get(key) is None for key in wanted):
            asked.append(unit.index)
            continue
        answer = _attempt(rt, row, metric, plan, unit, probe)
        if isinstance(answer, tuple):
            answered_here.append(answer)
        else:
            asked.append(unit.index)
    record_units(rt, row, answered_here)  # one round trip for the row's answers
    return sorted(asked)


def _attempt(
    rt: Runtime,
    row: RowRef,
    metric: Metric[Any, Any],
    plan: Plan[Any],
    unit: Unit,
    probe: CacheProbe,
) -> tuple[Verdict | None, UnitWrites] | str | None:
    """The unit's verdict and what it holds to write, if its replies are all known; "probe" if
    it stopped at a reply the probe has not fetched yet; None if it needs a judge call."""
    writes = UnitWrites()
    writes.count(units_inline=1)
    try:
        ctx = row_context(rt, row, writes, innermost=CacheOnly, probe=probe)
        verdict = metric.run_unit(ctx, plan, unit)
    except NotCached:
        return None if probe.fetched else "probe"
    except JudgeError:
        return None
    return verdict, writes
