"""Through the CLI as a user runs it: in a Redis with no worker, `run --wait` says that no
worker is alive, naming the Redis and the command that starts one, and Ctrl-C still leaves with
130; `evalq status` says it for the running job; `evalq wait` says it, keeps waiting, says so
when a worker appears and ends with the job; the Python API's wait prints it with progress and
warns (NoWorkerWarning) without. When it is said (the grace, then a check every second) is the
unit tests' (tests/unit/client/test_workers_alive.py, on a clock of their own): here every wait
is on what was said, never on how soon."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from devtools.local import RedisServer, WorkerPool, stop, wait_for
from evalq.client.workers_alive import NoWorkerWarning
from tests.conftest import FakeGemini
from tests.support.cli import TIMEOUT_S, announced_job, run_evalq, start_evalq
from tests.support.datasets import uncached_fluency_rows
from tests.support.stack import kill_workers, worker_env

pytestmark = pytest.mark.integration


class Said:
    """A running command's stderr, read as it comes: each line with when it came."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.proc = proc
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            with self._lock:
                self.lines.append((time.monotonic(), line))

    def when(self, pattern: str) -> float | None:
        """When the first line matching `pattern` came (None: not yet)."""
        with self._lock:
            return next((at for at, line in self.lines if re.search(pattern, line)), None)

    def wait(self, pattern: str, timeout_s: float = 60) -> float:
        wait_for(
            lambda: self.when(pattern) is not None or self.proc.poll() is not None,
            timeout_s,
            pattern,
        )
        at = self.when(pattern)
        assert at is not None, self.text()
        return at

    def text(self) -> str:
        if self.proc.poll() is not None:  # ended: all it said, read to the end
            self._thread.join(timeout=TIMEOUT_S)
        with self._lock:
            return "".join(line for _, line in self.lines)


NO_WORKER = r"no worker is alive on Redis 127\.0\.0\.1:\d+"


def test_no_worker_is_said_and_a_worker_started_later_finishes_the_job(
    tmp_path: Path, private_redis: RedisServer, fake: FakeGemini
) -> None:
    env = worker_env(private_redis.url, fake.url, COLUMNS="400")
    address = f"127.0.0.1:{private_redis.port}"
    start = f"`EVALQ_REDIS_URL={private_redis.url} evalq worker`"
    data = uncached_fluency_rows(tmp_path)

    run = start_evalq(env, "run", "pointwise", str(data), "--template", "fluency", "--wait")
    said = Said(run)
    said.wait(r"job [0-9a-f]{12}: pointwise")
    said.wait(NO_WORKER)
    job_id = announced_job(said.text())
    line = next(line for line in said.text().splitlines() if "no worker" in line)
    assert f"no worker is alive on Redis {address}" in line
    assert start in line and line.rstrip().endswith("still waiting")
    run.send_signal(signal.SIGINT)  # a user's Ctrl-C
    run.wait(timeout=TIMEOUT_S)
    assert run.returncode == 130, said.text()
    assert f"job {job_id} keeps running on the workers" in said.text()
    assert len(re.findall(NO_WORKER, said.text())) == 1  # said once

    status = run_evalq(env, "status", job_id)
    assert status.returncode == 0, status.stderr
    assert f"job {job_id}: no worker is alive on Redis {address}" in status.stderr
    assert start in status.stderr

    waiting = start_evalq(env, "wait", job_id)
    said = Said(waiting)
    said.wait(NO_WORKER)
    pool = WorkerPool(env, tmp_path / "logs")
    try:
        pool.start(concurrency=4)
        said.wait(rf"a worker is alive on Redis {re.escape(address)} now")
        out, _ = waiting.communicate(timeout=TIMEOUT_S)
        assert waiting.returncode == 0, said.text()
        assert job_id in out and "finished (3/3 rows)" in out
        status = run_evalq(env, "status", job_id)
        assert status.returncode == 0 and "no worker" not in status.stderr, status.stderr
    finally:
        kill_workers(pool)
        for proc in (run, waiting):
            stop(proc)


def test_the_python_api_prints_it_with_progress_and_warns_without(
    tmp_path: Path, private_redis: RedisServer, fake: FakeGemini, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalq.client import Client
    from evalq.client.api import Job
    from evalq.worker.settings import Settings

    client = Client(Settings(redis_url=private_redis.url, gemini_base_url=fake.url, api_key=None))

    def waiting_job(name: str, progress: bool) -> tuple[Job, threading.Thread]:
        (tmp_path / name).mkdir()
        submitted = client.submit("pointwise", uncached_fluency_rows(tmp_path / name), options={"template": "fluency"})  # fmt: skip
        job = Job(submitted.job_id, client)
        waiter = threading.Thread(target=job.wait, kwargs={"progress": progress}, daemon=True)
        waiter.start()
        return job, waiter

    def left_running(job: Job, waiter: threading.Thread) -> None:
        """The wait only said it: the job still runs until cancelled, and then the wait ends."""
        assert job.summary()["status"] == "running"
        job.cancel()
        waiter.join(timeout=TIMEOUT_S)
        assert not waiter.is_alive()

    printed: list[str] = []

    def said_no_worker(job_id: str) -> bool:
        printed.append(capsys.readouterr().out)
        return (
            re.search(rf"{job_id}: {NO_WORKER}: .*`EVALQ_REDIS_URL=", "".join(printed)) is not None
        )

    job, waiter = waiting_job("progress", progress=True)
    wait_for(lambda: said_no_worker(job.job_id), TIMEOUT_S, "the no-worker line")
    assert f"{job.job_id}: 0/3 rows" in "".join(printed)
    left_running(job, waiter)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        job, waiter = waiting_job("warned", progress=False)
        wait_for(
            lambda: any(issubclass(w.category, NoWorkerWarning) for w in caught),
            TIMEOUT_S,
            "a NoWorkerWarning",
        )
        left_running(job, waiter)
    (warned,) = [w for w in caught if issubclass(w.category, NoWorkerWarning)]
    assert re.search(rf"job {job.job_id}: {NO_WORKER}", str(warned.message))
