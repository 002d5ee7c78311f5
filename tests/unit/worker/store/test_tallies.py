"""A process's tallies compared with Redis after a failover: the comparison waits for every
write of spend on its way, and holds new ones, so a write Redis took but not yet tallied can't
hide lost spend."""

from __future__ import annotations

import threading

from devtools.local import wait_for
from evalq.worker.store.tallies import Tallies


def test_quiet_waits_for_a_write_in_flight_and_holds_new_ones() -> None:
    tallies = Tallies()
    order: list[str] = []
    in_write, release = threading.Event(), threading.Event()

    def write(name: str, hold: bool) -> None:
        with tallies.writing():
            if hold:
                in_write.set()
                release.wait()
            tallies.add("job", {"judge_calls": 1})
            order.append(name)

    def compare() -> None:
        with tallies.quiet():
            order.append(f"quiet saw {tallies.of('job')[0].get('judge_calls', 0)}")
            held.start()  # a write begun while quiet
            wait_for(lambda: tallies._waiting_writes() == 1, 60, "the new write to wait")
            order.append("quiet ends")

    first = threading.Thread(target=write, args=("first", True))
    held = threading.Thread(target=write, args=("held", False))
    quiet = threading.Thread(target=compare)
    first.start()
    in_write.wait(60)
    quiet.start()
    wait_for(lambda: tallies._waiting_writes() == 0 and tallies._quiet, 60, "quiet to be asked")
    order.append("first released")
    release.set()
    for thread in (first, quiet, held):
        thread.join(60)
    assert order == ["first released", "first", "quiet saw 1", "quiet ends", "held"]
    assert tallies.of("job")[0]["judge_calls"] == 2
