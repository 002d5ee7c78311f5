"""`evalq resume` answers in one line, on real workers through the CLI: a finished job has nothing
to resume, exit 8 (--wait and --json alike, no job said enqueued); a cancelled job is continued and
a running one's rows in flight left be, exit 0, or with --wait the exit code of how it ended."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from evalq.client.cli import exit_codes
from evalq.worker.store import keys
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import TIMEOUT_S, announced_job, run_evalq, start_evalq
from tests.support.datasets import qa_rows
from tests.support.held import release

pytestmark = pytest.mark.integration

QA = ("--template", "question_answering_quality")


def held_job(
    held: FakeGemini, redis_url: str, folder: Path, name: str
) -> tuple[dict[str, str], str]:
    """A job of four rows submitted without waiting, to workers whose judge holds every call:
    the environment that reaches them, and the job's id (from the line `evalq run` says it in)."""
    marker = f"{name}-{uuid.uuid4().hex[:8]}"
    env = worker_env(redis_url, held.url, COLUMNS="80")
    data = str(qa_rows(folder, marker))
    ran = run_evalq(env, "run", "pointwise", data, *QA, "--judge-model", f"judge-{marker}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return env, announced_job(ran.stderr)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """What the command said on stderr: exactly one line."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def resumed(env: dict[str, str], job: str) -> str:
    """`evalq resume JOB` exits 0 and says one line on stderr, nothing on stdout; that line."""
    done = run_evalq(env, "resume", job)
    assert done.returncode == exit_codes.OK, done.stdout + done.stderr
    assert done.stdout == ""
    return one_line(done)


def resume_waits_for_the_end(env: dict[str, str], held: FakeGemini, job: str, said: str) -> None:
    """`evalq resume JOB --wait --json` says its one line (starting `said`) before it waits;
    once the held judge is released, it exits 0 with the finished job's summary and never says
    it enqueued anything."""
    waiting = start_evalq(env, "resume", job, "--wait", "--json")
    assert waiting.stderr is not None
    first = waiting.stderr.readline()
    assert first.startswith(said), first
    release(held)
    out, err = waiting.communicate(timeout=TIMEOUT_S)
    assert waiting.returncode == exit_codes.OK, out + err
    assert json.loads(out)["status"] == "finished"
    assert "enqueued" not in out + err


def test_resume_on_a_finished_job_says_so_in_one_line_and_exits_8(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"ResumeDone-{uuid.uuid4().hex[:8]}"
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = str(qa_rows(tmp_path, marker))
    ran = run_evalq(
        env, "run", "pointwise", data, *QA, "--judge-model", f"judge-{marker}", "--wait", "--json"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = json.loads(ran.stdout)
    job = summary["job_id"]
    said = (
        f"job {job} is finished: nothing to resume; `evalq status {job}` shows it; "
        f"exit {exit_codes.NOTHING_TO_RESUME}"
    )
    for flags in ([], ["--wait"], ["--json"], ["--wait", "--json"]):
        done = run_evalq(env, "resume", job[:6], *flags)  # by a prefix of its id, as a user may
        assert done.returncode == exit_codes.NOTHING_TO_RESUME == 8, (flags, done.stderr)
        assert one_line(done) == said, flags  # never folded at 80 columns
        assert done.stdout == "", flags  # no "enqueued", no summary
    after = json.loads(run_evalq(env, "status", job, "--json").stdout)
    assert (after["status"], after["rows_done"]) == ("finished", summary["rows_done"])

    # Gone from Redis (expired), in the archive: nothing to resume all the same.
    assert run_evalq(env, "archive", job).returncode == 0
    r = redis_server.client()
    for key in r.scan_iter(keys.job(job) + "*"):
        r.delete(key)
    done = run_evalq(env, "resume", job, "--wait")
    assert done.returncode == exit_codes.NOTHING_TO_RESUME, done.stdout + done.stderr
    assert one_line(done) == (
        f"job {job} is finished (in the archive): nothing to resume; `evalq status {job}` "
        "shows it; exit 8"
    )


def test_resume_on_a_cancelled_job_continues_it_in_one_line(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env, job = held_job(held, redis_server.url, tmp_path, "ResumeCancelled")
    assert run_evalq(env, "cancel", job).returncode == 0

    said = resumed(env, job)
    assert re.fullmatch(
        rf"job {job} was cancelled: [1-4] rows back in line; watch it with `evalq status {job}`",
        said,
    ), said
    status = json.loads(run_evalq(env, "status", job, "--json").stdout)
    assert status["status"] == "running"

    # Cancelled again, then resumed with --wait: the one line, then the wait, and the exit
    # code of how the job ended (here: finished with scored rows).
    assert run_evalq(env, "cancel", job).returncode == 0
    resume_waits_for_the_end(env, held, job, f"job {job} was cancelled: ")


def test_resume_on_a_running_job_leaves_its_rows_in_one_line(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env, job = held_job(held, redis_server.url, tmp_path, "ResumeRunning")

    assert resumed(env, job) == (
        f"job {job} is running: 4 rows in flight or waiting left as they are, 0 rows re-sent "
        f"(none was lost); watch it with `evalq status {job}`"
    )

    # --wait attaches to it: the one line first, then the summary once it ends.
    resume_waits_for_the_end(env, held, job, f"job {job} is running: 4 rows in flight or waiting")
