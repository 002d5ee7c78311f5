"""Redis out of reach for a while, through real processes: a private redis-server frozen with
SIGSTOP or restarted empty under a running job, one real worker, the CLI as a user runs it.
Both run in each worker pool: the consumer meets a Redis that stops in a different loop in each
(tests/integration/conftest.py).

Infrastructure errors are never verdicts: tasks retry, the client waits and says so, and a job
that Redis lost is reported as gone, with why. The one fixed wait here is the fault itself (how
long Redis stays frozen); everything else waits on conditions."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from devtools.local import start_redis, stop, wait_for
from evalq.core.models import JobSummary
from tests.support.cli import start_evalq
from tests.support.shapes import shapes_dataset
from tests.support.stack import stack
from tests.support.stores import store_of
from tests.support.summaries import comparable

# The freeze test's EVALQ_REDIS_SOCKET_TIMEOUT_S (5 s by default): a Redis read gives up after
# this. Well above kombu's 1 s BRPOP, and above a reply a loaded machine is merely slow with.
SOCKET_TIMEOUT_S = 2.0


def freeze_s(socket_timeout_s: float) -> float:
    """How long Redis stays frozen (SIGSTOP): half again as long as four socket timeouts, the
    most a command to it takes to fail (a try and, for a connection that breaks, redis-py's
    three retries: evalq.worker.store resends no command that timed out). So every command in flight when Redis stops fails inside the freeze (a task's, a
    gevent consumer's, the waiting CLI's next read), and each part meets the outage as an error
    to handle, not a slow reply. Far inside EVALQ_REDIS_RETRY_MAX_S (300 s), which tasks and
    the client retry for."""
    return 1.5 * 4 * socket_timeout_s


FREEZE_S = freeze_s(SOCKET_TIMEOUT_S)

pytestmark = [pytest.mark.integration, pytest.mark.both_pools]


class Tail:
    """A child's stream collected in a thread, so a test can wait on what it has said so far."""

    def __init__(self, stream: IO[str]) -> None:
        self.chunks: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.chunks.append(line)

    def text(self) -> str:
        return " ".join("".join(self.chunks).split())  # unwrapped: rich wraps at 80 columns

    def join(self) -> str:
        self._thread.join(timeout=30)
        return self.text()


def run_cli(env: dict[str, str], *args: str) -> tuple[subprocess.Popen[str], Tail, Tail]:
    proc = start_evalq(env, *args)
    assert proc.stdout is not None and proc.stderr is not None
    return proc, Tail(proc.stdout), Tail(proc.stderr)


def rows_done(client: object, job: str) -> int:
    return int(store_of(client).job_hash(job).get("rows_done", 0))


def test_redis_frozen_mid_job_changes_nothing(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 80, own_questions=True)  # 240 judge calls
    # A row can lose its message to the outage (a retry Celery could not publish is dropped;
    # reserved messages it could not give back wait for the visibility timeout): the watchdog
    # drives such a row again once it has been quiet for the stall timeout, 120 s by default.
    # A row whose task only waits out the freeze is quiet for the freeze and at most a
    # heartbeat (a quarter of the stall timeout) on either side: a stall timeout of twice the
    # freeze leaves such rows to the tasks' own retries. A sweep a second finds the others.
    with stack(
        tmp_path,
        "--latency-ms",
        "200",
        concurrency=8,
        EVALQ_REDIS_SOCKET_TIMEOUT_S=str(SOCKET_TIMEOUT_S),
        EVALQ_STALL_TIMEOUT_S=str(2 * FREEZE_S),
        EVALQ_WATCHDOG_INTERVAL_S="1",
    ) as s:
        client = s.client()
        calm = client.wait(
            client.submit("gecko-image", data, use_cache=False).job_id, timeout_s=300
        )
        assert calm.rows_done == 80
        cli, out, err = run_cli(
            s.env(), "run", "gecko-image", str(data), "--wait", "--json", "--no-cache"
        )
        wait_for(lambda: len(store_of(client).list_jobs()) == 2, 60, "the CLI's job")
        job = store_of(client).list_jobs()[0]
        wait_for(lambda: rows_done(client, job) >= 8, 120, "8 rows done")
        assert s.redis.proc is not None
        before = rows_done(client, job)
        s.redis.proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(FREEZE_S)  # the fault itself, not a wait for anything
        finally:
            s.redis.proc.send_signal(signal.SIGCONT)
        stormy = client.wait(job, timeout_s=300)  # what the workers made of it
        code = cli.wait(timeout=300)
        logs = s.pool.logs()
    said = err.join()
    assert before < 80  # frozen mid-job
    assert stormy.status == "finished"
    assert comparable(stormy) == comparable(calm)  # counts, mean, tag scores, unscored
    assert stormy.unscored_by_reason == {}
    # The workers did meet the outage. Our task retry says "out of reach"; a part that found
    # Redis frozen inside Celery's or kombu's own steps (the consumer, the result backend, a
    # callback's publish) logs redis-py's timeout ("Timeout reading from socket", or as
    # "network:TimeoutError") or Celery's lost connection, whichever met it first. A task whose
    # Redis reads only waited out the freeze logs nothing of it, but took the freeze's length
    # (less a socket timeout): seen in a CI run, where every task in flight "succeeded in 34 s"
    # (of a 30 s freeze) and nothing else was said.
    signs = ("out of reach", "TimeoutError", "Timeout reading", "Connection to Redis lost")
    waited = [float(s) for s in re.findall(r"succeeded in (\d+(?:\.\d+)?)s", logs)]
    took_the_freeze = max(waited, default=0.0) >= FREEZE_S - SOCKET_TIMEOUT_S
    assert any(sign in logs for sign in signs) or took_the_freeze
    assert "internal error" not in logs
    # The --wait client waited through it, said so, and printed the same summary.
    assert code == 0, said
    assert "waiting for Redis" in said
    assert "Redis answers again" in said
    assert "Traceback" not in said
    printed = JobSummary.model_validate_json(out.join())
    assert printed.job_id == job
    assert comparable(printed) == comparable(calm)


def test_client_waits_for_redis_then_says_a_job_lost_in_a_restart_is_gone(tmp_path: Path) -> None:
    data = shapes_dataset(tmp_path / "data", 30, own_questions=True)
    with stack(tmp_path, "--latency-ms", "400", concurrency=2) as s:
        client = s.client()
        cli, _out, err = run_cli(s.env(), "run", "gecko-image", str(data), "--wait")
        wait_for(lambda: len(store_of(client).list_jobs()) == 1, 60, "the CLI's job")
        job = store_of(client).list_jobs()[0]
        wait_for(lambda: rows_done(client, job) >= 1, 120, "a row done")
        assert s.redis.proc is not None
        stop(s.redis.proc)  # no append-only file, no snapshot: its data is gone
        wait_for(lambda: "waiting for Redis" in err.text(), 60, "the client to say it waits")
        assert cli.poll() is None  # still waiting, not crashed
        restarted = start_redis(tmp_path / "redis-empty", port=s.redis.port)
        s.redis.proc = restarted.proc
        code = cli.wait(timeout=120)
    said = err.join()
    assert code == 2, said
    assert f"job {job} is gone from Redis" in said
    assert "restarted without persistence" in said
    assert "append-only file" in said
    assert "Traceback" not in said
