"""What a worker process holds: settings, the store, the limiter, and judges wrapped as
accounting -> call cache -> spend cap -> limiter correction -> rate-limited Gemini client.

A unit task hands its judges a worker.unit_writes.UnitWrites: their counters, cache entries and
limiter corrections are then held and written with the unit's verdict in one round trip
(tasks.rows). Without one (prepare_row's rubric and candidate calls) each is written at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from evalq.core.errors import InputError, JudgeError, LimiterBusy, RateLimited
from evalq.core.judge import Judge, JudgeReply, JudgeRequest, MediaPart, ensure_complete
from evalq.core.kv import KeyValue
from evalq.core.media import allowed_types
from evalq.core.metric import RowContext
from evalq.core.models import Verdict
from evalq.core.pricing import Price, Usage, call_cost_nanos, job_prices, price_for
from evalq.core.thinking import Setting, ThinkingJudge
from worker.budget import BudgetGuard, pause_if_spent
from worker.call_cache import CachingJudge
from worker.fatal_errors import FatalErrorGuard
from worker.files import RedisShared, deliver_media, job_roots, media_rules
from worker.gemini import get_judge
from worker.heartbeat import claim_lease_s, interval_for
from worker.limiter import Limit, RateLimiter
from worker.media_cache import MediaCache
from worker.settings import Settings, get_settings
from worker.store import Store
from worker.unit_writes import NotCached, UnitWrites


class AccountingJudge:
    """Adds every call's attempts, tokens, cost, cache hits, limiter waits and 429s to the job,
    then applies the one rule for replies that did not end normally (evalq.core.judge.ensure_complete):
    here, so that every metric gets it, cached replies included, after their tokens count.

    Tokens and cost are counted per role (the request's: rubric, validator, judge; every call
    of the model under test is "candidate") and per model, priced per call with the job's price
    table (a call's prompt size decides long-context prices). A model with no price is counted
    in tokens only. The priced spend is checked against the job's cap after each call."""

    def __init__(
        self,
        inner: Judge,
        store: Store,
        job_id: str,
        *,
        role: str = "judge",
        prices: Mapping[str, Price] | None = None,
        writes: UnitWrites | None = None,
    ) -> None:
        self.model = inner.model
        self._inner = inner
        self._store = store
        self._job_id = job_id
        self._writes = writes
        self._candidate = role == "candidate"
        self._price = price_for(inner.model, prices) if prices is not None else None
        # The model under test ("candidate") is counted apart from the judges.
        self._calls, self._prompt, self._output = (
            ("candidate_calls", "candidate_prompt_tokens", "candidate_output_tokens")
            if self._candidate
            else ("judge_calls", "prompt_tokens", "output_tokens")
        )
        prefix = "candidate_" if self._candidate else ""
        self._thoughts, self._cached = f"{prefix}thought_tokens", f"{prefix}cached_tokens"

    def _usage(
        self, request: JudgeRequest, calls: int, prompt: int, output: int, thought: int, cached: int
    ) -> Usage | None:
        if not (calls or prompt or output or thought):
            return None
        cost = 0
        if self._price is not None:
            cost = call_cost_nanos(self._price, prompt, output, thought, cached)
        role = "candidate" if self._candidate else request.role
        return Usage(
            role=role,
            model=self.model,
            calls=calls,
            prompt=prompt,
            output=output,
            thought=thought,
            cached=cached,
            cost_nanos=cost,
        )

    def _account(self, counters: dict[str, int], usage: Usage | None) -> None:
        if self._writes is not None:
            self._writes.spend(counters, usage)  # the cap is checked when they are written
            return
        spent, cap = self._store.account(self._job_id, counters, usage)
        if usage is not None and usage.cost_nanos:
            pause_if_spent(self._store, self._job_id, spent, cap)

    def generate(self, request: JudgeRequest) -> JudgeReply:
        try:
            reply = self._inner.generate(request)
        except JudgeError as exc:
            server_429 = isinstance(exc, RateLimited) and not isinstance(exc, LimiterBusy)
            self._account(
                {
                    self._calls: exc.attempts,
                    self._prompt: exc.prompt_tokens,
                    self._output: exc.output_tokens,
                    self._thoughts: exc.thought_tokens,
                    self._cached: exc.cached_tokens,
                    "retries": max(0, exc.attempts - 1),
                    "rate_limited": int(server_429),
                    "limiter_wait_ms": round(exc.limiter_wait_s * 1000),
                },
                self._usage(
                    request,
                    exc.attempts,
                    exc.prompt_tokens,
                    exc.output_tokens,
                    exc.thought_tokens,
                    exc.cached_tokens,
                ),
            )
            raise
        if reply.cached:
            hits = {"cache_hits": 1, "simulated_calls": int(reply.simulated)}
            if self._writes is not None:
                self._writes.count(**hits)  # with the unit's verdict only: a duplicate adds none
            else:
                self._store.incr(self._job_id, **hits)
            return ensure_complete(reply)
        self._account(
            {
                self._calls: reply.attempts,
                self._prompt: reply.prompt_tokens,
                self._output: reply.output_tokens,
                self._thoughts: reply.thought_tokens,
                self._cached: reply.cached_tokens,
                "retries": max(0, reply.attempts - 1),
                "simulated_calls": int(reply.simulated),
                "limiter_wait_ms": round(reply.limiter_wait_s * 1000),
            },
            self._usage(
                request,
                reply.attempts,
                reply.prompt_tokens,
                reply.output_tokens,
                reply.thought_tokens,
                reply.cached_tokens,
            ),
        )
        return ensure_complete(reply)


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


class CacheOnly:
    """The judge behind the call cache when prepare_row resolves units inline: every request
    that reaches it is a cache miss, and becomes NotCached (the unit goes to a task)."""

    def __init__(self, model: str) -> None:
        self.model = model

    def generate(self, request: JudgeRequest) -> JudgeReply:
        raise NotCached(self.model)


@dataclass
class CacheProbe:
    """prepare_row's reads of the call cache, one MGET for a row instead of a GET per unit.

    A first pass over the row's units notes each call digest asked for and answers it as a miss;
    `fetch` reads them all at once. The pass after it answers from what was fetched, and reads
    any other (a unit's later call, which depends on an earlier reply) on its own."""

    store: Store
    known: dict[str, str | None] = field(default_factory=dict)
    wanted: list[str] = field(default_factory=list)
    fetched: bool = False

    def get(self, digest: str) -> str | None:
        if digest in self.known:
            return self.known[digest]
        if self.fetched:
            return self.store.cached_call(digest)
        self.wanted.append(digest)
        return None

    def fetch(self) -> None:
        wanted = list(dict.fromkeys(self.wanted))
        self.known.update(zip(wanted, self.store.cached_calls(wanted), strict=True))
        self.fetched = True


@dataclass(frozen=True)
class HeldEntries:
    """Call-cache entries read now and written with the unit's outcome (Store.record_unit)."""

    store: Store
    writes: UnitWrites
    probe: CacheProbe | None = None

    def get(self, entry: str) -> str | None:
        if (held := self.writes.replies.get(entry)) is not None:
            return held[0]  # the same request twice in one unit is asked once, as before
        return self.probe.get(entry) if self.probe else self.store.cached_call(entry)

    def set(self, entry: str, value: str, ttl_s: int) -> None:
        self.writes.replies[entry] = (value, ttl_s)


@dataclass
class Runtime:
    settings: Settings
    store: Store
    media: MediaCache
    limiter: RateLimiter

    def judge(
        self,
        model: str,
        job_id: str,
        *,
        use_cache: bool = True,
        role: str = "judge",
        thinking: Mapping[str, Setting] | None = None,
        prices: Mapping[str, Price] | None = None,
        writes: UnitWrites | None = None,
        cache_only: bool = False,
        probe: CacheProbe | None = None,
    ) -> Judge:
        """A judge for one job's calls. `writes`: hold what its calls write for the unit's
        one write. `cache_only`: answer from the call cache or raise NotCached, never call;
        `probe`: read the call cache through it (with `writes`)."""
        capped: Judge
        if cache_only:
            capped = CacheOnly(model)
        else:
            inner = get_judge(model, self.settings, self.limiter)
            corrected = TokenCorrection(inner, self.limiter, writes)
            # The spend cap is checked only for calls that would reach the API: cache hits are
            # free.
            capped = BudgetGuard(corrected, self.store, job_id, writes)
        replies: KeyValue = (
            self.store.call_replies() if writes is None else HeldEntries(self.store, writes, probe)
        )
        cached = CachingJudge(capped, replies, self.settings.call_cache_ttl_s, read=use_cache)
        # Thinking is applied before the cache, so it is part of the call-cache key.
        shaped = ThinkingJudge(
            cached,
            thinking or {},
            self.settings.max_output_tokens,
            role="candidate" if role == "candidate" else None,
        )
        guarded = FatalErrorGuard(shaped, self.store, job_id, self.settings.fatal_error_limit)
        return AccountingJudge(
            guarded,
            self.store,
            job_id,
            role=role,
            prices=self.settings.price_table() if prices is None else prices,
            writes=writes,
        )


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    settings = get_settings()
    store = Store.from_settings(settings)
    limits = {
        model: Limit(rpm=limit.rpm, tpm=limit.tpm) for model, limit in settings.rate_limits.items()
    }
    limiter = RateLimiter(store, limits, max_wait_s=settings.limiter_max_wait_s)
    return Runtime(
        settings=settings, store=store, media=MediaCache(256 * 1024 * 1024), limiter=limiter
    )


def row_context(
    rt: Runtime,
    job_id: str,
    row_id: str,
    writes: UnitWrites | None = None,
    *,
    cache_only: bool = False,
    probe: CacheProbe | None = None,
) -> RowContext:
    """What a metric sees of the runtime for one row; `writes`, `cache_only` and `probe` as in
    Runtime.judge (a metric's own counters are held in `writes` too)."""
    config, row = rt.store.config(job_id), rt.store.row(job_id, row_id)

    def media(field: str) -> MediaPart:
        ref = row.media.get(field)
        if ref is None:
            raise InputError(row.id, field, "missing")
        allowed = allowed_types(field)
        # Inline when small, uploaded once per job through the Files API when large.
        shared = RedisShared(rt.store)
        rules = media_rules(rt.settings, job_roots(config))
        return deliver_media(
            rt.settings, rt.media, shared, job_id, row.id, field, ref, allowed, rules
        )

    def count(name: str, amount: int) -> None:
        if writes is not None:
            writes.count(**{name: amount})
        else:
            rt.store.incr(job_id, **{name: amount})

    prices = job_prices(config.prices)

    def judge(model: str, role: str = "judge") -> Judge:
        return rt.judge(
            model,
            job_id,
            use_cache=config.use_cache,
            role=role,
            thinking=config.thinking,
            prices=prices,
            writes=writes,
            cache_only=cache_only,
            probe=probe,
        )

    return RowContext(
        job=config,
        row=row,
        judge=judge,
        candidate=lambda model: judge(model, "candidate"),
        media=media,
        kv=rt.store.rubrics(claim_lease_s(interval_for(rt.settings.stall_timeout_s))),
        count=count,
        cache_ttl_s=rt.settings.rubric_ttl_s,
    )


def record_unit(
    rt: Runtime, job_id: str, row: str, verdict: Verdict | None, writes: UnitWrites
) -> bool:
    """Write a unit's outcome in one round trip (Store.record_unit), then pause the job if its
    calls brought the spend to the cap. True when `verdict` is the one stored."""
    return record_units(rt, job_id, row, [(verdict, writes)])[0]


def record_units(
    rt: Runtime, job_id: str, row: str, outcomes: list[tuple[Verdict | None, UnitWrites]]
) -> list[bool]:
    """record_unit for several units of a row at once (Store.record_units: one round trip)."""
    recorded = rt.store.record_units(job_id, row, outcomes)
    for (_, writes), outcome in zip(outcomes, recorded, strict=True):
        cost = writes.cost_nanos()
        writes.clear()
        if cost:
            pause_if_spent(rt.store, job_id, outcome.spent_nanos, outcome.cap_nanos)
    return [outcome.written for outcome in recorded]
