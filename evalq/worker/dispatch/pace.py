"""A worker's share of the turns' window, sized from the wait of a task queued now and how busy
its CPU is, not from its slots, which overstate what a worker can take on;
docs/concepts/turns.md says how the window is sized."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery.signals import task_prerun
from celery.worker import state

from evalq.worker.settings import Settings
from evalq.worker.store import Store

log = logging.getLogger(__name__)

TICK_S = 0.2
GROW = 1.1  # the share's step up at first (until the first cut; CREEP after)
SHRINK = 0.85  # its step down, over the target or too busy
CUT_TICKS = 5  # ticks between two steps down: what a cut frees shows only as rows end
START_ROWS = 4  # a new worker's share before it has measured anything
HAND_OUT_S = 1.0  # no hand-out of turns in this process for this long: the pace hands out
CREEP = 1.05  # the step up after the first cut (at least a row)
SMOOTHING = 0.5  # weight of the newest sample in the averages of busy and waits
BUSY_HIGH = 0.97  # busier than this (of one core): the worker's CPU is what binds
BUSY_LOW = 0.92  # growing only under this
SENT_HEADER = "evalq_sent_at"  # a task message's publish time, epoch s


@dataclass
class Pace:
    """The share arithmetic, apart from any clock or Redis (unit-tested as it is): the way TCP
    finds a link's width, fast to the first sign of a queue, then gently around it, and small
    again after idle. Faster steps overshot on 2 cores (growing by a quarter a tick reached 140
    rows before the CPU's answer came back, and a small job submitted then waited 2.5x its time
    alone)."""

    target_s: float
    most: int
    least: int = 1
    share: float = START_ROWS
    starting: bool = True  # grows by GROW until the first cut, then by CREEP
    since_cut: int = CUT_TICKS

    def __post_init__(self) -> None:
        self.share = float(min(self.most, max(self.least, self.share)))

    @property
    def rows(self) -> int:
        return max(self.least, min(self.most, math.floor(self.share)))

    def step(self, wait_s: float, demand: bool, *, busy: float = 0.0, fresh: bool = True) -> int:
        """The share after one tick that measured `wait_s` for a task queued now and a CPU
        `busy` (0 to 1); `fresh` False when no task started this tick (the wait is an old
        one): it may shrink on that, never grow."""
        self.since_cut += 1
        if not demand:  # nothing waits for a turn: start small again
            self.share, self.starting = float(max(self.least, min(self.share, START_ROWS))), True
            return self.rows
        if wait_s > self.target_s or busy > BUSY_HIGH:
            if self.since_cut >= CUT_TICKS:
                self.share = max(float(self.least), self.share * SHRINK)
                self.since_cut, self.starting = 0, False
        elif fresh and wait_s < self.target_s / 2 and busy < BUSY_LOW:
            grown = self.share * (GROW if self.starting else CREEP)
            self.share = min(float(self.most), max(grown, self.share + 1))
        return self.rows


class Demand:
    """Whether rows wait for a turn, as this process's last hand-out of turns
    (evalq.worker.dispatch.turns) left them, and when that was. Nothing but a hand-out takes a
    waiting row, so the reading holds until the next one."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen = -math.inf
        self._waiting = 0

    def saw(self, waiting: int) -> None:
        self._seen, self._waiting = self._clock(), waiting

    def waiting(self) -> bool:
        return self._waiting > 0

    def quiet_s(self) -> float:
        """Seconds since this process last handed turns out."""
        return self._clock() - self._seen


demand = Demand()


class Waits:
    """How long the tasks started in this process waited since they were published, collected
    from Celery's prerun signal (in each task's own thread) and taken once a tick. Hosts'
    clocks are taken to agree (NTP), as the archive's times assume; a negative wait counts as
    none."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._total, self._count = 0.0, 0

    def started(self, task: Any) -> None:
        request = getattr(task, "request", None)
        sent = getattr(request, SENT_HEADER, None)
        if sent is None or getattr(request, "eta", None) or getattr(request, "retries", 0):
            return  # unstamped, or a retry whose planned delay is not a wait
        try:
            waited = max(0.0, self._clock() - float(sent))
        except (TypeError, ValueError):
            return
        with self._lock:
            self._total += waited
            self._count += 1

    def take(self) -> float | None:
        """The mean wait of the tasks started since the last take; None if none started."""
        with self._lock:
            total, count = self._total, self._count
            self._total, self._count = 0.0, 0
        return total / count if count else None


class Meter:
    """Runs the ticks in a thread of the worker (a greenlet under gevent, whose own lag is the
    loop's): measures, steps the Pace, and publishes the share when it changes."""

    def __init__(
        self,
        store: Store,
        worker: str,
        pace: Pace,
        waits: Waits,
        hand_out: Callable[[], object] | None = None,
        room: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store, self.worker, self.pace, self.waits = store, worker, pace, waits
        self._hand_out = hand_out  # turns to waiting rows (evalq.worker.dispatch.turns.hand_out)
        self._room = room  # a slot free and no task waiting here for one
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.busy = 0.0  # both averaged over ticks (SMOOTHING)
        self.wait_s = 0.0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="evalq-pace", daemon=True)
        self._thread.start()

    def unregister(self, join_s: float = 1.0) -> None:
        """Stop ticking (at shutdown: the heartbeat then takes the share out)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(join_s)

    def _loop(self) -> None:
        published = self.pace.rows
        before, used_before = time.monotonic(), cpu_used_s()
        while not self._stop.wait(TICK_S):
            now, used = time.monotonic(), cpu_used_s()
            busy = (used - used_before) / max(now - before, 1e-3)
            before, used_before = now, used
            self.tick(busy, self.waits.take())
            if self._hand_out is not None and demand.quiet_s() > HAND_OUT_S:
                # No row has ended here lately (a slow judge): what the share grew by, and
                # whether rows still wait, come from a hand-out of the pace's own.
                try:
                    self._hand_out()
                except Exception:  # Redis away: the watchdog's sweeps hand out too
                    log.debug("pace: handing turns out failed", exc_info=True)
            if self.pace.rows != published:
                log.debug(
                    "pace: share %d rows (wait %.3f s, busy %.2f)",
                    self.pace.rows,
                    self.wait_s,
                    self.busy,
                )
                try:
                    self.store.set_share(self.worker, self.pace.rows)
                    published = self.pace.rows
                except Exception:  # Redis away for a moment: the next tick publishes it
                    log.debug("pace: publishing the share failed", exc_info=True)

    def tick(self, busy: float, queued_s: float | None) -> int:
        """One measurement: how busy the CPU was this tick, and the mean wait of the tasks that
        started in it (None: none started)."""
        self.busy += SMOOTHING * (busy - self.busy)
        if queued_s is None and self._room():
            # No task started, a slot is free and nothing waits here for one: nothing was
            # sent to start (what a wider share changes), and a task sent now would wait none.
            queued_s = 0.0
        if queued_s is not None:
            self.wait_s += SMOOTHING * (queued_s - self.wait_s)
        fresh = queued_s is not None  # else the wait is an old one: it may shrink, not grow
        return self.pace.step(self.wait_s, demand.waiting(), busy=self.busy, fresh=fresh)


_SCHEDSTAT = Path("/proc/self/schedstat")


def cpu_used_s() -> float:
    """This process's CPU time, and the time its main thread waited to run (Linux; elsewhere
    the CPU time alone): rising as fast as the clock, the worker wants more CPU than it gets. A
    worker bound by its CPU queues its work where no wait for a slot shows: between the steps
    of every call under way, so a new job's call takes as long as the whole backlog."""
    used = time.process_time()
    with contextlib.suppress(OSError, IndexError, ValueError):
        used += int(_SCHEDSTAT.read_text().split()[1]) / 1e9
    return used


def stamp_sent(headers: dict[str, Any] | None = None, **_: Any) -> None:
    """Celery's before_task_publish (connected by evalq.worker.celery_app.app for every app, the
    producer's too): every task message carries when it was published."""
    if headers is not None:
        headers[SENT_HEADER] = time.time()


def start_pace(
    store: Store, settings: Settings, worker: str, slots: int, hand_out: Callable[[], object]
) -> Meter:
    """This worker's pace, ticking from now on; its share is registered by the heartbeat.
    `hand_out`: turns to waiting rows, when no row ending here has handed them out lately."""
    waits = Waits()

    def started(task: Any = None, **_: Any) -> None:
        waits.started(task)

    task_prerun.connect(started, weak=False)
    most = max(1, math.ceil(settings.turns_per_slot * slots))
    pace = Pace(target_s=settings.turn_wait_s, most=most)

    def room() -> bool:
        active, reserved = len(state.active_requests), len(state.reserved_requests)
        return active < slots and reserved <= active

    meter = Meter(store, worker, pace, waits, hand_out, room)
    meter.start()
    return meter
