"""A job's lifetime is the job's: the expiry it was submitted with (the submitting shell's
EVALQ_RESULT_TTL_S) is stored with it, every key of the job uses it whoever writes the key
(workers with another setting included), and when the job ends every key expires together,
so none outlives the job's hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FakeGemini, RedisServer, WorkerPool
from tests.support.archive import job_key_names
from tests.support.cli import evalq_ok
from tests.support.stack import worker_env

pytestmark = pytest.mark.integration

WORKERS_TTL_S = 7 * 24 * 3600  # the shared workers' (evalq's default): not what the job asked


@pytest.mark.parametrize("ttl_s", [30 * 24 * 3600, 3600])
def test_every_key_of_a_job_keeps_the_expiry_it_was_submitted_with(
    ttl_s: int, workers: WorkerPool, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    assert "EVALQ_RESULT_TTL_S" not in workers.env
    dataset = write_gecko_image_example(tmp_path / "data")
    env = worker_env(redis_server.url, fake.url, EVALQ_RESULT_TTL_S=str(ttl_s))
    done = evalq_ok(env, "run", "gecko-image", str(dataset), "--wait", "--json", "--no-cache")
    job_id = json.loads(done.stdout)["job_id"]
    redis = redis_server.client()
    names = job_key_names(redis, job_id)
    kinds = {name.split(":")[3] if name.count(":") > 2 else "job" for name in names}
    assert {"job", "row", "plan", "verdicts", "results", "summary", "rows", "done"} <= kinds
    ttls = {name: int(redis.ttl(name)) for name in names}
    assert all(0 < t <= ttl_s for t in ttls.values()), ttls
    if ttl_s > WORKERS_TTL_S:  # not the workers' 7 days (a shorter job's is checked above)
        assert all(t > WORKERS_TTL_S for t in ttls.values()), ttls
    # Ended together: the hash is given its expiry last, so no key outlives it.
    ends = {name: int(redis.pexpiretime(name)) for name in names}
    assert all(end <= ends[f"evalq:job:{job_id}"] for end in ends.values()), ends
    assert int(redis.hget(f"evalq:job:{job_id}", "ttl_s") or 0) == ttl_s
    assert ttl_s != WORKERS_TTL_S
