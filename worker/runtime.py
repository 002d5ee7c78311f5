"""What a worker process holds: settings, the store, judges that account for their calls."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from evalq.errors import JudgeError, RateLimited
from evalq.judge import Judge, JudgeReply, JudgeRequest
from worker.gemini import get_judge
from worker.media_cache import MediaCache
from worker.settings import Settings, get_settings
from worker.store import Store


class AccountingJudge:
    """Wraps a judge to add every call's attempts, tokens and 429s to the job's counters."""

    def __init__(self, inner: Judge, store: Store, job_id: str) -> None:
        self.model = inner.model
        self._inner = inner
        self._store = store
        self._job_id = job_id

    def generate(self, request: JudgeRequest) -> JudgeReply:
        try:
            reply = self._inner.generate(request)
        except JudgeError as exc:
            self._store.incr(
                self._job_id,
                judge_calls=exc.attempts,
                retries=exc.attempts - 1,
                rate_limited=int(isinstance(exc, RateLimited)),
            )
            raise
        self._store.incr(
            self._job_id,
            judge_calls=reply.attempts,
            retries=reply.attempts - 1,
            prompt_tokens=reply.prompt_tokens,
            output_tokens=reply.output_tokens,
            simulated_calls=int(reply.simulated),
        )
        return reply


@dataclass
class Runtime:
    settings: Settings
    store: Store
    media: MediaCache

    def judge(self, model: str, job_id: str) -> Judge:
        return AccountingJudge(get_judge(model, self.settings), self.store, job_id)


@lru_cache(maxsize=1)
def runtime() -> Runtime:
    settings = get_settings()
    return Runtime(
        settings=settings, store=Store.from_settings(settings), media=MediaCache(256 * 1024 * 1024)
    )
