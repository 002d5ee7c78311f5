"""An owner for every job, through the CLI as two users (the OS user getpass reads, and the Redis
ACL user of EVALQ_REDIS_URL): alice's job names her as its owner in `evalq jobs`, `evalq status`,
their --json and the archive; only with --force can bob cancel, resume or change its turns.

Bob's refusals are one line each; showing the job's turns is anyone's. A name that reads as a job
id or an id prefix is refused at submit. No worker runs, so that every state the commands meet is
the one they left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.local import RedisServer, evalq_env
from tests.conftest import FakeGemini
from tests.support.cli import announced_job, evalq_ok, one_line_refusal, run_evalq

pytestmark = pytest.mark.integration


def as_os_user(env: dict[str, str], name: str) -> dict[str, str]:
    return {**env, "USER": name, "LOGNAME": name}  # what getpass.getuser reads first


def refusal_of(env: dict[str, str], *args: str) -> str:
    return one_line_refusal(run_evalq(env, *args))


def test_only_its_owner_steers_a_job_without_force(
    tmp_path: Path,
    private_redis: RedisServer,
    fake_gemini: FakeGemini,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalq.examples.ratings import write_pairwise_example

    data = write_pairwise_example(tmp_path / "data")
    archive = tmp_path / "archive.sqlite"
    base = evalq_env(private_redis.url, fake_gemini.url, EVALQ_ARCHIVE_URL=f"sqlite:///{archive}")
    alice, bob = as_os_user(base, "alice"), as_os_user(base, "bob")

    job = announced_job(evalq_ok(alice, "run", "pairwise", str(data), "--name", "mine").stderr)
    status = json.loads(evalq_ok(bob, "status", job, "--json").stdout)
    assert status["owner"] == "alice"
    assert "owner" in evalq_ok(bob, "status", job).stdout
    assert [j["owner"] for j in json.loads(evalq_ok(bob, "jobs", "--json").stdout)] == ["alice"]
    assert "alice" in evalq_ok(bob, "jobs").stdout

    mistake = f"error: job {job} belongs to alice; you are bob: pass --force to act on it anyway"
    assert refusal_of(bob, "cancel", "mine") == mistake
    assert refusal_of(bob, "resume", job) == mistake
    assert refusal_of(bob, "turns", job, "--priority", "high") == mistake
    assert refusal_of(bob, "turns", job, "--max-in-flight", "1") == mistake
    shown = json.loads(evalq_ok(bob, "turns", job, "--json").stdout)  # showing is anyone's
    assert shown["priority"] == "normal" and shown["max_in_flight"] is None
    assert json.loads(evalq_ok(bob, "status", job, "--json").stdout)["status"] == "running"

    # Its owner needs no --force; anyone else does, and then it is done.
    evalq_ok(alice, "turns", job, "--priority", "low")
    turned = json.loads(
        evalq_ok(bob, "turns", job, "--priority", "high", "--force", "--json").stdout
    )
    assert turned["priority"] == "high"
    assert json.loads(evalq_ok(bob, "cancel", job, "--force", "--json").stdout)["status"] == (
        "cancelled"
    )
    assert refusal_of(bob, "resume", job) == mistake
    evalq_ok(bob, "resume", job, "--force")
    assert json.loads(evalq_ok(alice, "status", job, "--json").stdout)["status"] == "running"
    evalq_ok(alice, "cancel", job)

    # Written to the archive (cancelled: it has ended), its owner in the column SQL reads.
    evalq_ok(alice, "archive", job)
    engine = sa.create_engine(f"sqlite:///{archive}")
    with engine.connect() as connection:
        owner = connection.execute(sa.text("SELECT owner FROM archive_jobs")).scalar_one()
    engine.dispose()
    assert owner == "alice"

    # The Redis ACL user of the URL is the owner before the OS user; Redis's `default` user
    # is no one's name, so then the OS user is.
    admin = private_redis.client()
    for user in ("carol", "dave"):
        admin.execute_command("ACL", "SETUSER", user, "on", f">{user}-pw", "~*", "&*", "+@all")

    def as_redis_user(user: str, os_user: str) -> dict[str, str]:
        url = private_redis.url.replace("redis://", f"redis://{user}:{user}-pw@", 1)
        return as_os_user({**base, "EVALQ_REDIS_URL": url}, os_user)

    carol, dave = as_redis_user("carol", "alice"), as_redis_user("dave", "alice")
    theirs = announced_job(evalq_ok(carol, "run", "pairwise", str(data)).stderr)
    assert json.loads(evalq_ok(dave, "status", theirs, "--json").stdout)["owner"] == "carol"
    assert refusal_of(dave, "cancel", theirs) == (
        f"error: job {theirs} belongs to carol; you are dave: pass --force to act on it anyway"
    )
    evalq_ok(as_redis_user("carol", "bob"), "cancel", theirs)  # carol, from any OS account
    default = as_redis_user("default", "alice")
    default["EVALQ_REDIS_URL"] = private_redis.url.replace("redis://", "redis://default:@", 1)
    mine = announced_job(evalq_ok(default, "run", "pairwise", str(data)).stderr)
    assert json.loads(evalq_ok(default, "status", mine, "--json").stdout)["owner"] == "alice"

    # The Python API: the same refusal, forced with force=True.
    from evalq import Job
    from evalq.client import Client
    from evalq.client.owner import NotYourJob
    from evalq.worker.settings import Settings

    monkeypatch.setenv("LOGNAME", "bob")
    settings = Settings(redis_url=private_redis.url, gemini_base_url=fake_gemini.url, api_key=None)
    handle = Job(mine, Client(settings))
    for act in (handle.cancel, handle.resume, lambda: handle.set_turns(priority="high")):
        with pytest.raises(NotYourJob, match="belongs to alice; you are bob: pass force=True"):
            act()
    assert handle.set_turns(priority="high", force=True)["priority"] == "high"
    assert handle.cancel(force=True)["status"] == "cancelled"
    assert handle.resume(force=True)["requeued"] > 0


def test_a_name_that_reads_as_a_job_id_is_refused_at_submit(
    tmp_path: Path, private_redis: RedisServer, fake_gemini: FakeGemini
) -> None:
    from evalq.examples.ratings import write_pairwise_example

    data = write_pairwise_example(tmp_path / "data")
    env = evalq_env(private_redis.url, fake_gemini.url, EVALQ_ARCHIVE_URL="off")
    first = announced_job(evalq_ok(env, "run", "pairwise", str(data)).stderr)
    for name in (first, first[:4], first[:8]):  # the id itself, and prefixes `status` resolves
        done = run_evalq(env, "run", "pairwise", str(data), "--name", name)
        assert done.returncode == 2, done.stdout + done.stderr
        said = " ".join(done.stderr.split())
        assert f"--name: name: {name!r} is 4 to 12 hex digits (0-9, a-f)" in said, said
    assert len(json.loads(evalq_ok(env, "jobs", "--json").stdout)) == 1  # nothing stored
    evalq_ok(env, "run", "pairwise", str(data), "--name", f"run-{first[:4]}")
