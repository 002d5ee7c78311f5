"""An isolated evalq stack per test: its own redis-server, fake Gemini server and workers."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redis import Redis

from devtools.local import (
    FakeGeminiProcess,
    RedisServer,
    WorkerPool,
    evalq_env,
    start_fake_gemini,
    start_redis,
    stop,
)
from evalq.worker.settings import Settings
from evalq.worker.store import Store


@dataclass
class Stack:
    redis: RedisServer
    gemini_url: str
    pool: WorkerPool
    folder: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {**dict(self.pool.env), **extra}

    def redis_client(self) -> Redis:
        return self.redis.client()

    def store(self) -> Store:
        """The stack's store, for what no summary shows (calls_admitted, the reservations)."""
        return Store(self.redis_client(), Settings())

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.gemini_url + "/stats", timeout=10) as response:
            return dict(json.loads(response.read()))

    def reset_stats(self) -> None:
        self.post("/reset", {})

    def set_latency(self, latency_ms: float) -> None:
        """The fake's delay before every reply, for calls already waiting it out too."""
        self.post("/latency", {"latency_ms": latency_ms})

    def post(self, path: str, body: Any) -> Any:
        """POST JSON to the fake server's control routes (/script, /batch-realism, ...)."""
        request = urllib.request.Request(
            self.gemini_url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def client(self, **settings: Any) -> Any:
        from evalq.client import Client
        from evalq.worker.settings import Settings

        return Client(
            Settings(
                redis_url=self.redis.url, gemini_base_url=self.gemini_url, api_key=None, **settings
            )
        )


def worker_env(redis_url: str, gemini_url: str, **extra: str) -> dict[str, str]:
    """The test workers' environment: retries of transient errors wait briefly."""
    return evalq_env(redis_url, gemini_url, EVALQ_TRANSIENT_MAX_WAIT_S="0.2", **extra)


def listening_port() -> int:
    """A port for a server to listen on, chosen before the server starts: free now, and below
    the ephemeral range, so no connection made meanwhile (which takes its local port from that
    range, as bind to port 0 does) can take it first."""
    try:
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    for _ in range(100):
        port = random.randint(20000, ephemeral_low - 1)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port between 20000 and {ephemeral_low - 1}")


def kill_workers(pool: WorkerPool) -> None:
    """End a finished test's workers at once, then close their logs. A warm shutdown (what
    stop_all asks for) waits out the consumer's poll and the pool, seconds per worker, and
    nothing after a test looks at how its workers stopped."""
    for proc in pool.procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    for proc in pool.procs:
        proc.wait()
    pool.stop_all()


def _after(
    fake: Future[FakeGeminiProcess],
    start: Callable[..., subprocess.Popen[bytes]],
    concurrency: int,
    name: str,
) -> subprocess.Popen[bytes]:
    """A worker started once the fake server listens (a fake that failed to start raises)."""
    fake.result()
    return start(concurrency=concurrency, name=name)


@contextmanager
def stack(
    folder: Path,
    *fake_args: str,
    workers: int = 1,
    concurrency: int = 8,
    appendonly: bool = False,
    fake_env: Mapping[str, str] | None = None,
    **env_overrides: str,
) -> Iterator[Stack]:
    """The fake server first, then the workers together, each waited on until ready: a worker
    checks at start that its judge answers (evalq.worker.judges.check), and the fake's start on a
    loaded machine may take longer than that check waits. `fake_env`: more of the fake
    server's environment (STORAGE_EMULATOR_HOST)."""
    server = start_redis(folder / "redis", appendonly=appendonly)
    port = listening_port()
    fake_url = f"http://127.0.0.1:{port}"
    env = worker_env(server.url, fake_url, **env_overrides)
    pool = WorkerPool(env, folder / "logs")
    fake: Future[FakeGeminiProcess] | None = None
    try:
        with ThreadPoolExecutor(max_workers=workers + 1) as starting:
            fake = starting.submit(
                start_fake_gemini,
                *fake_args,
                "--port",
                str(port),
                env={**os.environ, **fake_env} if fake_env else None,
            )
            started = [
                starting.submit(_after, fake, pool.start, concurrency, f"w{n}-{os.getpid()}")
                for n in range(workers)
            ]
        # A start that failed raises here, once the others have ended (and are stopped below).
        listening = fake.result().url
        for worker in started:
            worker.result()
        if listening != fake_url:
            raise RuntimeError(f"fake-gemini listens on {listening}, not {fake_url}")
        yield Stack(redis=server, gemini_url=fake_url, pool=pool, folder=folder)
    finally:
        kill_workers(pool)
        if fake is not None and fake.exception() is None:
            stop(fake.result().proc)
        if server.proc is not None:
            stop(server.proc)


def watched_stack(
    folder: Path, latency_ms: int, stall_timeout_s: int, **options: Any
) -> AbstractContextManager[Stack]:
    """A stack for tests that kill workers or Redis mid-job: the fake judge answers after
    `latency_ms`, and the watchdog sweeps every second, re-driving a row quiet for
    `stall_timeout_s`. `options`: the rest of `stack`'s."""
    return stack(
        folder,
        "--latency-ms",
        str(latency_ms),
        EVALQ_STALL_TIMEOUT_S=str(stall_timeout_s),
        EVALQ_WATCHDOG_INTERVAL_S="1",
        **options,
    )
