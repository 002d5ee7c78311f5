"""The guard declared on a task (evalq.tasks.guard.guarded), run by a real Celery worker in a
thread on a database of the test Redis: a probe task whose body fails as scripted shows that the
guard wraps each run of the task once, that Redis out of reach is a retry carrying down_since,
and that anything else is a task error, recorded on the job, retried, then given up."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from celery import Celery, Task
from celery.contrib.testing.worker import start_worker

from evalq.tasks.guard import Driver, Reply, TaskRun, guarded
from evalq.worker.celery_app.task_errors import retry_or_give_up
from evalq.worker.runtime import runtime
from evalq.worker.settings import get_settings
from evalq.worker.store import Store, keys
from tests.support.scratch import plant_job

PROBE = "tests.guard_probe"


@dataclass
class Script:
    """What the probe's body raises, run by run (then it answers), and what each run saw."""

    faults: list[Exception]
    seen: list[dict[str, Any]] = field(default_factory=list)


class ProbeRun(TaskRun):
    """A task error is recorded and retried (evalq.worker.celery_app.task_errors), then given up
    as the reply, as a row task's run does."""

    def driver(self) -> Driver:
        def task_error(exc: Exception) -> Reply:
            rt = runtime()
            return {"gave_up": retry_or_give_up(self.task, rt.store, rt.settings, self.job_id, exc)}

        return Driver(gone=self.gone, task_error=task_error)


def probe_app(url: str, script: Script) -> tuple[Celery, Task]:
    """An app of its own on `url` with one task, declared with the guard, whose body follows
    `script`."""
    app = Celery("guard-probe", broker=url, backend=url)
    app.conf.update(broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)

    @app.task(bind=True, name=PROBE, max_retries=None)
    @guarded(ProbeRun)
    def probe(
        run: ProbeRun, job_id: str, down_since: float | None = None, task_errors: int = 0
    ) -> Reply:
        script.seen.append({"retries": run.task.request.retries, **(run.task.request.kwargs or {})})
        if script.faults:
            raise script.faults.pop(0)
        return {"done": True}

    return app, probe


@pytest.fixture
def guard_env(scratch_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The runtime (runtime()) on the scratch database, a task error retried once, quickly."""
    monkeypatch.setenv("EVALQ_REDIS_URL", scratch_url)
    monkeypatch.setenv("EVALQ_TASK_ERROR_RETRIES", "1")
    monkeypatch.setenv("EVALQ_TASK_ERROR_BACKOFF_S", "0.05")
    get_settings.cache_clear()
    runtime.cache_clear()
    yield scratch_url
    get_settings.cache_clear()
    runtime.cache_clear()


def test_a_guarded_task_retries_redis_out_of_reach_then_records_and_gives_up_a_task_error(
    guard_env: str, store: Store
) -> None:
    job = plant_job(store, 1)
    script = Script(
        [
            redis.exceptions.ConnectionError("Redis out of reach (injected)"),
            TypeError("injected fault #1"),
            TypeError("injected fault #2"),
        ]
    )
    app, probe = probe_app(guard_env, script)
    before = time.time()
    with start_worker(app, perform_ping_check=False):
        reply = probe.delay(job).get(timeout=60)
    # One body run per message: the guard wraps the task once, and no run is repeated inside it.
    assert [seen["retries"] for seen in script.seen] == [0, 1, 2]
    first, second, third = script.seen
    assert "down_since" not in first
    assert before <= second["down_since"] <= time.time()  # Redis out of reach: when, first
    assert second.get("task_errors", 0) == 0  # not a task error
    # A task error: recorded, retried with its count; Redis answered, so down_since is dropped.
    assert third["task_errors"] == 1 and "down_since" not in third
    assert reply == {"gave_up": "internal error in guard_probe: TypeError: injected fault #2"}
    assert store.job_hash(job)[keys.TASK_ERRORS] == "2"


def test_the_guard_keeps_the_bodys_signature_for_celery_to_check(guard_env: str) -> None:
    """The body takes its run where the bound task would be; a message is checked against
    the rest of its parameters, as for an unguarded task."""
    _, probe = probe_app(guard_env, Script([]))
    assert probe.__name__ == "probe"
    with pytest.raises(TypeError):
        probe.s("job", 1.0, 0, "one too many").apply_async()
