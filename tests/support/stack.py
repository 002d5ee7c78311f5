"""An isolated evalq stack per test: its own redis-server, fake Gemini server and workers."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from worker.local import RedisServer, WorkerPool, evalq_env, start_fake_gemini, start_redis, stop


@dataclass
class Stack:
    redis: RedisServer
    gemini_url: str
    pool: WorkerPool
    folder: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {**dict(self.pool.env), **extra}

    def redis_client(self) -> redis.Redis:
        return self.redis.client()

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.gemini_url + "/stats", timeout=10) as response:
            return dict(json.loads(response.read()))

    def reset_stats(self) -> None:
        request = urllib.request.Request(self.gemini_url + "/reset", data=b"{}", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def client(self, **settings: Any) -> Any:
        from evalq.client import Client
        from worker.settings import Settings

        return Client(
            Settings(
                redis_url=self.redis.url, gemini_base_url=self.gemini_url, api_key=None, **settings
            )
        )


@contextmanager
def stack(
    folder: Path,
    *fake_args: str,
    workers: int = 1,
    concurrency: int = 8,
    appendonly: bool = False,
    **worker_env: str,
) -> Iterator[Stack]:
    server = start_redis(folder / "redis", appendonly=appendonly)
    fake = start_fake_gemini(*fake_args)
    env = evalq_env(server.url, fake.url, EVALQ_TRANSIENT_MAX_WAIT_S="0.2", **worker_env)
    pool = WorkerPool(env, folder / "logs")
    try:
        for _ in range(workers):
            pool.start(concurrency=concurrency)
        yield Stack(redis=server, gemini_url=fake.url, pool=pool, folder=folder)
    finally:
        pool.stop_all()
        stop(fake.proc)
        if server.proc is not None:
            stop(server.proc)
