"""Verdicts: each unit's answer (first write wins), and a unit's whole outcome written in one
round trip (record_unit.lua): verdict, sign of life, counters and spend, call-cache entries,
limiter corrections and the settling of its cost reservations."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis

from evalq.core.models import Verdict
from evalq.worker.store import keys
from evalq.worker.store.base import REDIS_DOWN, RowRef, StoreBase, job_gone
from evalq.worker.store.counters import usage_counters
from evalq.worker.store.unit_writes import UnitWrites


@dataclass(frozen=True)
class Recorded:
    """What recording a unit's outcome found: whether its verdict is the one stored (False for
    a duplicate, or when there was none to record), and the job's spend and cap after it."""

    written: bool
    spent_nanos: int
    cap_nanos: int | None


class VerdictsStore(StoreBase):
    def verdict(self, row: RowRef, index: int) -> Verdict | None:
        raw = self.r.hget(keys.verdicts(row.job_id, row.line), str(index))
        return Verdict.model_validate_json(cast(str, raw)) if raw else None

    def answered(self, row: RowRef) -> frozenset[int]:
        """The indexes of the row's units that have a verdict."""
        found = cast(list[str], self.r.hkeys(keys.verdicts(row.job_id, row.line)))
        return frozenset(int(k) for k in found)

    def verdicts(self, row: RowRef) -> dict[int, Verdict]:
        raw = cast(dict[str, str], self.r.hgetall(keys.verdicts(row.job_id, row.line)))
        return {int(k): Verdict.model_validate_json(v) for k, v in raw.items()}

    def record_unit(self, row: RowRef, verdict: Verdict | None, writes: UnitWrites) -> Recorded:
        """A unit's outcome in one round trip (one script): its verdict (first write wins, as
        HSETNX), the row's sign of life, its counters, its call-cache entries and its
        limiter corrections. Which counters count when is evalq.worker.store.unit_writes's rule:
        `spent` always, `counted` only with this run's new verdict. JobNotFound when the job is gone
        (nothing is written then)."""
        return self.record_units(row, [(verdict, writes)])[0]

    def record_units(
        self, row: RowRef, outcomes: Sequence[tuple[Verdict | None, UnitWrites]]
    ) -> list[Recorded]:
        """Several units' outcomes, each as record_unit writes it (each script is atomic on its
        own), sent together in one round trip: prepare_row's units answered from the cache."""
        if not outcomes:
            return []
        job_id = row.job_id
        script = self._script("record_unit")
        calls = [self._record_args(row, verdict, writes) for verdict, writes in outcomes]
        with self.tallies.writing():
            # EVALSHA by hand: redis-py's Script in a pipeline asks SCRIPT EXISTS each time.
            try:
                for attempt in range(2):
                    pipe = self.r.pipeline(transaction=False)
                    for script_keys, args in calls:
                        pipe.evalsha(script.sha, len(script_keys), *script_keys, *args)
                    replies = pipe.execute(raise_on_error=False)
                    if attempt == 0 and any(
                        isinstance(r, redis.exceptions.NoScriptError) for r in replies
                    ):
                        self.r.script_load(script.script)  # Redis restarted: no scripts cached
                        continue  # nothing ran: each script failed before its first write
                    break
            except REDIS_DOWN:  # written or not, nobody can say: its calls are unconfirmed
                for _, writes in outcomes:
                    self.tallies.unconfirmed(job_id, writes.spent)
                raise
            for reply, (_, writes) in zip(replies, outcomes, strict=True):
                if isinstance(reply, Exception):
                    raise reply
                if int(reply[0]) >= 0:
                    self.tallies.add(job_id, self._spent(writes))
        return [self._recorded(job_id, reply) for reply in replies]

    @staticmethod
    def _spent(writes: UnitWrites) -> Counter[str]:
        """What a unit's writes add to the job whatever happens (evalq.worker.store.unit_writes)."""
        spent: Counter[str] = Counter(writes.spent)
        for usage in writes.usage:
            spent.update(usage_counters(usage))
        return spent

    def _record_args(
        self, row: RowRef, verdict: Verdict | None, writes: UnitWrites
    ) -> tuple[list[str], list[Any]]:
        job_id = row.job_id
        spent = self._spent(writes)
        spent["spent_nanos"] += 0  # always returned, so always present
        digests = list(writes.replies)
        limiter_keys = [key for key, _ in writes.corrections]
        args: list[Any] = [
            "" if verdict is None else verdict.index,
            "" if verdict is None else verdict.model_dump_json(),
            self.job_ttl(job_id),
            row.line,
            time.time() if writes.touch_at is None else writes.touch_at,
            len(digests),
            len(limiter_keys),
            sum(1 for amount in spent.values() if amount),
            len(writes.reservations),
            self.tally_tag,
        ]
        for digest in digests:
            args += list(writes.replies[digest])
        args += [repr(float(ms)) for _, ms in writes.corrections]
        for name, amount in sorted(spent.items()):
            if amount:
                args += [name, amount]
        args += writes.reservations
        for name, amount in sorted(writes.counted.items()):
            if amount:
                args += [name, amount]
        script_keys = [
            keys.verdicts(job_id, row.line),
            keys.job(job_id),
            keys.activity(job_id),
            *(keys.call(digest) for digest in digests),
            *limiter_keys,
            *([keys.reservations(job_id)] if writes.reservations else []),
            keys.spent_by(job_id),
        ]
        return script_keys, args

    @staticmethod
    def _recorded(job_id: str, reply: Any) -> Recorded:
        written, spend, cap = reply
        if int(written) < 0:
            raise job_gone(job_id)
        return Recorded(bool(int(written)), int(spend), int(cap) if cap else None)
