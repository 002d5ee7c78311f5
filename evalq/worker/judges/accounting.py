"""The outermost layer of a job's judge stack: every reply a judge reads passes it, cached ones
included, so the counting of calls, tokens and cost, the model version noted, and the one rule
for replies that did not end normally (evalq.core.judge.ensure_complete) hold for every metric."""

from __future__ import annotations

from collections.abc import Mapping

from evalq.core.errors import CallCost, JudgeError, LimiterBusy, RateLimited
from evalq.core.judge import Judge, JudgeReply, JudgeRequest, ensure_complete
from evalq.core.pricing import Price, Usage, price_for, priced_usage
from evalq.worker.judges.budget import pause_if_spent, settle
from evalq.worker.judges.layer import JudgeLayer
from evalq.worker.store import Store
from evalq.worker.store.unit_writes import UnitWrites


class AccountingJudge(JudgeLayer):
    """Tokens and cost are counted per role (the request's: rubric, validator, judge; every
    call of the model under test is "candidate") and per model, priced per call with the job's
    price table (a call's prompt size decides long-context prices; `batch`: at the model's
    batch rate). A model with no price is counted in tokens only. The priced spend is checked
    against the job's cap after each call. Without held writes, the calls' reservations
    (evalq.worker.judges.budget, `held`) are settled here, once their cost is counted."""

    def __init__(
        self,
        inner: Judge,
        store: Store,
        job_id: str,
        *,
        role: str = "judge",
        prices: Mapping[str, Price] | None = None,
        writes: UnitWrites | None = None,
        batch: bool = False,
        held: list[str] | None = None,
        versions: set[str] | None = None,
    ) -> None:
        super().__init__(inner, store, job_id)
        self._writes = writes
        # Where the replies' model versions go: the unit's writes, stamped on its verdict when
        # it is recorded; else the caller's set (batch mode's sweep, which records per unit).
        self._versions = writes.versions if writes is not None else versions
        self._held = held
        self._batch = batch
        self._candidate = role == "candidate"
        self._price = price_for(inner.model, prices) if prices is not None else None
        # The model under test ("candidate") is counted apart from the judges.
        prefix = "candidate_" if self._candidate else ""
        self._calls = f"{prefix}calls" if self._candidate else "judge_calls"
        self._prompt = f"{prefix}prompt_tokens"
        self._output = f"{prefix}output_tokens"
        self._thoughts, self._cached = f"{prefix}thought_tokens", f"{prefix}cached_tokens"

    def _usage(self, request: JudgeRequest, spent: JudgeReply | CallCost) -> Usage | None:
        if not (
            spent.attempts or spent.prompt_tokens or spent.output_tokens or spent.thought_tokens
        ):
            return None
        role = "candidate" if self._candidate else request.role
        # A batch-mode call answered online (evalq.worker.batch.judge) is billed at the online rate.
        batch = self._batch and not (isinstance(spent, JudgeReply) and spent.online)
        return priced_usage(role, self.model, spent.attempts, spent, self._price, batch=batch)

    def _account(self, request: JudgeRequest, spent: JudgeReply | CallCost, **more: int) -> None:
        counters = {
            self._calls: spent.attempts,
            self._prompt: spent.prompt_tokens,
            self._output: spent.output_tokens,
            self._thoughts: spent.thought_tokens,
            self._cached: spent.cached_tokens,
            "retries": max(0, spent.attempts - 1),
            "limiter_wait_ms": round(spent.limiter_wait_s * 1000),
            **more,
        }
        usage = self._usage(request, spent)
        if self._writes is not None:
            self._writes.spend(counters, usage)  # the cap is checked when they are written
            return
        spent_nanos, cap = self._store.account(self._job_id, counters, usage)
        if self._held:
            settle(self._store, self._job_id, self._held)
        if usage is not None and usage.cost_nanos:
            pause_if_spent(self._store, self._job_id, spent_nanos, cap)

    def _note_version(self, reply: JudgeReply) -> None:
        # The model under test is not a judge: its version says nothing of how rows were judged.
        if reply.model_version and self._versions is not None and not self._candidate:
            self._versions.add(reply.model_version)

    def generate(self, request: JudgeRequest) -> JudgeReply:
        try:
            reply = self._inner.generate(request)
        except JudgeError as exc:
            server_429 = isinstance(exc, RateLimited) and not isinstance(exc, LimiterBusy)
            self._account(request, exc.cost, rate_limited=int(server_429))
            raise
        self._note_version(reply)  # before ensure_complete: a cut-off reply was read too
        if reply.cached:
            hits = {"cache_hits": 1, "simulated_calls": int(reply.simulated)}
            if self._writes is not None:
                self._writes.count(**hits)  # with the unit's verdict only: a duplicate adds none
            else:
                self._store.incr(self._job_id, **hits)
            return ensure_complete(reply)
        self._account(request, reply, simulated_calls=int(reply.simulated))
        return ensure_complete(reply)
