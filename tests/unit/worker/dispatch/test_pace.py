"""A worker's share of the turns' window (evalq.worker.dispatch.pace): the arithmetic of a step, the
waits it steers by (stamped at publish, read at start), demand, and a tick."""

from __future__ import annotations

import json
import time
import uuid
from types import SimpleNamespace

import pytest

from devtools.local import wait_for
from evalq.worker.celery_app.app import create_app
from evalq.worker.dispatch import pace
from evalq.worker.dispatch.pace import SENT_HEADER, Demand, Meter, Pace, Waits, stamp_sent
from evalq.worker.dispatch.queues import PREPARE_ROW
from evalq.worker.settings import Settings
from evalq.worker.store import Store


def test_a_new_share_starts_small_and_never_above_the_most() -> None:
    assert Pace(target_s=0.2, most=300).rows == pace.START_ROWS
    assert Pace(target_s=0.2, most=2).rows == 2


def test_the_share_grows_only_well_under_the_target() -> None:
    p = Pace(target_s=0.2, most=300)
    assert p.step(0.05, demand=True) == 5  # x1.1 of 4 (at least a row)
    assert p.step(0.15, demand=True) == 5  # between half the target and the target: it holds
    assert p.step(0.05, demand=True) == 6
    grown = [p.step(0.0, demand=True) for _ in range(80)]
    assert grown[-1] == 300 and grown == sorted(grown)  # up to the most, never past it


def test_with_no_row_waiting_the_share_starts_small_again() -> None:
    """A large job submitted to idle workers ramps up rather than filling the broker with the
    share the job before it ended with."""
    p = Pace(target_s=0.2, most=300, share=100, starting=False)
    assert p.step(0.0, demand=False) == pace.START_ROWS
    assert p.starting and p.step(0.0, demand=True) == 5  # at least a row


def test_the_share_shrinks_over_the_target_then_waits_for_the_cut_to_show() -> None:
    p = Pace(target_s=0.2, most=300, share=100)
    assert p.step(0.5, demand=True) == 85
    held = [p.step(0.5, demand=True) for _ in range(pace.CUT_TICKS - 1)]
    assert held == [85] * (pace.CUT_TICKS - 1)  # what the cut freed has not shown yet
    assert p.step(0.5, demand=True) == 72
    for _ in range(200):
        p.step(10.0, demand=True)
    assert p.rows == 1


def test_a_busy_cpu_shrinks_the_share_and_a_nearly_busy_one_holds_it() -> None:
    p = Pace(target_s=0.2, most=300, share=100)
    assert p.step(0.0, demand=True, busy=pace.BUSY_HIGH + 0.01) == 85
    for _ in range(pace.CUT_TICKS):
        p.step(0.0, demand=True, busy=(pace.BUSY_LOW + pace.BUSY_HIGH) / 2)
    assert p.rows == 85


def test_after_the_first_cut_the_share_creeps_up() -> None:
    p = Pace(target_s=0.2, most=300, share=40)
    assert p.step(0.0, demand=True) == 44  # starting: a tenth
    assert p.step(1.0, demand=True) == 37  # the first cut
    assert p.step(0.0, demand=True) == 39  # then a twentieth
    assert Pace(target_s=0.2, most=300, share=4, starting=False).step(0.0, demand=True) == 5


def test_without_a_task_started_the_share_may_shrink_but_not_grow() -> None:
    p = Pace(target_s=0.2, most=300, share=10)
    assert p.step(0.0, demand=True, fresh=False) == 10
    assert p.step(0.5, demand=True, fresh=False) == 8


class Task:
    def __init__(self, **fields: object) -> None:
        self.request = SimpleNamespace(**fields)


def test_waits_are_the_mean_time_since_publish_of_tasks_started_first_time() -> None:
    headers: dict[str, object] = {}
    stamp_sent(headers=headers)
    assert isinstance(headers[SENT_HEADER], float)
    waits = Waits(clock=lambda: 100.0)
    waits.started(Task(**{SENT_HEADER: 99.0, "retries": 0, "eta": None}))
    waits.started(Task(**{SENT_HEADER: 99.5, "retries": 0, "eta": None}))
    waits.started(Task(**{SENT_HEADER: 101.0}))  # a clock ahead: no wait, not a negative one
    waits.started(Task(**{SENT_HEADER: 50.0, "retries": 1}))  # a retry's delay is not a wait
    waits.started(Task(**{SENT_HEADER: 50.0, "eta": "2026-11-27T12:00:00"}))
    waits.started(Task(retries=0))  # published by something that did not stamp it
    assert waits.take() == pytest.approx(1.5 / 3)
    assert waits.take() is None  # taken: nothing started since


def test_demand_is_rows_left_waiting_by_the_last_hand_out() -> None:
    now = [100.0]
    d = Demand(clock=lambda: now[0])
    assert not d.waiting() and d.quiet_s() == float("inf")
    d.saw(7)
    assert d.waiting() and d.quiet_s() == 0
    now[0] += 30  # nothing but a hand-out takes a waiting row: they still wait
    assert d.waiting() and d.quiet_s() == 30
    d.saw(0)  # the last hand-out gave every waiting row a turn: the window holds nothing back
    assert not d.waiting()


def test_a_tick_averages_busy_and_waits_and_steps_the_share(store: Store) -> None:
    meter = Meter(store, "w1", Pace(target_s=0.2, most=50, share=20), Waits())
    pace.demand.saw(3)  # rows wait for turns
    assert meter.tick(busy=0.2, queued_s=1.6) == 17  # over the target: shrinks
    weight = pace.SMOOTHING
    assert (meter.busy, meter.wait_s) == pytest.approx((0.2 * weight, 1.6 * weight))
    meter.busy, meter.wait_s = 0.0, 0.0
    assert meter.tick(busy=0.1, queued_s=0.01) == 18  # well under, rows waiting: grows
    assert meter.tick(busy=0.1, queued_s=None) == 18  # no task started: holds


def test_every_task_message_carries_its_publish_time(store: Store, scratch_url: str) -> None:
    """What the waits are read from: a message as it lies in the broker, from any sender."""
    app = create_app(Settings(redis_url=scratch_url, api_key=None))
    queue = f"evalq.stamp-test-{uuid.uuid4().hex}"
    before = time.time()
    app.send_task(PREPARE_ROW, ("job", "1"), queue=queue)
    message = json.loads(store.r.lpop(queue))  # type: ignore[arg-type]
    assert before <= float(message["headers"][SENT_HEADER]) <= time.time()


def test_with_no_row_ending_here_the_pace_hands_turns_out_itself(store: Store) -> None:
    """A slow judge: no row ends to hand out what the share grew by, so the pace does, once
    HAND_OUT_S has passed without a hand-out in this process."""
    handed: list[float] = []

    def hand_out() -> None:
        handed.append(time.monotonic())
        pace.demand.saw(2)

    meter = Meter(store, "w1", Pace(target_s=0.2, most=50), Waits(), hand_out=hand_out)
    pace.demand.saw(2)  # a row ended a moment ago: its task handed out turns
    meter.start()
    try:
        wait_for(lambda: bool(handed), 10, "the pace's own hand-out")
        assert pace.demand.quiet_s() < pace.HAND_OUT_S + 1  # its own hand-out counts
    finally:
        meter.unregister()
