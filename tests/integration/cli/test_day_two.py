"""Day two on a real stack: Ctrl-C while waiting leaves the job running and says how to re-attach;
`evalq wait` re-attaches and holds the job to --fail-under; `evalq resume` on a running job
re-sends only the lost rows, and says so; the tutorial's job on your own data runs."""

from __future__ import annotations

import json
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from devtools.local import ROOT, wait_for
from evalq.worker.store import keys
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import TIMEOUT_S, announced_job, run_evalq, start_evalq
from tests.support.datasets import qa_rows
from tests.support.held import release
from tests.support.rating_replies import rating
from tests.support.stores import store_of

pytestmark = pytest.mark.integration


def interrupted(proc: subprocess.Popen[str], ready: str) -> tuple[str, str, str]:
    """Read stderr until the line that says the command waits, send SIGINT, and return that
    line, what followed on stderr and stdout once it exits."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if ready in line:
            break
    else:
        raise AssertionError("the command ended before waiting: " + "".join(seen))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 130, "".join(seen) + err
    return seen[-1], err, out


def test_ctrl_c_leaves_the_job_running_and_wait_re_attaches(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    marker = f"DayTwo-{uuid.uuid4().hex[:8]}"
    held.script([{"match": marker, "reply": rating(2)}])  # every row rated 2: mean 0.25
    data = qa_rows(tmp_path, marker)
    env = worker_env(redis_server.url, held.url, COLUMNS="200")
    judge = f"judge-{marker}"
    run = start_evalq(
        env, "run", "pointwise", str(data), "--template", "question_answering_quality",
        "--judge-model", judge, "--wait", "--fail-under", "0.5",
    )  # fmt: skip
    header, err, _ = interrupted(run, "rejected at load")
    job = announced_job(header)
    assert f"job {job} keeps running on the workers" in err
    assert f"evalq wait {job}" in err and f"evalq cancel {job}" in err
    assert "aborted" not in err
    assert client.summary(job).status == "running"

    _, err, _ = interrupted(start_evalq(env, "wait", job), f"waiting for job {job}")
    assert f"job {job} keeps running on the workers" in err and f"evalq wait {job}" in err

    release(held)
    below = run_evalq(env, "wait", job, "--fail-under", "0.5")
    assert below.returncode == 1, below.stdout + below.stderr
    assert f"job {job} job mean: mean 0.250 is under 0.5" in below.stderr
    assert job in below.stdout and "finished" in below.stdout  # the summary, as run --wait
    passed = run_evalq(env, "wait", job, "--json", "--fail-under", "0.25")
    assert passed.returncode == 0, passed.stderr
    summary = json.loads(passed.stdout)
    assert (summary["status"], summary["rows_done"], summary["mean_score"]) == ("finished", 4, 0.25)


def test_resume_on_a_running_job_re_sends_only_lost_rows(
    client: Any, held: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.client.api import Job

    marker = f"DayTwoResume-{uuid.uuid4().hex[:8]}"
    held.script([{"match": marker, "reply": rating(5)}])
    rows = 5
    job = client.submit(
        "pointwise",
        qa_rows(tmp_path, marker, rows),
        judge_model=f"judge-{marker}",
        options={"template": "question_answering_quality"},
        max_in_flight=1,
    ).job_id
    turns = lambda: store_of(client).turn_state(job)  # noqa: E731
    wait_for(lambda: (turns().holding, turns().waiting) == (1, rows - 1), 60, "1 row in flight")
    r = redis_server.client()
    lost = r.rpop(keys.waiting(job))  # a row that lost its place: no task will ever take it
    assert lost is not None and turns().waiting == rows - 2

    env = worker_env(redis_server.url, held.url, COLUMNS="200")
    done = run_evalq(env, "resume", job)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert f"job {job} is running: {rows - 1} rows in flight or waiting left as they are" in said
    assert "1 rows that were lost (neither in flight nor waiting) re-sent" in said
    assert lost in r.lrange(keys.waiting(job), 0, -1) or lost in r.smembers(keys.turns(job))

    again = Job(job, client).resume()  # nothing lost now: nothing is sent twice
    assert (again["before"], again["requeued"], again["left"]) == ("running", 0, rows)
    assert "0 rows re-sent" in again["message"]

    release(held)
    summary = client.wait(job, timeout_s=120)
    assert (summary.status, summary.rows_done, summary.rows_scored) == ("finished", rows, rows)


def tutorial_recipe() -> str:
    return (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def test_the_own_data_recipe_runs_as_written(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The tutorial, command by command, on a CSV of the shape it describes: its own
    column names, read through --map, and a column the metric does not read, kept."""
    recipe = tutorial_recipe()
    run_line = (
        "$ evalq run pointwise support.csv --template question_answering_quality \\\n"
        '    --map prompt=customer_message --map response=reply --name "support v1" --wait'
    )
    for line in (
        "evalq worker",
        run_line,
        "$ evalq jobs",
        '$ evalq status "support v1"',
        '$ evalq results "support v1" --format csv --out scored.csv',
        '$ evalq report "support v1" --html report.html',
    ):
        assert line in recipe, line
    marker = f"Recipe-{uuid.uuid4().hex[:8]}"
    (tmp_path / "support.csv").write_text(
        "id,customer_message,reply,channel\n"
        f"t1,{marker} where is my parcel?,It ships tomorrow.,email\n"
        f"t2,{marker} can I get a refund?,Yes within 30 days.,chat\n",
        encoding="utf-8",
    )
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")

    def evalq(*args: str) -> subprocess.CompletedProcess[str]:
        done = run_evalq(env, *args, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    ran = evalq(
        "run", "pointwise", "support.csv", "--template", "question_answering_quality",
        "--map", "prompt=customer_message", "--map", "response=reply",
        "--judge-model", f"judge-{marker}", "--name", "support v1", "--wait",
    )  # fmt: skip
    job_id = announced_job(ran.stderr)
    listed = evalq("jobs").stdout
    assert job_id in listed and "support v1" in listed and "support.csv" in listed
    assert max(len(line) for line in listed.splitlines()) <= 80 and "…" not in listed
    as_json = {j["job_id"]: j for j in json.loads(evalq("jobs", "--json").stdout)}
    assert as_json[job_id]["name"] == "support v1"
    assert job_id in evalq("status", "support v1").stdout  # found by its name
    evalq("results", "support v1", "--format", "csv", "--out", "scored.csv")
    scored = (tmp_path / "scored.csv").read_text(encoding="utf-8")
    header = scored.splitlines()[0].split(",")
    assert {"rating", "explanation", "channel"} <= set(header), header
    assert "t1" in scored and "t2" in scored
    evalq("report", "support v1", "--html", "report.html")
    assert "support v1" in client.summary(job_id).model_dump_json()
    assert (tmp_path / "report.html").stat().st_size > 0


def test_the_api_takes_options_and_a_name_as_keywords(
    settings: Any, client: Any, fake: FakeGemini, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import evalq

    marker = f"DayTwoApi-{uuid.uuid4().hex[:8]}"
    fake.script([{"match": marker, "reply": rating(4)}])
    job = evalq.evaluate(
        qa_rows(tmp_path, marker, 3),
        "pointwise",
        template="question_answering_quality",
        samples=1,
        name="api keywords",
        judge_models=[f"judge-{marker}"],
        settings=settings,
    )
    summary = job.wait(timeout_s=120, progress=True)
    assert (summary["status"], summary["name"], summary["mean_score"]) == (
        "finished",
        "api keywords",
        0.75,
    )
    assert store_of(client).config(job.job_id).options == {
        "template": "question_answering_quality",
        "samples": 1,
    }
    lines = capsys.readouterr().out.splitlines()
    assert lines and lines[-1] == f"{job.job_id}: 3/3 rows"
    assert len(lines) == len(set(lines))  # a line per change
