"""A Redis failover that loses writes, through real processes: a master, a replica fed through
a proxy that holds its replication stream (so the master runs ahead of it), and a front proxy
the worker and the client reach Redis through, as a managed endpoint. The failover promotes the
replica (REPLICAOF NO ONE) and points the front proxy at it: every write the master took after
the hold is lost.

The stall timeout is an hour, so the job finishing proves the worker re-drove its rows when it
saw Redis change, not the stall re-drive. The job says what its cost may miss in `evalq status`,
from Redis and from the archive. Nothing waits on how soon anything happens."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from devtools.local import WorkerPool, start_fake_gemini, start_redis, stop, wait_for
from evalq.client import Client
from evalq.worker.settings import Settings
from tests.support.archive import forget_in_redis, wait_archived
from tests.support.cli import evalq_stdout
from tests.support.shapes import shapes_dataset
from tests.support.stack import kill_workers, listening_port, worker_env
from tests.support.tcp_proxy import TcpProxy

# Both pools: each meets the connections the failover cuts in its own loop.
pytestmark = [pytest.mark.integration, pytest.mark.both_pools]

ROWS = 60


def _rows_done(r: Redis, job: str) -> int:
    return int(r.hget(f"evalq:job:{job}", "rows_done") or 0)


def _in_sync(replica: Redis) -> bool:
    info: dict[str, Any] = replica.info("replication")
    return info.get("master_link_status") == "up"


@pytest.mark.timeout(280)  # not re-driven, the lost rows would sit until the hour's stall timeout
def test_a_failover_that_loses_writes_is_re_driven_and_counted(tmp_path: Path) -> None:
    master = start_redis(tmp_path / "master")
    link = TcpProxy(master.port)  # the replication stream, held to let the master run ahead
    replica = start_redis(
        tmp_path / "replica", extra_args=["--replicaof", "127.0.0.1", str(link.port)]
    )
    front = TcpProxy(master.port)  # the endpoint the worker and the client use
    port = listening_port()
    fake = start_fake_gemini("--latency-ms", "100", "--port", str(port))
    env = worker_env(
        front.url,
        fake.url,
        EVALQ_STALL_TIMEOUT_S="3600",
        EVALQ_WATCHDOG_INTERVAL_S="1",
        EVALQ_ARCHIVE_URL=f"sqlite:///{tmp_path / 'archive.sqlite'}",
    )
    pool = WorkerPool(env, tmp_path / "logs")
    try:
        wait_for(lambda: _in_sync(replica.client()), 30, "the replica to sync")
        pool.start(concurrency=8)
        client = Client(Settings(redis_url=front.url, gemini_base_url=fake.url, api_key=None))
        _post(fake.url, "/reset")  # the worker's start-up check is no call of the job's
        data = shapes_dataset(tmp_path / "data", ROWS, own_questions=True)
        job = client.submit("gecko-image", data).job_id
        on_master, on_replica = master.client(), replica.client()
        wait_for(lambda: _rows_done(on_master, job) >= 10, 120, "10 rows done")
        link.hold()
        held_at = _rows_done(on_master, job)
        wait_for(lambda: _rows_done(on_master, job) >= held_at + 15, 120, "the master to run ahead")
        # The failover: the replica is promoted and the endpoint points at it.
        on_replica.execute_command("REPLICAOF", "NO", "ONE")
        link.close()
        front.switch(replica.port)
        ahead = _rows_done(on_master, job)
        assert _rows_done(on_replica, job) < ahead  # writes were lost
        assert ahead < ROWS  # and the job was still running

        finished = client.wait(job, timeout_s=240)
        wait_archived(on_replica, job)  # the worker that ended the job wrote it to the archive
        # A re-driven row's duplicate may still be calling when the job ends; a warm shutdown
        # lets every running task end, so every call the server answered has been counted.
        pool.stop_all(timeout_s=120)
        requests = int(_stats(fake.url)["requests"])
        summary = client.summary(job)
        results = client.results(job)
        status = evalq_stdout(pool.env, "status", job)
        forget_in_redis(on_replica, job)
        archived = evalq_stdout(pool.env, "status", job)  # read back from the archive
        logs = pool.logs()
    finally:
        kill_workers(pool)
        stop(fake.proc)
        front.close()
        link.close()
        for server in (master, replica):
            assert server.proc is not None
            stop(server.proc)
    assert finished.status == summary.status == "finished", logs[-3000:]
    assert summary.rows_done == ROWS
    assert len(results) == len({r.id for r in results}) == ROWS  # every row once
    assert summary.redrive_capped == 0
    # The failover is on the job, and its cost counts every call the server answered, but for
    # the calls it names as possibly missing.
    failover = summary.failover
    assert failover is not None
    calls = summary.judge_calls + summary.candidate_calls
    assert calls <= requests <= calls + failover.calls_unconfirmed
    assert failover.calls_restored > 0  # the lost writes' spend came back from the worker
    assert "re-drove" in logs and "after a Redis failover" in logs
    # `evalq status` says it, with what the cost may miss (its table wraps the line), and so
    # does the job's record in the archive.
    said = " ".join(failover.says().split())
    for shown in (status, archived):
        flat = " ".join(shown.replace("│", " ").split())
        assert "Redis failover" in flat
        assert said in flat


def _stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/stats", timeout=10) as response:
        return dict(json.loads(response.read()))


def _post(url: str, path: str) -> None:
    request = urllib.request.Request(
        url + path, data=b"{}", method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()
