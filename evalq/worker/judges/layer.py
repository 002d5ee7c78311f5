"""What a layer of a job's judge stack (evalq.worker.judges.stack) holds: the judge it wraps (whose
model it answers for), the store, and the job whose calls pass through it."""

from __future__ import annotations

from evalq.core.judge import Judge
from evalq.worker.store import Store


class JudgeLayer:
    def __init__(self, inner: Judge, store: Store, job_id: str) -> None:
        self.model = inner.model
        self._inner = inner
        self._store = store
        self._job_id = job_id
