"""What this process has spent per job, kept in its own memory, where a Redis failover can't
take it back: compared after a failover with this process's share in Redis, what it holds
beyond is spend the failover lost."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

JOBS = 1000  # jobs whose tallies a process keeps, the most recently written first
CALLS = ("judge_calls", "candidate_calls")  # the counters that are calls


class Tallies:
    """Every write of spend (record_unit.lua, add_counters.lua) also adds its amounts to the
    job's `spent_by` hash under this process's tag and, once Redis acknowledged it, here. A
    write whose connection broke before the reply may or may not have landed: its calls are
    counted apart as unconfirmed. A comparison is exact only while no write of spend is on its
    way (one Redis took but not yet tallied would hide as much lost spend): every write holds
    `writing()`, and the comparison runs inside `quiet()`."""

    def __init__(self, jobs: int = JOBS) -> None:
        self._jobs = jobs
        self._spent: OrderedDict[str, Counter[str]] = OrderedDict()
        self._unconfirmed: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._flow = threading.Condition()
        self._writes_in_flight = 0
        self._writes_waiting = 0
        self._quiet = False

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around one write of spend and its tally (never nested): waits while `quiet()` runs."""
        with self._flow:
            self._writes_waiting += 1
            while self._quiet:
                self._flow.wait()
            self._writes_waiting -= 1
            self._writes_in_flight += 1
        try:
            yield
        finally:
            with self._flow:
                self._writes_in_flight -= 1
                self._flow.notify_all()

    def _waiting_writes(self) -> int:
        with self._flow:
            return self._writes_waiting

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """No write of spend in flight while inside: each one begun has been tallied (or found
        unconfirmed), and new ones wait."""
        with self._flow:
            while self._quiet:
                self._flow.wait()
            self._quiet = True
            while self._writes_in_flight:
                self._flow.wait()
        try:
            yield
        finally:
            with self._flow:
                self._quiet = False
                self._flow.notify_all()

    def add(self, job_id: str, amounts: Mapping[str, int]) -> None:
        """Spend Redis acknowledged."""
        with self._lock:
            self._job(job_id).update({k: v for k, v in amounts.items() if v})

    def unconfirmed(self, job_id: str, amounts: Mapping[str, int]) -> None:
        """Spend whose write may not have landed (its connection broke): its calls."""
        if calls := sum(int(amounts.get(name, 0)) for name in CALLS):
            with self._lock:
                self._job(job_id)
                self._unconfirmed[job_id] += calls

    def jobs(self) -> list[str]:
        with self._lock:
            return list(self._spent)

    def of(self, job_id: str) -> tuple[dict[str, int], int]:
        """The job's acknowledged spend, and its unconfirmed calls not yet reported."""
        with self._lock:
            return dict(self._spent.get(job_id, {})), self._unconfirmed[job_id]

    def reported(self, job_id: str, calls: int) -> None:
        """`calls` unconfirmed calls are now on the job: they are not reported again."""
        with self._lock:
            self._unconfirmed[job_id] = max(0, self._unconfirmed[job_id] - calls)

    def _job(self, job_id: str) -> Counter[str]:
        spent = self._spent.get(job_id)
        if spent is None:
            spent = self._spent[job_id] = Counter()
            while len(self._spent) > self._jobs:
                gone, _ = self._spent.popitem(last=False)
                self._unconfirmed.pop(gone, None)
        self._spent.move_to_end(job_id)
        return spent
