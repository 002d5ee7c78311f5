"""The fake server's knobs real Gemini has no equal for, and the quotas it does have:
per-model sliding windows (--rpm, --rpd), seeded random faults, and the counters /stats shows."""

from __future__ import annotations

import math
import random
import time
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from evalq.fake_gemini.protocol import (
    JsonObject,
)
from evalq.fake_gemini.script import (
    QuotaKind,
)

Fault = Literal["429", "503", "slow", "malformed", "max_tokens"]
FAULTS: tuple[Fault, ...] = ("429", "503", "slow", "malformed", "max_tokens")
MAX_EVENTS = 10_000
# quotaValue reported by scripted or fault 429s when no matching --rpm/--rpd is set.
NOMINAL_QUOTA_VALUE = 10
QUOTA_IDS: dict[QuotaKind, str] = {
    "minute": "GenerateRequestsPerMinutePerProjectPerModel",
    "day": "GenerateRequestsPerDayPerProjectPerModel",
}
_QUOTA_PERIOD_S: dict[QuotaKind, float] = {"minute": 60.0, "day": 86_400.0}


@dataclass(frozen=True)
class QuotaHit:
    """Which quota a request ran into, and when a retry could succeed."""

    kind: QuotaKind
    limit: int
    retry_s: float


class SlidingWindow:
    """Admits at most ``limit`` hits in any ``period_s`` span, like Gemini's quotas."""

    def __init__(self, limit: int, period_s: float) -> None:
        self.limit = limit
        self.period_s = period_s
        self._hits: deque[float] = deque()

    def wait_s(self, now: float) -> float | None:
        """Seconds until a slot frees (at least 1, whole seconds), or None if one is free."""
        while self._hits and self._hits[0] <= now - self.period_s:
            self._hits.popleft()
        if len(self._hits) < self.limit:
            return None
        return float(max(1, math.ceil(self._hits[0] + self.period_s - now)))

    def record(self, now: float) -> None:
        self._hits.append(now)


class Quotas:
    """Per-model minute and day windows; a request counts only if both admit it."""

    def __init__(self, rpm: int | None, rpd: int | None, minute_window_s: float = 60.0) -> None:
        self._limits: dict[QuotaKind, int | None] = {"minute": rpm, "day": rpd}
        self._windows: dict[tuple[str, QuotaKind], SlidingWindow] = {}
        self._minute_window_s = minute_window_s

    def _window(self, kind: QuotaKind, limit: int) -> SlidingWindow:
        if kind == "minute" and self._minute_window_s != 60.0:
            scaled = max(1, round(limit * self._minute_window_s / 60.0))
            return SlidingWindow(scaled, self._minute_window_s)
        return SlidingWindow(limit, _QUOTA_PERIOD_S[kind])

    def limit(self, kind: QuotaKind) -> int:
        return self._limits[kind] or NOMINAL_QUOTA_VALUE

    def admit(self, model: str, now: float) -> QuotaHit | None:
        """Count the request, unless a quota is used up; the day quota is reported first."""
        windows = []
        for kind in ("day", "minute"):
            limit = self._limits[kind]
            if limit is None:
                continue
            window = self._windows.get((model, kind)) or self._windows.setdefault(
                (model, kind), self._window(kind, limit)
            )
            wait = window.wait_s(now)
            if wait is not None:
                return QuotaHit(kind, limit, wait)
            windows.append(window)
        for window in windows:
            window.record(now)
        return None

    def reset(self) -> None:
        self._windows.clear()


class FaultPicker:
    """Seeded, so a run with the same --seed and request order sees the same faults."""

    def __init__(self, rate: float, seed: int) -> None:
        self.rate = rate
        self.seed = seed
        self._rng = random.Random(seed)

    def pick(self, wants_json: bool) -> Fault | None:
        """Malformed JSON only makes sense when JSON was asked for, so it is drawn only then."""
        if self.rate <= 0 or self._rng.random() >= self.rate:
            return None
        choices = FAULTS if wants_json else tuple(f for f in FAULTS if f != "malformed")
        return self._rng.choice(choices)

    def reset(self) -> None:
        self._rng = random.Random(self.seed)


@dataclass
class Stats:
    """What the server answered, for tests and demos to check against what the client saw."""

    requests: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    # generateContent requests per API dialect ("gemini", "vertex"): which routes a run used.
    by_route: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    events: deque[JsonObject] = field(default_factory=lambda: deque(maxlen=MAX_EVENTS))
    uploads: int = 0  # files finalized through the Files API (not counted in ``requests``)
    count_tokens: int = 0  # countTokens requests (not generate calls: not in ``requests``)
    # generateContent requests being answered now, and the most at once since the last reset:
    # how many calls a client really held open, seen from this side of the wire.
    in_flight: int = 0
    in_flight_peak: int = 0
    # generateContent requests begun (counted as they arrive, before any latency or answer):
    # the calls a client started by some moment, where ``requests`` counts those answered.
    started: int = 0

    def arrived(self) -> float:
        """Count a call begun; returns when (its event's "arrived")."""
        self.started += 1
        self.in_flight += 1
        self.in_flight_peak = max(self.in_flight_peak, self.in_flight)
        return time.time()

    def left(self) -> None:
        self.in_flight -= 1

    def record(
        self,
        status: int,
        model: str,
        rule: int | None,
        fault: Fault | None,
        sent: JsonObject | None = None,
        route: str = "gemini",
        arrived: float | None = None,
    ) -> None:
        self.requests += 1
        self.by_status[str(status)] += 1
        self.by_model[model] += 1
        self.by_route[route] += 1
        if fault is not None:
            self.faults[fault] += 1
        now = time.time()
        event = {
            "t": now,  # answered
            "arrived": now if arrived is None else arrived,  # begun, before any latency
            "status": status,
            "model": model,
            "rule": rule,
            "fault": fault,
            "route": route,
        }
        event.update(sent or {})
        self.events.append(event)

    def snapshot(self, fired: Mapping[int, int]) -> JsonObject:
        return {
            "requests": self.requests,
            "by_status": dict(self.by_status),
            "by_model": dict(self.by_model),
            "by_route": dict(self.by_route),
            "faults": {name: self.faults[name] for name in FAULTS},
            "script_rules_fired": {str(index): count for index, count in fired.items()},
            "events": list(self.events),
            "count_tokens": self.count_tokens,
            "in_flight": self.in_flight,
            "in_flight_peak": self.in_flight_peak,
            "started": self.started,
        }

    def reset(self) -> None:
        self.requests = 0
        self.by_status.clear()
        self.by_model.clear()
        self.by_route.clear()
        self.faults.clear()
        self.events.clear()
        self.uploads = 0
        self.count_tokens = 0
        self.started = 0
        self.in_flight_peak = self.in_flight  # calls still open count from now on
