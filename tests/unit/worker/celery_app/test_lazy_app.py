"""The Celery app and the environment's settings are built on first use, not at import: a client
given explicit settings works whatever the environment holds, and a bad environment value is
reported by whoever uses it (the worker, Flower), not by an import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from devtools.local import ROOT
from tests.conftest import RedisServer
from tests.support.cli import run_command

# Valid on its own, refused by the settings check (it must exceed the longest hold of a task).
BAD = {"EVALQ_VISIBILITY_TIMEOUT_S": "10"}


def run_python(code: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -c CODE` in this environment made bad (then `extra` on top)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **BAD, **(extra or {})}
    return run_command([sys.executable, "-c", code], env)


def test_importing_the_client_validates_no_settings() -> None:
    done = run_python("import evalq.client")
    assert done.returncode == 0, done.stderr


def test_importing_the_api_and_the_app_module_builds_no_app() -> None:
    done = run_python(
        "import evalq.client.api, evalq.worker.celery_app.app, evalq.worker.jobs.watchdog, evalq.worker.dispatch.heartbeat"
    )
    assert done.returncode == 0, done.stderr


def test_a_client_with_explicit_settings_works_while_the_environment_is_bad(
    scratch_url: str, tmp_path: Path
) -> None:
    archive = f"sqlite:///{tmp_path / 'empty.sqlite'}"  # the history it lists: empty too
    code = f"""
from evalq.client import Client
from evalq.worker.settings import Settings
client = Client(Settings(redis_url={scratch_url!r}, archive_url={archive!r}, visibility_timeout_s=3600))
assert client.app.conf.broker_transport_options["visibility_timeout"] == 3600
client.job_reads.ping()
print(list(client.iter_jobs()))
"""
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_worker_app_still_checks_the_environment_when_it_is_built() -> None:
    done = run_python("from evalq.worker.celery_app.app import app")
    assert done.returncode != 0
    assert "EVALQ_VISIBILITY_TIMEOUT_S (10) must exceed" in done.stderr


def test_celery_finds_the_app_the_way_the_documented_commands_name_it(
    redis_server: RedisServer,
) -> None:
    """`celery -A evalq.worker.celery_app.app flower` and `evalq worker` resolve
    evalq.worker.celery_app.app to the built app."""
    code = """
from celery.app.utils import find_app
import evalq.worker.celery_app.app
app = find_app("evalq.worker.celery_app.app")
assert app is evalq.worker.celery_app.app.get_app(), app
app.loader.import_default_modules()  # what a worker does on start: import evalq.tasks.rows
assert {"evalq.prepare_row", "evalq.run_unit", "evalq.aggregate_row"} <= set(app.tasks)
import evalq.tasks.rows
assert evalq.tasks.rows.prepare_row.app is app  # the tasks are on the app the worker runs
print(app.conf.broker_url)
"""
    done = run_python(
        code, {"EVALQ_VISIBILITY_TIMEOUT_S": "3600", "EVALQ_REDIS_URL": redis_server.url}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == redis_server.url
