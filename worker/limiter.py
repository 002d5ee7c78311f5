"""A global rate limiter in Redis, shared by every worker thread on every host.

GCRA with reservations, for requests per minute and tokens per minute per model, in one Lua
script on Redis time (so hosts' clocks don't matter). A caller whose slot is near waits for it
in its thread: each waiter holds its own reserved slot, so calls leave evenly spaced instead of
stampeding when a window opens. A caller whose slot is far is told to come back later (a
Celery countdown) without reserving anything. A 429 parks the model: every worker backs off
for the delay the server asked for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from evalq.core.errors import CallCost, LimiterBusy
from worker import keys
from worker.store import Store

# Reserve when both budgets allow; returns {reserved (0/1), wait_ms}.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function plan(key, increment, burst)
  if increment <= 0 then return 0, nil end
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local wait = tat - burst - now
  if wait < 0 then wait = 0 end
  return wait, tat + increment
end
local w1, n1 = plan(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
local w2, n2 = plan(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
local wait = math.max(w1, w2)
if wait > tonumber(ARGV[5]) then
  return {0, tostring(wait)}
end
if n1 then redis.call('SET', KEYS[1], tostring(n1), 'PX', math.ceil(n1 - now) + 60000) end
if n2 then redis.call('SET', KEYS[2], tostring(n2), 'PX', math.ceil(n2 - now) + 60000) end
return {1, tostring(wait)}
"""

# Push the request schedule at least delay_ms into the future.
_PARK = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local target = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < target then
  redis.call('SET', KEYS[1], tostring(target), 'PX', math.ceil(tonumber(ARGV[1])) + 60000)
end
return 1
"""

# Shift the token schedule by the difference between estimated and actual tokens.
_CORRECT = """
local tat = redis.call('GET', KEYS[1])
if not tat then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 60000 end
redis.call('SET', KEYS[1], tostring(tonumber(tat) + tonumber(ARGV[1])), 'PX', ttl)
return 1
"""


@dataclass(frozen=True)
class Limit:
    rpm: int | None = None
    tpm: int | None = None
    token_burst_s: float = 6.0  # a tenth of a minute's tokens may go at once


class RateLimiter:
    def __init__(self, store: Store, limits: dict[str, Limit], max_wait_s: float = 10.0) -> None:
        self._limits = limits
        self._max_wait_ms = max_wait_s * 1000
        self._acquire = store.script(_ACQUIRE)
        self._park = store.script(_PARK)
        self._correct = store.script(_CORRECT)

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
        reserved, wait_ms = self._acquire(
            keys=keys.limiter(model), args=[req_ms, 0, tok_ms, tok_burst_ms, self._max_wait_ms]
        )
        wait_s = float(wait_ms) / 1000
        if not int(reserved):
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
            self._park(keys=[keys.limiter(model)[0]], args=[delay_s * 1000])

    def correct(self, model: str, estimated: int, actual: int) -> None:
        if (shift := self.correction(model, estimated, actual)) is not None:
            key, delta_ms = shift
            self._correct(keys=[key], args=[delta_ms])

    def correction(self, model: str, estimated: int, actual: int) -> tuple[str, float] | None:
        """The token schedule to shift and by how many ms, once a call's real prompt size is
        known (None: nothing to shift). A unit task applies it with its outcome, in the same
        round trip (worker.store.Store.record_unit, which shifts it as _CORRECT does)."""
        limit = self.limit(model)
        if limit is None or not limit.tpm or actual == estimated:
            return None
        return keys.limiter(model)[1], 60_000 * (actual - estimated) / limit.tpm
