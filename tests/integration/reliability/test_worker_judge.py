"""Through the CLI: `evalq worker` refuses to start without a judge it can reach (exit NO_JUDGE, one
line on stderr naming what is missing, never a key) and starts with one; a job whose rows all
failed (the check skipped, the judge a closed port) shows its top row error and count in status."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from devtools.local import EVALQ, ROOT, RedisServer, free_port, stop, wait_for
from evalq.client.cli.exit_codes import NO_JUDGE
from tests.support.cli import announced_job, bare_env, run_evalq
from tests.support.datasets import uncached_fluency_rows
from tests.support.stack import worker_env

pytestmark = pytest.mark.integration

SECRET = "AIza-test-key-never-printed"


def refused(env: Mapping[str, str]) -> str:
    """`evalq worker` in `env`: refused with exit NO_JUDGE and one line; that line."""
    done = run_evalq(env, "worker", timeout_s=60)
    assert done.returncode == NO_JUDGE, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("evalq worker: ") and SECRET not in done.stderr
    return lines[0]


def test_a_worker_refuses_to_start_for_each_missing_judge_setting(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    env = {**bare_env(), "EVALQ_REDIS_URL": redis_server.url}
    line = refused(env)
    assert line == (
        "evalq worker: no judge to ask: set GEMINI_API_KEY (Gemini API), or "
        "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
        "(Vertex AI), or EVALQ_GEMINI_BASE_URL (the fake server: evalq fake-gemini)"
    )
    assert refused({**env, "GEMINI_API_KEY": " "}) == line  # blank is not a key

    port = free_port()
    line = refused({**env, "EVALQ_GEMINI_BASE_URL": f"http://127.0.0.1:{port}"})
    assert f"EVALQ_GEMINI_BASE_URL=http://127.0.0.1:{port} does not answer" in line
    assert "Connection refused" in line and "evalq fake-gemini" in line

    home = tmp_path / "home"
    home.mkdir()
    vertex = {
        **env,
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GEMINI_API_KEY": SECRET,  # not what Vertex AI uses: no way around its settings
        "HOME": str(home),
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json"),
    }
    line = refused({**vertex, "GOOGLE_CLOUD_PROJECT": "my-project"})
    assert "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) needs GOOGLE_CLOUD_LOCATION: set it" in line
    line = refused(vertex)
    assert "needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION: set them" in line
    placed = {**vertex, "GOOGLE_CLOUD_PROJECT": "my-project", "GOOGLE_CLOUD_LOCATION": "us-east1"}
    line = refused(placed)
    assert "Vertex AI: no application-default credentials" in line
    assert f"{tmp_path / 'missing.json'} was not found" in line
    assert "gcloud auth application-default login" in line


def start_worker(env: Mapping[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """`evalq worker ARGS` left running, once Celery says it is ready."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*EVALQ, "worker", "--concurrency", "4", "--hostname", f"{log.stem}@%h", *args],
            cwd=ROOT,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for(
        lambda: b"ready." in log.read_bytes() or proc.poll() is not None, 60, f"worker {log.stem}"
    )
    assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
    return proc


def test_a_worker_with_a_judge_starts(
    tmp_path: Path, private_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key (Gemini API), or Vertex AI with its project, location and credentials: started,
    and nothing of the key in what it prints. The check is all that tells the two apart: once
    it passes, `evalq worker` execs the same `celery worker` either way (the judge client is
    built per task, not at start). So one real worker, on the key, shows a passed check
    becoming a ready worker that never prints the key; Vertex AI's settings go through the same
    command in this process, up to the exec it would make, with google.auth reading the
    credentials file as it would there."""
    from evalq.client.cli import serve

    env = {**bare_env(), "EVALQ_REDIS_URL": private_redis.url, "HOME": str(tmp_path)}
    credentials = tmp_path / "adc.json"
    credentials.write_text(
        json.dumps(
            {"type": "authorized_user", "client_id": "c", "client_secret": "s",
             "refresh_token": "r"}
        )
    )  # fmt: skip
    vertex = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "my-project",
        "GOOGLE_CLOUD_LOCATION": "us-east1",
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        "GEMINI_API_KEY": SECRET,  # not what Vertex AI uses, but there to be leaked
    }
    execs: list[list[str]] = []
    with monkeypatch.context() as patched:
        patched.setattr(os, "execv", lambda _exe, argv: execs.append(list(argv)))
        patched.setattr(serve, "_raise_open_files_limit", lambda: None)
        done = run_evalq({**env, **vertex}, "worker", "--concurrency", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET not in done.stdout + done.stderr
    (argv,) = execs  # the check passed: the command went on to become Celery's worker
    assert (
        argv[1:6] == ["-m", "celery", "-A", "evalq.worker.celery_app.app", "worker"]
        and "--concurrency=4" in argv
    )

    log = tmp_path / "key.log"
    proc = start_worker({**env, "GEMINI_API_KEY": SECRET}, log)
    stop(proc)
    assert SECRET not in log.read_text(errors="replace")


def test_status_names_the_top_row_error_with_its_count(
    tmp_path: Path, private_redis: RedisServer
) -> None:
    """A worker whose judge is not there (started past the check) fails every row as
    judge_error, and `evalq status` and `status --json` say why, with the count."""
    dead = f"http://127.0.0.1:{free_port()}"
    env = worker_env(private_redis.url, dead, COLUMNS="200")
    worker = start_worker(env, tmp_path / "nojudge.log", "--no-judge-check")
    try:
        data = uncached_fluency_rows(tmp_path)
        ran = run_evalq(env, "run", "pointwise", str(data), "--template", "fluency")
        assert ran.returncode == 0, ran.stderr
        job_id = announced_job(ran.stderr)

        def as_json() -> dict[str, object]:
            done = run_evalq(env, "status", job_id, "--json")
            assert done.returncode == 0, done.stderr
            return dict(json.loads(done.stdout))

        wait_for(lambda: as_json()["status"] == "finished", 120, "every row to fail")
        summary = as_json()
        assert summary["rows_failed"] == 3
        (top,) = summary["row_errors"]["top"]  # type: ignore[index]
        assert top["rows"] == 3
        assert top["error"].startswith("no rating could be read: transport error: ConnectError")
        assert "Connection refused" in top["error"]

        shown = run_evalq(env, "status", job_id)
        assert shown.returncode == 0, shown.stderr
        text = " ".join(shown.stdout.replace("│", " ").split())
        assert "row errors 3 × no rating could be read: transport error: ConnectError" in text
    finally:
        stop(worker)
