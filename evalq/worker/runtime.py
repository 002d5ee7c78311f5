"""What a worker process holds: settings, the store, the limiter, and the judges of a row
(evalq.worker.judges.stack), with the RowContext a metric sees."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache

from evalq.core.errors import InputError
from evalq.core.judge import Judge, MediaPart
from evalq.core.media import allowed_types
from evalq.core.metric import RowContext
from evalq.core.pricing import job_prices
from evalq.core.shared_cache import KeyValue
from evalq.worker.dispatch.heartbeat import claim_lease_s, interval_for
from evalq.worker.judges.files import RedisShared, deliver_media, job_roots, media_rules
from evalq.worker.judges.gemini import get_judge
from evalq.worker.judges.limiter import Limit, RateLimiter
from evalq.worker.judges.media_cache import MediaCache
from evalq.worker.judges.stack import Innermost, JobCalls, api_layers, build_stack, job_layers
from evalq.worker.settings import Settings, get_settings
from evalq.worker.store import RowRef, Store
from evalq.worker.store.unit_writes import UnitWrites


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
            return held[0]  # the same request twice in one unit is asked once: its held reply
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
        calls: JobCalls,
        role: str = "judge",
        *,
        innermost: Innermost | None = None,
        probe: CacheProbe | None = None,
    ) -> Judge:
        """A judge for one job's calls (evalq.worker.judges.stack). `innermost`: in place of the
        Gemini client (and the spend cap and limiter correction before it), offered that
        client for what it may still ask online, at the online price; `probe`: read the call
        cache through it (with held writes)."""
        writes = calls.writes
        replies: KeyValue = (
            self.store.call_replies() if writes is None else HeldEntries(self.store, writes, probe)
        )
        layers = job_layers(self.store, self.settings, calls, role, replies)
        if innermost is not None:
            online = replace(calls, batch=False)
            return build_stack(innermost(model, lambda: self.api_judge(model, online)), layers)
        return build_stack(self.api_judge(model, calls), layers)

    def api_judge(self, model: str, calls: JobCalls) -> Judge:
        """The Gemini client as every call to the API reaches it: behind the spend gate (the
        job's status, its cap's reservation) and the limiter's correction."""
        inner = get_judge(model, self.settings, self.limiter)
        return build_stack(inner, api_layers(self.store, self.settings, self.limiter, calls))


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
    row: RowRef,
    writes: UnitWrites | None = None,
    *,
    innermost: Innermost | None = None,
    batch: bool = False,
    probe: CacheProbe | None = None,
    versions: set[str] | None = None,
) -> RowContext:
    """What a metric sees of the runtime for `row`; `writes`, `batch`, `versions`
    as in evalq.worker.judges.stack.JobCalls, `innermost` and `probe` as in Runtime.judge (a
    metric's own counters are held in `writes` too). With `writes` (a unit task), the judges'
    counters, cache entries and limiter corrections are written with the unit's verdict in one
    round trip (evalq.worker.lifecycle.units); without (prepare_row's calls), each at once."""
    job_id = row.job_id
    config, given = rt.store.config(job_id), rt.store.row(row)

    def media(field: str) -> MediaPart:
        ref = given.media.get(field)
        if ref is None:
            raise InputError(given.id, field, "missing")
        allowed = allowed_types(field)
        # Inline when small, uploaded once per job through the Files API when large.
        shared = RedisShared(rt.store)
        rules = media_rules(rt.settings, job_roots(config))
        return deliver_media(
            rt.settings, rt.media, shared, job_id, given.id, field, ref, allowed, rules
        )

    def count(name: str, amount: int) -> None:
        if writes is not None:
            writes.count(**{name: amount})
        else:
            rt.store.incr(job_id, **{name: amount})

    prices = job_prices(config.prices)
    calls = JobCalls(
        job_id, config.use_cache, config.thinking, prices, writes, batch, versions=versions
    )

    def judge(model: str, role: str = "judge") -> Judge:
        return rt.judge(model, calls, role, innermost=innermost, probe=probe)

    return RowContext(
        job=config,
        row=given,
        judge=judge,
        candidate=lambda model: judge(model, "candidate"),
        media=media,
        kv=rt.store.rubrics(claim_lease_s(interval_for(rt.settings.stall_timeout_s))),
        count=count,
        cache_ttl_s=rt.settings.rubric_ttl_s,
    )
