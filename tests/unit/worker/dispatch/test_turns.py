"""Turns between jobs (evalq.worker.dispatch.turns, take_turns.lua) against a real Redis: the
window, who gets a freed turn, priorities, a job's own cap, a row's turn ending with its count, idle
jobs, and the window sized from the workers alive."""

from __future__ import annotations

import time

from evalq.core.verdicts import failed_row
from evalq.worker.dispatch.turns import hand_out, register
from evalq.worker.jobs.watchdog import Watchdog
from evalq.worker.settings import Settings
from evalq.worker.store import RowRef, Store, keys
from tests.support.scratch import plant_job


def take(store: Store, window: int) -> list[tuple[str, str]]:
    return store.take_turns(window=window, least=1).rows


def fail_row(store: Store, job: str, line: str) -> int:
    row = store.row(RowRef(job, line))
    return store.finish_row(job, failed_row(row.id, row.line, row.prompt, "input_error", "x"))


def job_of(store: Store, rows: int, **turns: object) -> str:
    job = plant_job(store, rows, waiting=True)
    store.set_turns(job, **turns)  # type: ignore[arg-type]
    return job


def test_a_window_of_turns_goes_out_in_line_order_with_a_sign_of_life(store: Store) -> None:
    job = job_of(store, 5)
    before = time.time()
    assert take(store, 3) == [(job, "1"), (job, "2"), (job, "3")]
    assert take(store, 3) == []  # the window is full
    assert store.holding_turns(job) == {"1", "2", "3"}
    assert store.turn_state(job).waiting == 2
    assert set(store.quiet_since(job, time.time() + 1)) == {"1", "2", "3"}
    assert not store.quiet_since(job, before - 1)


def test_a_freed_turn_goes_to_the_job_holding_fewest(store: Store) -> None:
    big = job_of(store, 50)
    assert len(take(store, 4)) == 4
    small = job_of(store, 3)  # submitted behind the big job, which holds the whole window
    assert take(store, 4) == []
    assert fail_row(store, big, "1") == 1
    assert take(store, 4) == [(small, "1")]
    fail_row(store, big, "2")
    assert take(store, 4) == [(small, "2")]  # small holds 1, big 2: small again
    fail_row(store, big, "3")
    fail_row(store, small, "1")
    assert take(store, 4) == [(big, "5"), (small, "3")]  # 1 v 1: the older job first


def test_two_jobs_share_the_window_evenly(store: Store) -> None:
    first, second = job_of(store, 20), job_of(store, 20)
    given = take(store, 6)
    assert [job for job, _ in given].count(first) == 3
    assert [job for job, _ in given].count(second) == 3


def test_high_goes_ahead_and_low_only_takes_what_is_left(store: Store) -> None:
    low = job_of(store, 10, priority="low")
    normal = job_of(store, 10)
    high = job_of(store, 2, priority="high")
    assert take(store, 3) == [(high, "1"), (high, "2"), (normal, "1")]
    store.set_turns(normal, max_in_flight=2)  # normal can take one more, then low gets a turn
    assert take(store, 5) == [(normal, "2"), (low, "1")]
    assert store.turn_state(high).priority == "high"


def test_a_jobs_own_cap_holds_and_lifting_it_frees_turns(store: Store) -> None:
    job = job_of(store, 10, max_in_flight=2)
    assert len(take(store, 8)) == 2
    assert take(store, 8) == []
    assert store.turn_state(job).max_in_flight == 2
    store.set_turns(job, max_in_flight=0)
    assert len(take(store, 8)) == 6
    assert store.turn_state(job).max_in_flight is None


def test_a_turn_ends_once_with_its_row_even_when_counted_twice(store: Store) -> None:
    job = job_of(store, 3)
    take(store, 2)
    assert fail_row(store, job, "1") == 1
    assert fail_row(store, job, "1") == -1  # a duplicate: counted once, its turn ended once
    assert store.holding_turns(job) == {"2"}
    assert take(store, 2) == [(job, "3")]


def test_idle_jobs_hold_no_turns_and_resume_puts_their_rows_back(store: Store) -> None:
    paused = job_of(store, 4)
    take(store, 2)
    other = job_of(store, 4)
    assert store.pause(paused, "test")
    assert take(store, 2) == [(other, "1"), (other, "2")]  # the paused job's turns don't count
    assert not store.r.zscore(keys.TURNS, paused)  # it left the turns
    store.transition(paused, "running")
    store.wait_for_turns(paused, store.not_done(paused), 0.0)
    assert store.turn_state(paused).waiting == 4 and store.turn_state(paused).holding == 0
    fail_row(store, other, "1")
    assert take(store, 2) == [(paused, "1")]


def test_the_window_adds_up_the_shares_of_the_workers_alive(store: Store) -> None:
    job = job_of(store, 100)
    auto = store.take_turns(window=0, least=2)
    assert (auto.window, len(auto.rows), auto.waiting) == (2, 2, 98)  # no worker: the least
    register(store, "w1", 12, lapse_s=60)
    register(store, "w2", 6, lapse_s=60)
    wider = store.take_turns(window=0, least=2)
    assert (wider.window, wider.held, len(wider.rows)) == (18, 2, 16)
    store.set_share("w1", 30)  # w1's pace grew its share
    assert store.take_turns(window=0, least=2).window == 36
    store.r.zadd(keys.WORKERS, {"w2": time.time() - 1})  # w2 stopped beating
    assert store.take_turns(window=0, least=2).window == 30
    assert store.r.hget(keys.WORKER_SHARES, "w2") is not None  # its share is kept, not counted
    assert store.turn_state(job).holding == 36  # what it held before stays held


def test_waiting_counts_only_rows_a_free_turn_could_go_to(store: Store) -> None:
    """What a worker's pace calls demand: a job at its own cap holds nothing back."""
    capped = job_of(store, 10, max_in_flight=2)
    assert store.take_turns(window=5, least=1).waiting == 0
    free = job_of(store, 4)
    granted = store.take_turns(window=6, least=1)
    assert (len(granted.rows), granted.waiting) == (4, 0)
    assert store.turn_state(capped).waiting == 8
    job_of(store, 3)
    assert store.take_turns(window=6, least=1).waiting == 3
    assert store.turn_state(free).holding == 4


def test_hand_out_sends_each_row_given_a_turn(store: Store) -> None:
    job = job_of(store, 3)
    sent: list[tuple[str, str]] = []
    settings = Settings(turn_window=2)
    granted = hand_out(store, settings, lambda j, r: sent.append((j, r)))
    assert sent == granted.rows == [(job, "1"), (job, "2")]


def test_the_watchdog_leaves_waiting_rows_alone_and_hands_turns_out(store: Store) -> None:
    job = job_of(store, 4)
    take(store, 1)  # row 1 was sent and its message lost; rows 2-4 wait for turns
    store.touch(job, "1", "2", "3", "4", at=time.time() - 100)  # a resume touched them all
    sent: list[tuple[str, str]] = []
    dog = Watchdog(
        store,
        lambda j, r: sent.append((j, r)),
        interval_s=1,
        stall_timeout_s=60,
        name="t",
        turns=Settings(turn_window=2),
    )
    assert dog.sweep(time.time()) == {job: 1}
    assert sent == [(job, "1"), (job, "2")]  # row 1 driven again; row 2 given the free turn


def test_workers_alive_are_those_not_lapsed_and_a_clean_stop_leaves_at_once(store: Store) -> None:
    """What the waiting commands read to say that no worker is alive
    (evalq.client.workers_alive)."""
    from evalq.worker.dispatch.heartbeat import Heartbeat

    assert store.live_workers() == 0
    register(store, "w1", 8, lapse_s=60)
    store.r.zadd(keys.WORKERS, {"w2": time.time() - 1})  # lapsed: stopped beating
    assert store.live_workers() == 1
    beat = Heartbeat(store, interval_s=30, max_hold_s=60, share=("w3", lambda: 4))
    beat.start()  # registers at once
    assert store.live_workers() == 2
    beat.unregister()  # worker_shutdown: out at once, not three beats later
    assert store.live_workers() == 1 and store.r.zscore(keys.WORKERS, "w3") is None
