"""The spend cap (--max-cost-usd): a job whose priced spend reaches it pauses, as a spent daily
quota does, and `evalq resume JOB --max-cost-usd Y` continues it with a new cap.

The spend is one integer on the job hash (billionths of a dollar), added to atomically after
every billed call by whichever worker made it, so the cap holds across workers and hosts. The
check sits between the call cache and the API: a call that would start once the cap is reached
pauses the job instead, while a reply served from the cache (free) is not stopped. Calls
already in flight when the cap is reached still finish and are billed, so a job may overshoot
its cap by at most the cost of the calls running at that moment (workers x threads calls).
"""

from __future__ import annotations

import logging

from evalq.core.errors import BudgetSpent, CallCost
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.pricing import usd
from worker.judge_layer import JudgeLayer
from worker.store import Store
from worker.unit_writes import UnitWrites

log = logging.getLogger(__name__)


def cap_reason(spent_nanos: int, cap_nanos: int) -> str:
    return (
        f"cost cap reached: ${usd(spent_nanos):.4f} spent of the ${usd(cap_nanos):.4f} allowed "
        "(--max-cost-usd); `evalq resume JOB --max-cost-usd Y` continues with a new cap"
    )


def pause_if_spent(store: Store, job_id: str, spent_nanos: int, cap_nanos: int | None) -> bool:
    """Pause the job once its spend reaches its cap; True when the cap is reached."""
    if cap_nanos is None or spent_nanos < cap_nanos:
        return False
    reason = cap_reason(spent_nanos, cap_nanos)
    if store.pause(job_id, reason):
        log.warning("job %s paused: %s", job_id, reason)
    return True


class BudgetGuard(JudgeLayer):
    """Refuses a call once the job's spend has reached its cap (cache hits never get here). A
    unit task read the spend and cap when it started (`writes.budget`), and adds its own calls
    to it; anything else reads them from Redis before each call."""

    def __init__(
        self, inner: Judge, store: Store, job_id: str, writes: UnitWrites | None = None
    ) -> None:
        super().__init__(inner, store, job_id)
        self._writes = writes

    def generate(self, request: JudgeRequest) -> JudgeReply:
        known = self._writes.known_budget() if self._writes is not None else None
        spent, cap = known if known is not None else self._store.budget(self._job_id)
        if cap is not None and pause_if_spent(self._store, self._job_id, spent, cap):
            raise BudgetSpent(cap_reason(spent, cap), cost=CallCost(attempts=0))  # no request
        return self._inner.generate(request)
