"""What one unit's judge calls would write to Redis, held until the unit ends and written with
its verdict in one round trip (Store.record_unit) instead of one trip each."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evalq.core.pricing import Usage
from evalq.core.versions import join_versions


class NotCached(Exception):
    """A cache-only judge had no reply for a request (prepare_row resolving units inline): the
    unit goes to a run_unit task. Not a JudgeError, so no metric turns it into a verdict."""


@dataclass
class UnitWrites:
    """One unit's pending writes. Two kinds of counters, because a unit can run twice (a
    redelivery, or prepare_row resolving it twice) and only one verdict is kept: `spent`, what
    its calls really used, is added whatever happens (with this verdict, another run's, or none:
    a countdown retry, a pause); `counted` (cache hits, units resolved inline) only when this
    run's verdict is the one stored. Cache entries, limiter corrections and `reservations`
    settle with `spent`: they describe calls that were made. A worker killed between its call
    and the write loses that call's counters (the redelivered unit asks, and counts, again)."""

    spent: Counter[str] = field(default_factory=Counter)
    usage: list[Usage] = field(default_factory=list)
    counted: Counter[str] = field(default_factory=Counter)
    replies: dict[str, tuple[str, int]] = field(default_factory=dict)  # digest -> (JSON, ttl_s)
    corrections: list[tuple[str, float]] = field(default_factory=list)  # limiter key -> ms
    touch_at: float | None = None  # the row's next sign of life, when not now (a countdown)
    reservations: list[str] = field(default_factory=list)  # settled with `spent`
    # The replies' modelVersion (cached ones too), stamped on the verdict when it is recorded
    # (evalq.worker.lifecycle.units), so no metric has to carry them.
    versions: set[str] = field(default_factory=set)

    def spend(self, counters: dict[str, int], usage: Usage | None) -> None:
        self.spent.update({name: amount for name, amount in counters.items() if amount})
        if usage is not None:
            self.usage.append(usage)

    def version(self) -> str | None:
        """What the unit's verdict records: its replies' versions, sorted, comma-joined when
        an alias answered as several (a re-ask landing on a newer version); None: no reply."""
        return join_versions(self.versions)

    def count(self, **amounts: int) -> None:
        self.counted.update({name: amount for name, amount in amounts.items() if amount})

    def clear(self) -> None:
        """Forget what has been written, so nothing is written twice (a verdict for a crash
        after a countdown's write, say)."""
        self.spent.clear()
        self.usage.clear()
        self.counted.clear()
        self.replies.clear()
        self.corrections.clear()
        self.reservations.clear()
        self.versions.clear()

    def cost_nanos(self) -> int:
        return sum(usage.cost_nanos for usage in self.usage)
