"""Stop a job that every call will fail (a bad key, an unknown model, a budget the model
refuses) instead of burning through its rows: the same refusal EVALQ_FATAL_ERROR_LIMIT times
in one job pauses it."""

from __future__ import annotations

import logging
import threading
from time import monotonic

from evalq.core.errors import BadRequest, CallCost, JobHalted
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.worker.judges.layer import JudgeLayer
from evalq.worker.store import Store

log = logging.getLogger(__name__)

# Jobs this process has seen refused: their calls check the job's status first, so once the
# job is paused no further request is sent. Healthy jobs never pay for that read.
_suspect: set[str] = set()
_lock = threading.Lock()

# Refusals of something the job asks on every call (log probabilities for --soft): no row can
# be scored as asked, so the first one pauses the job (a soft job never goes on without them).
PAUSE_AT_ONCE = ("Logprobs is not enabled", "Logprobs is not supported")


def limit_for(message: str, limit: int) -> int:
    """How many identical refusals pause the job: one for a refusal of the job's own setting."""
    return 1 if any(sign in message for sign in PAUSE_AT_ONCE) else limit


class FatalErrorGuard(JudgeLayer):
    """Counts identical refusals in Redis, so across workers and hosts; different refusals
    (one bad image, another bad document) are counted apart, so a few bad rows do not stop a
    job. A refusal of a call sent before the job's last resume is not counted again."""

    def __init__(self, inner: Judge, store: Store, job_id: str, limit: int) -> None:
        super().__init__(inner, store, job_id)
        self._limit = limit

    def generate(self, request: JudgeRequest) -> JudgeReply:
        if self._job_id in _suspect and self._store.status(self._job_id) == "paused":
            reason = self._store.pause_reason(self._job_id) or "paused"
            raise JobHalted(f"job paused: {reason}", cost=CallCost(attempts=0))  # no request made
        started = monotonic()
        try:
            return self._inner.generate(request)
        except BadRequest as exc:
            if self._limit <= 0:
                raise
            with _lock:
                _suspect.add(self._job_id)
            signature = f"{self.model}: {exc.message}"
            seen = self._store.count_fatal(self._job_id, signature, monotonic() - started)
            limit = limit_for(exc.message, self._limit)
            if seen < limit:  # 0: sent before the job's last resume, the old cause's answer
                raise
            refusals = "a refusal" if limit == 1 else f"{limit} identical refusals"
            reason = f"stopped after {refusals} from {self.model}: {exc.message}"
            if self._store.pause(self._job_id, reason):
                log.warning("job %s paused: %s", self._job_id, reason)
            raise JobHalted(reason, cost=exc.cost) from None
