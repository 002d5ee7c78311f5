"""Starting evalq's moving parts as local subprocesses: a private redis-server, the fake Gemini
server, workers, Flower. Shared by the demo, the benchmark and the test fixtures, so all three
run the same real processes the same way."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import redis

EVALQ = [sys.executable, "-m", "evalq"]
ROOT = Path(__file__).resolve().parent.parent
SECRET_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(
    predicate: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.1
) -> None:
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


def redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except (redis.RedisError, ValueError):
        return False


@dataclass
class RedisServer:
    """A Redis to run against: one start_redis started (proc set), or one given by URL."""

    url: str
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0

    def client(self) -> redis.Redis:
        """A client of its own, for the tests and tools that look inside Redis directly."""
        return redis.Redis.from_url(self.url, decode_responses=True)


def start_redis(
    folder: Path,
    *,
    appendonly: bool = False,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    url: str | None = None,
) -> RedisServer:
    """A private redis-server on a free port (appendonly for the crash and restart tests).
    `extra_args` go to redis-server (TLS, an ACL file); `url`, with `{port}` in it, is how to
    reach it then (default: plain redis:// as the default user)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed; set EVALQ_REDIS_URL to a running Redis")
    port = port or free_port()
    folder.mkdir(parents=True, exist_ok=True)
    args = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--dir",
        str(folder),
        "--appendonly",
        "yes" if appendonly else "no",
        *extra_args,
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = (url or "redis://127.0.0.1:{port}/0").format(port=port)
    wait_for(lambda: redis_answers(url) or proc.poll() is not None, 15, "redis-server")
    if proc.poll() is not None:
        raise RuntimeError(f"redis-server on port {port} exited with {proc.returncode}")
    return RedisServer(url=url, proc=proc, port=port)


@dataclass
class FakeGeminiProcess:
    url: str
    proc: subprocess.Popen[str]


def start_fake_gemini(*args: str) -> FakeGeminiProcess:
    proc = subprocess.Popen(
        [*EVALQ, "fake-gemini", "--port", "0", *args], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        stop(proc)
        raise RuntimeError(f"fake-gemini did not start: {line!r}")
    return FakeGeminiProcess(url=line.split("listening on", 1)[1].split()[0], proc=proc)


def evalq_env(redis_url: str, gemini_url: str | None, **extra: str) -> dict[str, str]:
    """The environment for a child process; against the fake server no key is passed on."""
    env = dict(os.environ)
    if gemini_url is not None:
        for name in SECRET_ENV:
            env.pop(name, None)
        env["EVALQ_GEMINI_BASE_URL"] = gemini_url
    env["EVALQ_REDIS_URL"] = redis_url
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass
class WorkerPool:
    env: Mapping[str, str]
    log_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list)

    def start(
        self, concurrency: int = 8, name: str | None = None, pool: str | None = None, **env: str
    ) -> subprocess.Popen[bytes]:
        """A worker process; `pool` (gevent or threads) over EVALQ_WORKER_POOL in its env."""
        name = name or f"w{len(self.procs)}-{os.getpid()}"
        logfile = self.log_dir / f"{name}.log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = logfile.open("ab")
        self._logs.append(log)
        cmd = [
            *EVALQ,
            "worker",
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}@%h",
            "--loglevel",
            "INFO",
            *(["--pool", pool] if pool else []),
        ]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT
        )
        self.procs.append(proc)
        start = logfile.stat().st_size if logfile.exists() else 0
        wait_for(
            lambda: b"ready." in logfile.read_bytes()[start:] or proc.poll() is not None,
            60,
            f"worker {name}",
        )
        if proc.poll() is not None:
            raise RuntimeError(
                f"worker {name} exited:\n{logfile.read_text(errors='replace')[-3000:]}"
            )
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            stop(proc)
        self.procs.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()


def start_flower(env: Mapping[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "flower",
        f"--port={port}",
        "--address=127.0.0.1",
        "--max_tasks=10000",
    ]
    with log.open("ab") as fh:
        return subprocess.Popen(cmd, cwd=ROOT, env=dict(env), stdout=fh, stderr=subprocess.STDOUT)
