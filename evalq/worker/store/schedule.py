"""The global rate limiter's schedules (evalq.worker.judges.limiter decides the amounts; these
keep them): per model a request schedule and a token schedule, GCRA theoretical arrival times
on Redis's clock."""

from __future__ import annotations

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase


class ScheduleStore(StoreBase):
    def reserve_slot(
        self,
        model: str,
        *,
        request_ms: float,
        tokens_ms: float,
        token_burst_ms: float,
        max_wait_ms: float,
    ) -> tuple[bool, float]:
        """Reserve a call's slot on the model's schedules when the wait for it is at most
        max_wait_ms; returns (reserved, the wait in ms)."""
        reserved, wait_ms = self._script("limiter_acquire")(
            keys=keys.limiter(model), args=[request_ms, 0, tokens_ms, token_burst_ms, max_wait_ms]
        )
        return bool(int(reserved)), float(wait_ms)

    def park_requests(self, model: str, delay_ms: float) -> None:
        """Nobody calls the model until delay_ms from now (after a 429)."""
        self._script("limiter_park")(keys=[keys.limiter(model)[0]], args=[delay_ms])

    def shift_tokens(self, schedule: str, delta_ms: float) -> None:
        """Shift a token schedule (as named by the limiter's correction) by delta_ms."""
        self._script("limiter_correct")(keys=[schedule], args=[delta_ms])

    @staticmethod
    def token_schedule(model: str) -> str:
        """The name of the model's token schedule, which a unit's writes hold a shift of."""
        return keys.limiter(model)[1]
