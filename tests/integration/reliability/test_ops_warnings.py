"""Operators are told, by the real commands: `evalq status` warns when Redis nears its
maxmemory (with and without a job), and `evalq metrics` and the fake server warn when bound
beyond loopback, saying what that exposes. Each against its own private redis-server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from devtools.local import EVALQ, ROOT, free_port, start_redis, stop, wait_for
from evalq.worker.settings import Settings
from tests.support.cli import bare_env, run_evalq
from tests.support.shapes import shapes_dataset

pytestmark = pytest.mark.integration


def test_status_warns_when_redis_is_near_its_maxmemory(tmp_path: Path) -> None:
    server = start_redis(tmp_path / "redis")
    try:
        env = {**bare_env(), "EVALQ_REDIS_URL": server.url}
        from evalq.client import Client

        client = Client(Settings(redis_url=server.url, api_key=None))
        job = client.submit("gecko-image", shapes_dataset(tmp_path / "data", 3)).job_id  # no worker
        r = server.client()

        calm = run_evalq(env, "status")
        assert calm.returncode == 0, calm.stderr
        assert "maxmemory none" in " ".join(calm.stdout.split())
        assert "warning" not in calm.stderr

        used = int(r.info("memory")["used_memory"])
        r.config_set("maxmemory", str(int(used / 0.9)))  # about 90% used
        for args in (("status",), ("status", job), ("status", job, "--json")):
            near = run_evalq(env, *args)
            assert near.returncode == 0, near.stderr
            said = " ".join(near.stderr.split())
            assert "warning:" in said, args
            assert f"Redis at 127.0.0.1:{server.port}" in said
            assert "of its maxmemory" in said and "refuses writes" in said
            assert "Raise maxmemory (docs/operations/redis.md)" in said
        assert json.loads(near.stdout)["job_id"] == job  # --json's stdout stays JSON
        bare = json.loads(run_evalq(env, "status", "--json").stdout)
        assert bare["maxmemory"] == int(used / 0.9) and bare["used_memory"] > 0

        r.config_set("maxmemory", str(used * 10))
        roomy = run_evalq(env, "status", job)
        assert roomy.returncode == 0, roomy.stderr
        assert "warning" not in roomy.stderr
        assert job in roomy.stdout
    finally:
        if server.proc is not None:
            stop(server.proc)


def started(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=sink, stderr=sink)


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_servers_warn_when_bound_beyond_loopback(tmp_path: Path, host: str) -> None:
    server = start_redis(tmp_path / "redis")
    env = {**bare_env(), "EVALQ_REDIS_URL": server.url, "PYTHONUNBUFFERED": "1"}
    metrics_log, fake_log = tmp_path / "metrics.log", tmp_path / "fake.log"
    metrics = started(
        [*EVALQ, "metrics", "--host", host, "--port", str(free_port())], env, metrics_log
    )
    fake = started([*EVALQ, "fake-gemini", "--host", host, "--port", "0"], env, fake_log)
    try:
        wait_for(lambda: b"listening on" in fake_log.read_bytes(), 60, "the fake server")
        # Its ready line comes after the warning (printed before it connects to Redis).
        wait_for(lambda: b"evalq metrics on http" in metrics_log.read_bytes(), 60, "metrics")
        said_metrics = " ".join(metrics_log.read_text().split())
        said_fake = " ".join(fake_log.read_text().split())
    finally:
        stop(metrics)
        stop(fake)
        if server.proc is not None:
            stop(server.proc)
    if host == "127.0.0.1":
        assert "warning" not in said_metrics
        assert "warning" not in said_fake
        return
    assert f"the metrics endpoint binds {host}" in said_metrics
    assert "every job id and its cost" in said_metrics
    assert f"listening on {host}, beyond this host's loopback" in said_fake
    assert "anyone who can reach it can use it" in said_fake
