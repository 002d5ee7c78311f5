"""Job ids are checked before they reach Redis: an id becomes part of key names, so a crafted one
(`X:row:Y`) would read some other key. Every command that takes a job id says so cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.client.client import Client
from evalq.client.jobs.lookup import check_job_id, new_job_id
from evalq.core.errors import JobNotFound
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.support.cli import bare_env, run_evalq
from tests.support.scratch import plant_job


@pytest.mark.parametrize(
    "bad", ["", "X:row:Y", "abc", "0123456789ab:row:1", "0123456789AB", "0123456789abc", "*"]
)
def test_ids_create_job_could_not_have_made_are_refused(bad: str) -> None:
    with pytest.raises(JobNotFound, match="not a job id"):
        check_job_id(bad)


def test_new_ids_pass() -> None:
    assert check_job_id(new_job_id())


def test_client_refuses_a_crafted_id_instead_of_reading_another_key(
    scratch_url: str, store: Store
) -> None:
    job = plant_job(store, 1)
    client = Client(Settings(redis_url=scratch_url))
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
    scratch_url: str, store: Store, command: list[str], tmp_path: Path
) -> None:
    job = plant_job(store, 1)
    name, *rest = command
    done = run_evalq(
        bare_env(), name, f"{job}:row:1", *rest, "--redis-url", scratch_url, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "not a job id" in done.stderr
    assert "Traceback" not in done.stderr
