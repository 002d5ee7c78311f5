"""One gevent worker process holds hundreds of judge calls open at once.

Seen from the fake server's side of the wire (its /stats in_flight_peak), not from the worker's
own account. The fake holds every call (a latency far longer than sending them takes), so calls
pile up until the pool is full; once 500 are open (or the job ended) the test sets the latency
to 0, which answers the held calls at once. Nothing here depends on how long anything takes,
only on how many requests were open together."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.local import wait_for
from tests.support.shapes import shapes_dataset
from tests.support.stack import stack

pytestmark = pytest.mark.integration

IN_FLIGHT = 500
ROWS = 190  # three questions each: 570 calls, all of which the pool can hold at once
# Longer than the test waits for the calls to pile up (240 s), so no answer comes back before
# the test ends the hold, however slowly a loaded machine builds and sends 500 requests. The
# judge's timeout and the watchdog's stall timeout are raised past it: a held call is neither
# abandoned by the worker nor re-driven.
LATENCY_MS = 300_000
HOLD_S = str(LATENCY_MS // 1000 + 100)


def vm_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def test_one_gevent_worker_holds_500_judge_calls_in_flight(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", ROWS, own_questions=True)
    with stack(
        tmp_path,
        "--latency-ms",
        str(LATENCY_MS),
        concurrency=ROWS * 4 + 50,  # every row task and every call at once
        EVALQ_WORKER_POOL="gevent",
        EVALQ_JUDGE_TIMEOUT_S=HOLD_S,
        EVALQ_STALL_TIMEOUT_S=HOLD_S,
    ) as s:
        (proc,) = s.pool.procs
        client = s.client()
        job = client.submit("gecko-image", data, use_cache=False).job_id
        rss_kib: int | None = None  # the worker's (`evalq worker` execs into Celery, same pid)

        def done_or_full() -> bool:
            nonlocal rss_kib
            if rss_kib is None and s.stats()["in_flight"] >= IN_FLIGHT:
                rss_kib = vm_rss_kib(proc.pid)
            return rss_kib is not None or client.summary(job).status != "running"

        wait_for(done_or_full, 240, f"{IN_FLIGHT} calls open at once, or the job's end")
        s.set_latency(0)  # seen: the calls held open are answered now
        summary = client.wait(job, timeout_s=240)
        stats = s.stats()
    rss = "not reached" if rss_kib is None else f"{rss_kib / 1024:.0f} MiB"
    print(
        f"\nin flight: peak {stats['in_flight_peak']} of {stats['requests']} requests; "
        f"worker RSS at {IN_FLIGHT} in flight: {rss}"
    )
    assert stats["in_flight_peak"] >= IN_FLIGHT
    assert summary.rows_done == ROWS
    assert summary.rows_failed == 0
    assert stats["by_status"] == {"200": stats["requests"]}
