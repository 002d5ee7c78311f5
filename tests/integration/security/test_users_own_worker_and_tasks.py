"""A user's folder that holds modules of its own named worker.py and tasks.py (the commonest
names in Celery projects): evalq's code is evalq.worker and evalq.tasks, so nothing there stands
in for it. A worker started in the folder comes up and runs a job to the end, and the Python API
(a script run as `python script.py`, so the folder is sys.path[0]) and the CLI work from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.local import WorkerPool
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import run_evalq_process
from tests.support.datasets import png, write_rows, yes_no
from tests.support.stack import kill_workers

pytestmark = pytest.mark.integration

HOSTILE = {
    "worker.py": 'raise RuntimeError("the user\'s own worker.py was imported")\n',
    "tasks.py": 'raise RuntimeError("the user\'s own tasks.py was imported")\n',
}
# The Python API from the user's folder: a dry run, then a job the worker runs to its end.
SCRIPT = """\
import json, sys
import evalq

plan = evalq.evaluate("rows.jsonl", "gecko-image", dry_run=True)
job = evalq.evaluate("rows.jsonl", "gecko-image")
summary = job.wait()
json.dump({"planned": plan.rows_planned, "job": job.job_id, "summary": summary}, sys.stdout)
"""


def users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name, text in HOSTILE.items():
        (folder / name).write_text(text)
    (folder / "script.py").write_text(SCRIPT)
    png(folder / "a.png", "red")
    write_rows(
        folder / "rows.jsonl",
        [{"id": "r", "prompt": "p", "image": "a.png", "questions": [yes_no("Own-1?")]}],
    )
    return folder


def test_a_folder_with_its_own_worker_and_tasks_modules_runs_evalq(
    private_redis: RedisServer, fake: FakeGemini, tmp_path: Path
) -> None:
    folder = users_folder(tmp_path)
    env = worker_env(private_redis.url, fake.url)
    # The folder's own modules raise when imported: each check below would fail loudly.
    own = subprocess.run(
        [sys.executable, "-c", "import worker"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "the user's own worker.py was imported" in own.stderr

    pool = WorkerPool(env, tmp_path / "logs", cwd=folder)
    try:
        worker = pool.start(concurrency=2)  # returns once the worker logged "ready."
        assert worker.poll() is None, pool.logs()

        dry = run_evalq_process(env, "run", "gecko-image", "rows.jsonl", "--dry-run", cwd=folder)
        assert dry.returncode == 0, dry.stderr

        done = subprocess.run(
            [sys.executable, "script.py"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, done.stderr + pool.logs()
        out = json.loads(done.stdout)
        assert out["planned"] == 1
        assert out["summary"]["status"] == "finished", out
        assert out["summary"]["rows_scored"] == 1, out

        status = run_evalq_process(env, "status", out["job"], "--json", cwd=folder)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["rows_scored"] == 1
        assert worker.poll() is None, pool.logs()
        assert "own worker.py" not in pool.logs() and "own tasks.py" not in pool.logs()
    finally:
        kill_workers(pool)
