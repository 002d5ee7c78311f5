"""A job's judges, built in one place from the layers of LAYERS, outermost first; online and
batch mode differ only in the innermost judge and its price."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.pricing import Price
from evalq.core.shared_cache import KeyValue
from evalq.core.thinking import Setting, ThinkingJudge
from evalq.worker.judges.accounting import AccountingJudge
from evalq.worker.judges.budget import BudgetGuard
from evalq.worker.judges.call_cache import CachingJudge
from evalq.worker.judges.fatal_errors import FatalErrorGuard
from evalq.worker.judges.limiter import RateLimiter
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from evalq.worker.store.unit_writes import NotCached, UnitWrites

Layer = Callable[[Judge], Judge]
# A model's innermost judge, given the Gemini client as every API call reaches it (behind
# the spend gate), for one that may still ask the API (batch mode's online fallback).
Innermost = Callable[[str, Callable[[], Judge]], Judge]


class TokenCorrection:
    """Once a call's real prompt size is known, shift the limiter's token schedule by what the
    estimate missed: held in the unit's writes when there are some, else applied now."""

    def __init__(self, inner: Judge, limiter: RateLimiter, writes: UnitWrites | None) -> None:
        self.model = inner.model
        self._inner = inner
        self._limiter = limiter
        self._writes = writes

    def generate(self, request: JudgeRequest) -> JudgeReply:
        reply = self._inner.generate(request)
        estimated = request.estimated_tokens()
        if self._writes is None:
            self._limiter.correct(self.model, estimated, reply.prompt_tokens)
        elif shift := self._limiter.correction(self.model, estimated, reply.prompt_tokens):
            self._writes.corrections.append(shift)
        return reply


# The layers of one judge call, outermost first: the one list that gives their order. A job's
# judges have the first four (job_layers); a judge that asks the API also the last two
# (api_layers), between the call cache and the Gemini client.
# Outermost first. The last two wrap only the judge that reaches the API (cache hits are free):
# online the rate-limited Gemini client, in batch mode a judge answering from batch results.
LAYERS: tuple[type[Judge], ...] = (
    AccountingJudge,
    FatalErrorGuard,
    ThinkingJudge,
    CachingJudge,
    BudgetGuard,
    TokenCorrection,
)


def _in_order(made: Mapping[type[Judge], Layer]) -> list[Layer]:
    """`made`'s layers in the order of LAYERS; one LAYERS does not name is a mistake here."""
    if unknown := set(made) - set(LAYERS):
        raise ValueError(f"judge layers not in LAYERS: {sorted(k.__name__ for k in unknown)}")
    return [made[kind] for kind in LAYERS if kind in made]


def build_stack(inner: Judge, layers: Sequence[Layer]) -> Judge:
    """`inner` wrapped in `layers`, the first of them outermost."""
    judge = inner
    for layer in reversed(layers):
        judge = layer(judge)
    return judge


@dataclass(frozen=True)
class JobCalls:
    """How a job's calls are shaped, cached and counted (from its config); `writes`: a unit's
    held writes, which its judges' counters, cache entries and corrections go into;
    `reservations`: without writes, the spend cap's reservations (evalq.worker.judges.budget) of
    calls made and not yet counted; `versions`: without writes, where the replies' model versions go
    (batch mode's sweep hands each unit's to its verdict; None: nowhere)."""

    job_id: str
    use_cache: bool
    thinking: Mapping[str, Setting]
    prices: Mapping[str, Price]
    writes: UnitWrites | None = None
    batch: bool = False  # priced at the batch rate
    reservations: list[str] = field(default_factory=list)
    versions: set[str] | None = None

    def held(self) -> list[str]:
        """Where a call's reservation waits until its cost is counted."""
        return self.reservations if self.writes is None else self.writes.reservations


def job_layers(
    store: Store, settings: Settings, calls: JobCalls, role: str, replies: KeyValue
) -> list[Layer]:
    """The layers every judge of a job has, online and batch alike."""
    job_id, writes = calls.job_id, calls.writes
    return _in_order(
        {
            AccountingJudge: lambda j: AccountingJudge(
                j,
                store,
                job_id,
                role=role,
                prices=calls.prices,
                writes=writes,
                batch=calls.batch,
                held=calls.reservations,
                versions=calls.versions,
            ),
            FatalErrorGuard: lambda j: FatalErrorGuard(
                j, store, job_id, settings.fatal_error_limit
            ),
            # Thinking is applied before the cache, so it is part of the call-cache key.
            ThinkingJudge: lambda j: ThinkingJudge(
                j, calls.thinking, settings.max_output_tokens, role=_thinking_role(role)
            ),
            CachingJudge: lambda j: CachingJudge(
                j, replies, settings.call_cache_ttl_s, read=calls.use_cache
            ),
        }
    )


def _thinking_role(role: str) -> Literal["candidate"] | None:
    return "candidate" if role == "candidate" else None


def api_layers(
    store: Store, settings: Settings, limiter: RateLimiter, calls: JobCalls
) -> list[Layer]:
    """Between the call cache and the API. A reservation holds for as long as a task may run:
    no call outlives its task."""
    return _in_order(
        {
            BudgetGuard: lambda j: BudgetGuard(
                j,
                store,
                calls.job_id,
                prices=calls.prices,
                output_tokens=settings.max_output_tokens,
                hold_s=settings.task_time_limit_s,
                held=calls.held(),
                batch=calls.batch,
            ),
            TokenCorrection: lambda j: TokenCorrection(j, limiter, calls.writes),
        }
    )


class CacheOnly:
    """The innermost judge when prepare_row resolves units inline: every request that reaches
    it is a cache miss, and becomes NotCached (the unit goes to a task); it never asks the
    API, so the API judge it is offered goes unused."""

    def __init__(self, model: str, _api: Callable[[], Judge] | None = None) -> None:
        self.model = model

    def generate(self, request: JudgeRequest) -> JudgeReply:
        raise NotCached(self.model)
