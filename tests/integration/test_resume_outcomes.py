"""Resume says one thing (issue 34, item 4), on real workers through the CLI: `evalq resume` on
a finished job says in one line that there is nothing to resume and exits 8, with or without
--wait and --json, and says nothing of a job enqueued; on a cancelled job it continues it, and
on a running one it leaves the rows in flight as they are, each said in one line, exit 0; with
--wait the exit code is how the job then ended (README: Exit codes)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from evalq.client.cli import exit_codes
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import TIMEOUT_S, run_evalq, start_evalq
from tests.support.datasets import write_rows
from tests.support.held import release
from worker import keys

pytestmark = pytest.mark.integration

QA = ("--template", "question_answering_quality")


def dataset(folder: Path, marker: str, rows: int = 4) -> str:
    return str(
        write_rows(
            folder / "d.jsonl",
            (
                {"id": f"r{i}", "prompt": f"{marker} question {i}?", "response": f"answer {i}"}
                for i in range(rows)
            ),
        )
    )


def submitted(env: dict[str, str], data: str, marker: str) -> str:
    """A job submitted without waiting; its id, from the line `evalq run` says it in."""
    ran = run_evalq(env, "run", "pointwise", data, *QA, "--judge-model", f"judge-{marker}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found = re.search(r"job ([0-9a-f]{12}):", ran.stderr)
    assert found, ran.stderr
    return found.group(1)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """What the command said on stderr: exactly one line."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_resume_on_a_finished_job_says_so_in_one_line_and_exits_8(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"ResumeDone-{uuid.uuid4().hex[:8]}"
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = dataset(tmp_path, marker)
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
    marker = f"ResumeCancelled-{uuid.uuid4().hex[:8]}"
    env = worker_env(redis_server.url, held.url, COLUMNS="80")
    job = submitted(env, dataset(tmp_path, marker), marker)
    assert run_evalq(env, "cancel", job).returncode == 0

    done = run_evalq(env, "resume", job)
    assert done.returncode == exit_codes.OK, done.stdout + done.stderr
    assert re.fullmatch(
        rf"job {job} was cancelled: [1-4] rows back in line; watch it with `evalq status {job}`",
        one_line(done),
    ), done.stderr
    assert done.stdout == ""
    status = json.loads(run_evalq(env, "status", job, "--json").stdout)
    assert status["status"] == "running"

    # Cancelled again, then resumed with --wait: the one line, then the wait, and the exit
    # code of how the job ended (here: finished with scored rows).
    assert run_evalq(env, "cancel", job).returncode == 0
    waiting = start_evalq(env, "resume", job, "--wait", "--json")
    assert waiting.stderr is not None
    first = waiting.stderr.readline()
    assert first.startswith(f"job {job} was cancelled: "), first
    release(held)
    out, err = waiting.communicate(timeout=TIMEOUT_S)
    assert waiting.returncode == exit_codes.OK, out + err
    assert json.loads(out)["status"] == "finished"
    assert "enqueued" not in out + err


def test_resume_on_a_running_job_leaves_its_rows_in_one_line(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"ResumeRunning-{uuid.uuid4().hex[:8]}"
    env = worker_env(redis_server.url, held.url, COLUMNS="80")
    job = submitted(env, dataset(tmp_path, marker), marker)

    done = run_evalq(env, "resume", job)
    assert done.returncode == exit_codes.OK, done.stdout + done.stderr
    assert one_line(done) == (
        f"job {job} is running: 4 rows in flight or waiting left as they are, 0 rows re-sent "
        f"(none was lost); watch it with `evalq status {job}`"
    )
    assert done.stdout == ""

    # --wait attaches to it: the one line first, then the summary once it ends.
    waiting = start_evalq(env, "resume", job, "--wait", "--json")
    assert waiting.stderr is not None
    first = waiting.stderr.readline()
    assert first.startswith(f"job {job} is running: 4 rows in flight or waiting"), first
    release(held)
    out, err = waiting.communicate(timeout=TIMEOUT_S)
    assert waiting.returncode == exit_codes.OK, out + err
    assert json.loads(out)["status"] == "finished"
    assert "enqueued" not in out + err
