"""What a worker process holds: settings, the store, the limiter, and judges wrapped as
accounting -> call cache -> rate-limited Gemini client."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from evalq.errors import InputError, JudgeError, LimiterBusy, RateLimited
from evalq.judge import Judge, JudgeReply, JudgeRequest, MediaPart, ensure_complete
from evalq.media import DOCUMENT_TYPES, IMAGE_TYPES, VIDEO_TYPES
from evalq.metric import RowContext
from evalq.thinking import Setting, ThinkingJudge
from worker import keys
from worker.call_cache import CachingJudge
from worker.fatal_errors import FatalErrorGuard
from worker.files import RedisShared, deliver_media, job_roots, media_rules
from worker.gemini import get_judge
from worker.limiter import Limit, RateLimiter
from worker.media_cache import MediaCache
from worker.settings import Settings, get_settings
from worker.store import SharedEntries, Store


class AccountingJudge:
    """Adds every call's attempts, tokens, cache hits, limiter waits and 429s to the job, then
    applies the one rule for replies that did not end normally (evalq.judge.ensure_complete):
    here, so that every metric gets it, cached replies included, after their tokens count."""

    def __init__(self, inner: Judge, store: Store, job_id: str, *, role: str = "judge") -> None:
        self.model = inner.model
        self._inner = inner
        self._store = store
        self._job_id = job_id
        # The model under test ("candidate") is counted apart from the judges.
        self._calls, self._prompt, self._output = (
            ("judge_calls", "prompt_tokens", "output_tokens")
            if role == "judge"
            else ("candidate_calls", "candidate_prompt_tokens", "candidate_output_tokens")
        )
        prefix = "" if role == "judge" else "candidate_"
        self._thoughts, self._cached = f"{prefix}thought_tokens", f"{prefix}cached_tokens"

    def generate(self, request: JudgeRequest) -> JudgeReply:
        try:
            reply = self._inner.generate(request)
        except JudgeError as exc:
            server_429 = isinstance(exc, RateLimited) and not isinstance(exc, LimiterBusy)
            self._store.incr(
                self._job_id,
                **{
                    self._calls: exc.attempts,
                    self._prompt: exc.prompt_tokens,
                    self._output: exc.output_tokens,
                    self._thoughts: exc.thought_tokens,
                },
                retries=max(0, exc.attempts - 1),
                rate_limited=int(server_429),
                limiter_wait_ms=round(exc.limiter_wait_s * 1000),
            )
            raise
        if reply.cached:
            self._store.incr(self._job_id, cache_hits=1, simulated_calls=int(reply.simulated))
            return ensure_complete(reply)
        self._store.incr(
            self._job_id,
            **{
                self._calls: reply.attempts,
                self._prompt: reply.prompt_tokens,
                self._output: reply.output_tokens,
                self._thoughts: reply.thought_tokens,
                self._cached: reply.cached_tokens,
            },
            retries=max(0, reply.attempts - 1),
            simulated_calls=int(reply.simulated),
            limiter_wait_ms=round(reply.limiter_wait_s * 1000),
        )
        return ensure_complete(reply)


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
    ) -> Judge:
        inner = get_judge(model, self.settings, self.limiter)
        replies = SharedEntries(self.store, keys.call)
        cached = CachingJudge(inner, replies, self.settings.call_cache_ttl_s, read=use_cache)
        # Thinking is applied before the cache, so it is part of the call-cache key.
        shaped = ThinkingJudge(
            cached,
            thinking or {},
            self.settings.max_output_tokens,
            role="candidate" if role == "candidate" else None,
        )
        guarded = FatalErrorGuard(shaped, self.store, job_id, self.settings.fatal_error_limit)
        return AccountingJudge(guarded, self.store, job_id, role=role)


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


# What bytes a media field may hold; checked against the bytes, not the file name.
MEDIA_KINDS: dict[str, tuple[str, ...]] = {
    "image": IMAGE_TYPES,
    "video": VIDEO_TYPES,
    "document": DOCUMENT_TYPES,
}


def row_context(rt: Runtime, job_id: str, row_id: str) -> RowContext:
    """What a metric sees of the runtime for one row."""
    config, row = rt.store.config(job_id), rt.store.row(job_id, row_id)

    def media(field: str) -> MediaPart:
        ref = row.media.get(field)
        if ref is None:
            raise InputError(row.id, field, "missing")
        allowed = MEDIA_KINDS.get(field, IMAGE_TYPES + VIDEO_TYPES + DOCUMENT_TYPES)
        # Inline when small, uploaded once per job through the Files API when large.
        shared = RedisShared(rt.store)
        rules = media_rules(rt.settings, job_roots(config))
        return deliver_media(
            rt.settings, rt.media, shared, job_id, row.id, field, ref, allowed, rules
        )

    def count(name: str, amount: int) -> None:
        rt.store.incr(job_id, **{name: amount})

    return RowContext(
        job=config,
        row=row,
        judge=lambda model: rt.judge(
            model, job_id, use_cache=config.use_cache, thinking=config.thinking
        ),
        candidate=lambda model: rt.judge(
            model, job_id, use_cache=config.use_cache, role="candidate", thinking=config.thinking
        ),
        media=media,
        kv=SharedEntries(rt.store, keys.rubric),
        count=count,
        cache_ttl_s=rt.settings.rubric_ttl_s,
    )
