"""A worker outlives Redis restarts (evalq.worker.celery_app.broker_teardown), with real processes:
a private redis-server restarted from its AOF again and again under a running job, one real worker
that must reconnect after each restart and finish the job; and kombu's teardown itself, against a
real Redis, left in the state where, unguarded, it raises the AttributeError that ends a worker."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from kombu import Connection

from devtools.local import ROOT, start_redis, stop, wait_for
from evalq.worker.celery_app.broker_teardown import give_back_unreturned, guard_restore_at_teardown
from tests.support.shapes import shapes_dataset
from tests.support.stack import watched_stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration

QUEUE = "evalq.test.teardown"
RESTARTS = 10

# What Celery's consumer does when the broker goes away, reduced to kombu: a message delivered
# and not acknowledged, the transport detached from the connection (what Connection.collect
# leaves behind), then the connection closed, which gives the message back.
TEARDOWN = f"""
import sys
from kombu import Connection
conn = Connection(sys.argv[1])
queue = conn.SimpleQueue({QUEUE!r})
queue.put({{"n": 1}})
message = queue.get(timeout=5)
conn._do_close_transport()
conn.close()
"""


def connects(log: str) -> int:
    """How many times the worker's consumer has connected to the broker."""
    return sum(1 for line in log.splitlines() if "MainProcess] Connected to redis://" in line)


@pytest.mark.both_pools  # each pool's consumer meets a restart in a loop of its own
def test_worker_keeps_working_through_redis_restarts(tmp_path: Path) -> None:
    rows = 200  # about 30 are done by the tenth restart on this machine: room to spare
    data = shapes_dataset(tmp_path / "data", rows, own_questions=True)
    # An unguarded teardown fails in a race with tasks acknowledging their messages: many tasks
    # at once (each holding a message) make it likely within a few restarts. Messages a
    # teardown could not give back wait in Redis's unacked set until the worker has reconnected
    # (evalq.worker.celery_app.broker_teardown.GiveBackAfterReconnect); the watchdog, sweeping every
    # second, drives any row that still goes quiet for the stall timeout.
    with watched_stack(
        tmp_path, latency_ms=500, stall_timeout_s=8, appendonly=True, concurrency=50
    ) as s:
        client = s.client()
        job = client.submit("gecko-image", data, use_cache=False).job_id
        worker = s.pool.procs[0]

        def rows_done() -> int:
            return int(store_of(client).job_hash(job).get("rows_done", 0))

        def wait_or_show_log(
            predicate: Callable[[], bool], what: str, timeout_s: float = 120
        ) -> None:
            """A stall fails with the worker's log, which CI's output then shows."""
            try:
                wait_for(predicate, timeout_s, what)
            except TimeoutError as stalled:
                raise AssertionError(
                    f"{stalled}; the worker's log:\n{s.pool.logs()[-6000:]}"
                ) from None

        for restart in range(RESTARTS):
            done = rows_done()
            wait_or_show_log(lambda d=done: rows_done() > d, "a row done since the last restart")  # type: ignore[misc]
            seen = connects(s.pool.logs())
            assert s.redis.proc is not None
            stop(s.redis.proc, sig=signal.SIGKILL if restart % 2 else signal.SIGTERM)
            s.redis.proc = start_redis(tmp_path / "redis", appendonly=True, port=s.redis.port).proc
            back = rows_done()
            # The consumer logs a reconnect once it notices the restart; a row done since the
            # restart shows the worker came through it too.
            wait_or_show_log(
                lambda n=seen, d=back: (  # type: ignore[misc]
                    connects(s.pool.logs()) > n or rows_done() > d or worker.poll() is not None
                ),
                f"the worker to reconnect or finish a row after restart {restart + 1}",
            )
            assert worker.poll() is None, s.pool.logs()[-4000:]
        wait_or_show_log(lambda: rows_done() >= rows, "every row done", timeout_s=600)
        summary = client.wait(job, timeout_s=600)
        results = client.results(job)
        logs = s.pool.logs()
        assert worker.poll() is None
    assert connects(logs) > 1, "no restart reached the worker's consumer"
    assert summary.status == "finished"
    assert summary.rows_done == rows
    assert len(results) == len({r.id for r in results}) == rows
    assert "Unrecoverable error" not in logs


def test_a_failed_give_back_at_teardown_keeps_the_message_in_redis(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = start_redis(tmp_path / "redis")
    try:
        # Unguarded, kombu's teardown in this state raises the AttributeError that ends a worker.
        bare = subprocess.run(
            [sys.executable, "-c", TEARDOWN, server.url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert bare.returncode != 0
        assert "'NoneType' object has no attribute 'hostname'" in bare.stderr
        r = server.client()
        r.delete(QUEUE, "unacked", "unacked_index")

        guard_restore_at_teardown()
        guard_restore_at_teardown()  # idempotent: one wrapper, one warning
        conn = Connection(server.url)
        queue = conn.SimpleQueue(QUEUE)
        queue.put({"n": 2})
        message = queue.get(timeout=5)
        assert message.payload == {"n": 2}
        conn._do_close_transport()
        with caplog.at_level(logging.WARNING, logger="evalq.worker.celery_app.broker_teardown"):
            conn.close()  # no exception: the worker would go on to reconnect
        said = [rec.getMessage() for rec in caplog.records]
        assert len(said) == 1
        assert "could not give 1 unacknowledged message(s) back" in said[0]
        assert "visibility timeout" in said[0]
        # The task that held it finishes and acknowledges it on its old channel: a lost
        # connection (Celery logs it and carries on), not an AttributeError (which ended it).
        with pytest.raises(redis.exceptions.ConnectionError, match="connection was closed"):
            message.ack()
        assert r.llen(QUEUE) == 0
        assert r.hlen("unacked") == 1  # kept in Redis, not lost

        # Past its visibility timeout the message goes back to its queue, as for any worker
        # that died holding it.
        with Connection(server.url, transport_options={"visibility_timeout": 1}) as later:
            qos = later.default_channel.qos
            wait_for(
                lambda: qos.restore_visible(num=10) is None and r.llen(QUEUE) == 1,
                30,
                "the message back on its queue",
            )
        assert r.hlen("unacked") == 0
    finally:
        if server.proc is not None:
            stop(server.proc)


def test_what_a_teardown_could_not_give_back_goes_back_on_the_next_connection(
    tmp_path: Path,
) -> None:
    server = start_redis(tmp_path / "redis")
    try:
        r = server.client()
        guard_restore_at_teardown()
        with Connection(server.url) as earlier:  # what earlier tests left to give back
            give_back_unreturned(earlier.default_channel.qos)
        conn = Connection(server.url)
        queue = conn.SimpleQueue(QUEUE)
        for n in (1, 2):
            queue.put({"n": n})
        dropped = queue.get(timeout=5)  # reserved, then dropped with the connection
        running = queue.get(timeout=5)  # its task still runs in this worker
        conn._do_close_transport()
        conn.close()  # the give-back fails: both stay in the unacked set
        assert r.llen(QUEUE) == 0 and r.hlen("unacked") == 2

        # The next connection gives back the dropped one at once, not after the visibility
        # timeout (15 minutes by default), and leaves the running task's message to it.
        with Connection(server.url) as later:
            qos = later.default_channel.qos
            assert give_back_unreturned(qos, busy={str(running.delivery_tag)}) == 1
            assert r.llen(QUEUE) == 1 and r.hlen("unacked") == 1
            again = later.SimpleQueue(QUEUE).get(timeout=5)
            assert again.payload == dropped.payload == {"n": 1}
            assert again.headers.get("redelivered") or again.delivery_info.get("redelivered")
            again.ack()
            assert give_back_unreturned(qos) == 0  # each given back once, then forgotten
        assert r.hlen("unacked") == 1  # the running task's, for its own ack
    finally:
        if server.proc is not None:
            stop(server.proc)
