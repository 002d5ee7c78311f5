"""Ctrl-C while waiting: the CLI's handler only sets a flag (evalq.client.cli.attach.ctrl_c_flag)
and the wait (evalq.client.watch.wait) ends at its next pause, after its reads and prints, so
no lock or import is ever left half-taken by a KeyboardInterrupt raised inside it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from evalq.client.cli.attach import ctrl_c_flag
from evalq.client.reads import JobReader
from evalq.client.watch import wait
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.support.scratch import plant_job


def test_a_set_flag_ends_the_wait_at_its_pause_after_the_read(
    store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 3)  # running, and stays so: no worker here
    stop = threading.Event()
    stop.set()
    seen: list[tuple[int, int]] = []
    with pytest.raises(KeyboardInterrupt):
        wait(
            JobReader(Settings(redis_url=scratch_url)),
            job_id,
            poll_s=30,  # the pause: a flag set before it ends it at once
            on_progress=lambda done, total: seen.append((done, total)),
            stop=stop,
        )
    assert seen == [(0, 3)]  # one read of the progress, shown, then the pause


def test_ctrl_c_while_the_flag_is_up_sets_it_and_raises_nothing() -> None:
    assert threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_flag() as stop:
        assert stop is not None and not stop.is_set()
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.wait(10)  # no KeyboardInterrupt came out of the kill
    assert signal.getsignal(signal.SIGINT) is before  # Python's own handler back


def test_off_the_main_thread_there_is_no_flag() -> None:
    got: list[threading.Event | None] = [threading.Event()]

    def enter() -> None:
        with ctrl_c_flag() as stop:
            got[0] = stop

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    assert got == [None]
