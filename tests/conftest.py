"""Fixtures that start real processes: a private redis-server, the fake Gemini server over HTTP,
and evalq worker processes. Nothing is mocked but the judge's network peer."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
EVALQ = [sys.executable, "-m", "evalq"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Any, timeout_s: float, what: str, interval_s: float = 0.1) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout_s: float = 15) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass
class RedisServer:
    url: str
    port: int
    proc: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server (so tests may flush it); falls back to EVALQ_TEST_REDIS_URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        url = os.environ.get("EVALQ_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
        server = RedisServer(url=url, port=0)
        server.client().flushdb()
        yield server
        return
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = RedisServer(url=f"redis://127.0.0.1:{port}/0", port=port, proc=proc)

    def ready() -> bool:
        try:
            return bool(server.client().ping())
        except redis.ConnectionError:
            return False

    wait_for(ready, 10, "redis-server")
    yield server
    stop(proc)


@dataclass
class FakeGemini:
    url: str
    proc: subprocess.Popen[str]

    def _call(self, path: str, body: Any | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def stats(self) -> dict[str, Any]:
        return dict(self._call("/stats"))

    def script(self, rules: list[dict[str, Any]]) -> None:
        self._call("/script", rules)

    def reset(self) -> None:
        self._call("/reset", {})


def start_fake_gemini(*args: str) -> FakeGemini:
    proc = subprocess.Popen(
        [*EVALQ, "fake-gemini", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        stop(proc)
        raise RuntimeError(f"fake-gemini did not start: {line!r}")
    url = line.split("listening on", 1)[1].split()[0]
    return FakeGemini(url=url, proc=proc)


@pytest.fixture(scope="session")
def fake_gemini() -> Iterator[FakeGemini]:
    server = start_fake_gemini()
    yield server
    stop(server.proc)


@pytest.fixture
def fake(fake_gemini: FakeGemini) -> Iterator[FakeGemini]:
    """The shared fake server with its script and counters cleared for this test."""
    fake_gemini.script([])
    fake_gemini.reset()
    yield fake_gemini
    fake_gemini.script([])


def worker_env(redis_url: str, gemini_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update(
        {
            "EVALQ_REDIS_URL": redis_url,
            "EVALQ_GEMINI_BASE_URL": gemini_url,
            "EVALQ_TRANSIENT_MAX_WAIT_S": "0.2",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    return env


@dataclass
class Workers:
    redis_url: str
    gemini_url: str
    log_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, concurrency: int = 8, **env: str) -> subprocess.Popen[bytes]:
        name = f"w{len(self.procs)}-{os.getpid()}"
        log = (self.log_dir / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [
                *EVALQ,
                "worker",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"{name}@%h",
                "--loglevel",
                "INFO",
            ],
            cwd=ROOT,
            env=worker_env(self.redis_url, self.gemini_url, **env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        logfile = self.log_dir / f"{name}.log"
        wait_for(
            lambda: b"ready." in logfile.read_bytes() or proc.poll() is not None,
            60,
            f"worker {name}",
        )
        if proc.poll() is not None:
            raise RuntimeError(f"worker {name} exited:\n{logfile.read_text()[-3000:]}")
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            stop(proc)
        self.procs.clear()


@pytest.fixture(scope="session")
def workers(
    redis_server: RedisServer, fake_gemini: FakeGemini, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workers]:
    """One shared worker process for the integration tests."""
    pool = Workers(redis_server.url, fake_gemini.url, tmp_path_factory.mktemp("worker-logs"))
    pool.start()
    yield pool
    pool.stop_all()


@pytest.fixture(scope="session")
def settings(redis_server: RedisServer, fake_gemini: FakeGemini) -> Any:
    from worker.settings import Settings

    return Settings(redis_url=redis_server.url, gemini_base_url=fake_gemini.url, api_key=None)


@pytest.fixture
def client(settings: Any, workers: Workers) -> Any:
    from evalq.client import Client

    return Client(settings)
