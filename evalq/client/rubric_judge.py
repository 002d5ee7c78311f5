"""The rubric judge of `evalq rubrics`, built in the client process as a worker builds its own
(evalq.worker.judges.stack) minus a job's accounting; what its calls cost is tallied for the
report."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from evalq.core.errors import JudgeError, RateLimited
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.worker.jobs.control import JobControl
from evalq.worker.settings import Settings


@dataclass
class Tally:
    """What the rubric calls made here cost: calls sent, replies from the call cache, tokens."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, *, calls: int, cached: int, prompt: int, output: int, thought: int) -> None:
        with self.lock:
            self.calls += calls
            self.cached += cached
            self.prompt_tokens += prompt
            self.output_tokens += output
            self.thought_tokens += thought


class TallyingJudge:
    """Counts every reply (a cached one as cached) and what a failed call was billed."""

    def __init__(self, inner: Judge, tally: Tally) -> None:
        self.model = inner.model
        self._inner = inner
        self._tally = tally

    def generate(self, request: JudgeRequest) -> JudgeReply:
        try:
            reply = self._inner.generate(request)
        except JudgeError as exc:
            cost = exc.cost
            self._tally.add(
                calls=cost.attempts,
                cached=0,
                prompt=cost.prompt_tokens,
                output=cost.output_tokens,
                thought=cost.thought_tokens,
            )
            raise
        self._tally.add(
            calls=0 if reply.cached else reply.attempts,
            cached=int(reply.cached),
            prompt=0 if reply.cached else reply.prompt_tokens,
            output=0 if reply.cached else reply.output_tokens,
            thought=0 if reply.cached else reply.thought_tokens,
        )
        return reply


class WaitingJudge:
    """A call the global limiter has no slot for yet, or the server answered with a 429, waits
    the delay it was given and goes again (a worker would be a countdown instead), for at most
    `max_total_s` in all."""

    def __init__(self, inner: Judge, max_total_s: float) -> None:
        self.model = inner.model
        self._inner = inner
        self._max_total_s = max_total_s

    def generate(self, request: JudgeRequest) -> JudgeReply:
        waited = 0.0
        while True:
            try:
                return self._inner.generate(request)
            except RateLimited as exc:
                delay = max(0.05, exc.retry_after_s)
                if waited + delay > self._max_total_s:
                    raise
                time.sleep(delay)
                waited += delay


def rubric_judge(settings: Settings, control: JobControl, model: str, use_cache: bool) -> Judge:
    """The rubric model's judge as a worker builds it, minus a job's accounting: thinking
    (the rubric role's setting, part of the call-cache key), the call cache, the limiter's
    token correction and the rate-limited Gemini client."""
    from evalq.client.submit import job_thinking_settings
    from evalq.core.thinking import ThinkingJudge
    from evalq.worker.judges.call_cache import CachingJudge
    from evalq.worker.judges.gemini import GeminiJudge
    from evalq.worker.judges.limiter import Limit
    from evalq.worker.judges.stack import TokenCorrection, build_stack

    thinking, _ = job_thinking_settings(settings.thinking, None, [model], {}, model)
    limits = {m: Limit(rpm=x.rpm, tpm=x.tpm) for m, x in settings.rate_limits.items()}
    limiter = control.rate_limiter(limits, settings.limiter_max_wait_s)
    inner = GeminiJudge(model, settings, limiter=limiter)
    ttl = settings.call_cache_ttl_s
    return build_stack(
        inner,
        [
            lambda j: ThinkingJudge(j, thinking, settings.max_output_tokens),
            lambda j: CachingJudge(j, control.call_replies(), ttl, read=use_cache),
            lambda j: WaitingJudge(j, settings.rate_limit_max_total_s),
            lambda j: TokenCorrection(j, limiter, None),
        ],
    )
