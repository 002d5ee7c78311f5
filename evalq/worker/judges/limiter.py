"""A global rate limiter in Redis, shared by every worker thread on every host: GCRA for
requests and tokens per minute per model, in one Lua script on Redis time;
docs/architecture/row-path.md ("One global rate limiter") says how callers wait."""

from __future__ import annotations

import time
from dataclasses import dataclass

from evalq.core.errors import CallCost, LimiterBusy
from evalq.worker.store import Store


@dataclass(frozen=True)
class Limit:
    rpm: int | None = None
    tpm: int | None = None
    token_burst_s: float = 6.0  # a tenth of a minute's tokens may go at once


class RateLimiter:
    def __init__(self, store: Store, limits: dict[str, Limit], max_wait_s: float = 10.0) -> None:
        self._limits = limits
        self._max_wait_ms = max_wait_s * 1000
        self._store = store  # its schedules (evalq.worker.store.schedule) run the GCRA scripts

    def limit(self, model: str) -> Limit | None:
        return self._limits.get(model) or self._limits.get("*")

    def acquire(self, model: str, tokens: int) -> float:
        """Wait for this call's slot and return the seconds waited. LimiterBusy (a countdown)
        when it is further than max_wait_s: nothing is reserved and no request is made."""
        limit = self.limit(model)
        if limit is None:
            return 0.0
        req_ms = 60_000 / limit.rpm if limit.rpm else 0
        tok_ms = 60_000 * tokens / limit.tpm if limit.tpm else 0
        tok_burst_ms = limit.token_burst_s * 1000
        reserved, wait_ms = self._store.reserve_slot(
            model,
            request_ms=req_ms,
            tokens_ms=tok_ms,
            token_burst_ms=tok_burst_ms,
            max_wait_ms=self._max_wait_ms,
        )
        wait_s = wait_ms / 1000
        if not reserved:
            raise LimiterBusy(
                f"rate limiter: next slot in {wait_s:.1f} s",
                retry_after_s=wait_s,
                cost=CallCost(attempts=0),
            )
        if wait_s > 0:
            time.sleep(wait_s)
        return wait_s

    def park(self, model: str, delay_s: float) -> None:
        """After a 429: nobody calls this model until the server's delay has passed."""
        if self.limit(model) is not None:
            self._store.park_requests(model, delay_s * 1000)

    def correct(self, model: str, estimated: int, actual: int) -> None:
        if (shift := self.correction(model, estimated, actual)) is not None:
            key, delta_ms = shift
            self._store.shift_tokens(key, delta_ms)

    def correction(self, model: str, estimated: int, actual: int) -> tuple[str, float] | None:
        """The token schedule to shift and by how many ms, once a call's real prompt size is
        known (None: nothing to shift). A unit task applies it with its outcome, in the same
        round trip (evalq.worker.store.Store.record_unit, which shifts it as limiter_correct.lua
        does)."""
        limit = self.limit(model)
        if limit is None or not limit.tpm or actual == estimated:
            return None
        return self._store.token_schedule(model), 60_000 * (actual - estimated) / limit.tpm
