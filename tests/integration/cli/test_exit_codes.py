"""Exit codes that mean something, on real workers through the CLI: `run --wait`, `resume
--wait` and `wait` exit 4 when the job ended with no scored row, 5 when it was cancelled, 6 when
it paused, and the last line on stderr says why (docs/concepts/jobs-rows-units.md: Exit codes).
--fail-under keeps exit 1 for a finished job with scores under it. Each code is seen once as
the shell sees it, from a child process (`run_evalq_process`); the commands around it run in
this process."""

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
from tests.support.cli import (
    TIMEOUT_S,
    announced_job,
    run_evalq,
    run_evalq_process,
    start_evalq,
)
from tests.support.datasets import png, write_rows, yes_no

pytestmark = pytest.mark.integration


def last_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert lines, done.stdout
    return lines[-1]


def test_a_job_whose_every_row_failed_exits_4_and_says_why(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "text.png").write_text("this is text, not a png", encoding="utf-8")
    rows = [
        {"id": "gone", "prompt": "a cat", "image": "nowhere.png", "questions": [yes_no("Q?")]},
        {"id": "text", "prompt": "a dog", "image": "text.png", "questions": [yes_no("Q?")]},
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")

    ran = run_evalq_process(env, "run", "gecko-image", str(data), "--wait")
    assert ran.returncode == exit_codes.NO_SCORED_ROW == 4, ran.stdout + ran.stderr
    job = announced_job(ran.stderr)
    said = (
        f"job {job} ended with no scored row: 2 of 2 rows failed (input_error 2); "
        f"`evalq results {job}` has each row's error; exit 4"
    )
    assert last_line(ran) == said  # one line, never folded at 80 columns
    assert job in ran.stdout and "finished" in ran.stdout  # the summary still printed

    # `evalq wait` re-attached to it (by a prefix of its id) says the same; --fail-under does
    # not hide it behind exit 1, and --json keeps stdout one JSON object.
    again = run_evalq(env, "wait", job[:6], "--json", "--fail-under", "0.5")
    assert again.returncode == 4, again.stdout + again.stderr
    assert last_line(again) == said
    assert json.loads(again.stdout)["rows_failed"] == 2


def test_a_job_cancelled_from_another_process_while_waiting_exits_5(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"ExitCancel-{uuid.uuid4().hex[:8]}"
    rows = [
        {"id": f"r{i}", "prompt": f"{marker} question {i}?", "response": f"answer {i}"}
        for i in range(4)
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, held.url, COLUMNS="80")
    name = f"cancel me {marker}"
    run = start_evalq(
        env, "run", "pointwise", str(data), "--template", "question_answering_quality",
        "--judge-model", f"judge-{marker}", "--name", name, "--wait",
    )  # fmt: skip
    assert run.stderr is not None
    seen = []
    for line in run.stderr:  # until it says which job it waits on
        seen.append(line)
        if "rejected at load" in line:
            break
    job = announced_job("".join(seen))

    cancelled = run_evalq(env, "cancel", name)  # by its --name, from another process
    assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
    out, err = run.communicate(timeout=TIMEOUT_S)
    assert run.returncode == exit_codes.CANCELLED == 5, out + err
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"job {job} was cancelled: \d of 4 rows done, \d scored "
        rf"\(`evalq results {job}` has them\); exit 5",
        last,
    ), last
    assert "cancelled" in out  # the summary on stdout

    again = run_evalq(env, "wait", job)
    assert again.returncode == 5 and last_line(again).startswith(f"job {job} was cancelled: ")


def test_a_paused_job_exits_6_from_run_resume_and_wait_and_0_once_it_finishes(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"ExitDay-{uuid.uuid4().hex[:8]}"
    fake.script(
        [
            {"match": f"{marker}-day", "status": 429, "quota": "day"},
            {"match": marker, "reply": "yes"},
        ]
    )
    rows = [  # distinct images, so no call is served from the cache
        {
            "id": color,
            "prompt": "p",
            "image": str(png(tmp_path / f"{color}.png", color)),
            "questions": [yes_no(f"{marker}-ok?"), yes_no(f"{marker}-day?")],
        }
        for color in ("red", "green")
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")

    ran = run_evalq_process(env, "run", "gecko-image", str(data), "--wait", "--json")
    assert ran.returncode == exit_codes.PAUSED == 6, ran.stdout + ran.stderr
    summary = json.loads(ran.stdout)
    job = summary["job_id"]
    assert summary["status"] == "paused"
    last = last_line(ran)
    assert last.startswith(f"job {job} is paused, 0 of 2 rows done: ")
    assert "daily quota" in last and last.endswith(f"`evalq resume {job}` continues it; exit 6")

    still = run_evalq(env, "resume", job, "--wait")  # the quota is still spent: paused again
    assert still.returncode == 6, still.stdout + still.stderr
    assert last_line(still).startswith(f"job {job} is paused, ")
    waited = run_evalq(env, "wait", job)
    assert waited.returncode == 6 and "daily quota" in last_line(waited)

    fake.script([{"match": marker, "reply": "yes"}])  # a new day
    done = run_evalq(env, "resume", job, "--wait", "--json")
    assert done.returncode == exit_codes.OK, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "finished"
    assert run_evalq_process(env, "wait", job, "--fail-under", "0.5").returncode == 0
    below = run_evalq_process(env, "wait", job, "--fail-under", "1.01")
    assert below.returncode == exit_codes.BELOW_THRESHOLD == 1, below.stdout + below.stderr


def test_a_refusal_exits_2_and_redis_away_exits_3_as_the_shell_sees_them(tmp_path: Path) -> None:
    """The codes a command ends with before any job exists, from a child process each."""
    from devtools.local import free_port

    data = write_rows(tmp_path / "d.jsonl", [{"id": "a", "response": "r"}])
    closed = f"redis://127.0.0.1:{free_port()}/0"
    env = worker_env(closed, "http://127.0.0.1:9", COLUMNS="80")
    refused = run_evalq_process(env, "run", "pointwise", str(data), "--no-such-flag")
    assert refused.returncode == exit_codes.ERROR == 2, refused.stdout + refused.stderr
    away = run_evalq_process(env, "status", "0123456789ab")
    assert away.returncode == exit_codes.REDIS_DOWN == 3, away.stdout + away.stderr
