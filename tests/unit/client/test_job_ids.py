"""Job ids are checked before they reach Redis: an id becomes part of key names, so a crafted one
(`X:row:Y`) would read some other key. Every command that takes a job id says so cleanly."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalq.client.client import Client, check_job_id, new_job_id
from evalq.core.errors import JobNotFound
from evalq.core.models import JobConfig, MediaRef, RowInput
from tests.conftest import EVALQ, ROOT, RedisServer
from worker.settings import Settings
from worker.store import Store


@pytest.mark.parametrize(
    "bad", ["", "X:row:Y", "abc", "0123456789ab:row:1", "0123456789AB", "0123456789abc", "*"]
)
def test_ids_create_job_could_not_have_made_are_refused(bad: str) -> None:
    with pytest.raises(JobNotFound, match="not a job id"):
        check_job_id(bad)


def test_new_ids_pass() -> None:
    assert check_job_id(new_job_id())


@pytest.fixture
def url(redis_server: RedisServer) -> Iterator[str]:
    """Database 3 of the test Redis, holding one job with a row: no worker looks at it."""
    url = redis_server.url.rsplit("/", 1)[0] + "/3"
    store = Store.from_settings(Settings(redis_url=url))
    store.r.flushdb()
    yield url
    store.r.flushdb()


def one_job(url: str) -> str:
    store = Store.from_settings(Settings(redis_url=url))
    job = new_job_id()
    config = JobConfig(
        job_id=job,
        metric="gecko-image",
        judge_model="m",
        dataset="d",
        rows_total=1,
        created_at=time.time(),
    )
    store.create_job(
        config, [RowInput(id="r", line=1, media={"image": MediaRef(kind="path", value="/x")})]
    )
    return job


def test_client_refuses_a_crafted_id_instead_of_reading_another_key(url: str) -> None:
    job = one_job(url)
    client = Client(Settings(redis_url=url))
    crafted = f"{job}:row:1"  # evalq:job:{crafted} is the row's STRING key
    for call in (client.results, client.summary, client.cancel, client.resume, client.inputs):
        with pytest.raises(JobNotFound, match="not a job id"):
            call(crafted)
    with pytest.raises(JobNotFound, match="not a job id"):
        client.wait(crafted, timeout_s=5)
    assert client.summary(job).job_id == job  # the real id still works


@pytest.mark.parametrize(
    "command",
    [
        ["results"],
        ["status"],
        ["resume"],
        ["cancel"],
        ["report", "--html", "out.html"],
    ],
)
def test_every_command_taking_a_job_id_refuses_a_crafted_one(
    url: str, command: list[str], tmp_path: Path
) -> None:
    job = one_job(url)
    name, *rest = command
    done = subprocess.run(
        [*EVALQ, name, f"{job}:row:1", *rest, "--redis-url", url],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "not a job id" in done.stderr
    assert "Traceback" not in done.stderr
