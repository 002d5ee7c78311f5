"""A worker SIGKILLed during an adaptive job (`--samples auto`): every row once, every unit's
samples counted once, and the same verdicts as a calm run, since each sample's answer is fixed
by its seed; the archived job carries each verdict's samples and certainty."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from devtools.local import WorkerPool, wait_for
from evalq.worker.archive.archive import Archive
from tests.support.archive import wait_archived
from tests.support.noisy_rows import noisy_pointwise_rows
from tests.support.stack import stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration
ROWS_EASY, ROWS_SPLIT = 30, 12
QA = {"template": "question_answering_quality", "samples": "auto"}


def _at_work(pool: WorkerPool, proc: subprocess.Popen[bytes]) -> bool:
    """Alive, ready and has finished a task since: a victim killed in the middle of its work."""
    if proc.poll() is not None:
        return False
    log = pool.log_of(proc)
    ready = log.rfind("ready.")
    return ready >= 0 and "succeeded in" in log[ready:]


def test_a_killed_worker_costs_an_adaptive_job_no_sample_twice(tmp_path: Path) -> None:
    data = noisy_pointwise_rows(tmp_path, ROWS_EASY, ROWS_SPLIT)
    rows_total = ROWS_EASY + ROWS_SPLIT
    archive = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    with stack(
        tmp_path,
        "--latency-ms",
        "60",
        workers=2,
        EVALQ_STALL_TIMEOUT_S="4",
        EVALQ_WATCHDOG_INTERVAL_S="1",
        EVALQ_ARCHIVE_URL=archive,
    ) as s:
        client = s.client()
        calm_job = client.submit("pointwise", data, options=QA, use_cache=False).job_id
        calm = client.wait(calm_job, timeout_s=300)
        assert calm.rows_done == rows_total
        calm_rows = {r.id: r for r in client.results(calm_job)}

        job = client.submit("pointwise", data, options=QA, use_cache=False).job_id
        wait_for(
            lambda: int(store_of(client).job_hash(job).get("rows_done", 0)) >= rows_total // 4,
            300,
            "a quarter of the rows",
        )
        wait_for(lambda: any(_at_work(s.pool, p) for p in list(s.pool.procs)), 300, "a worker")
        victim = next(p for p in list(s.pool.procs) if _at_work(s.pool, p))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        s.pool.start(name=f"r1-{os.getpid()}")
        stormy = client.wait(job, timeout_s=300)
        results = client.results(job)
        wait_archived(s.redis_client(), job)
    assert len(results) == len({r.id for r in results}) == rows_total  # every row once
    assert stormy.rows_done == rows_total
    samples = {r.id: [[x.answer for x in rep.samples] for rep in r.repeats] for r in results}
    assert samples == {
        rid: [[x.answer for x in rep.samples] for rep in r.repeats] for rid, r in calm_rows.items()
    }
    verdicts = {r.id: [(rep.verdict, rep.decided) for rep in r.repeats] for r in results}
    assert verdicts == {
        rid: [(rep.verdict, rep.decided) for rep in r.repeats] for rid, r in calm_rows.items()
    }
    # Counted once: the job's calls are its samples, whatever the killed worker had asked.
    assert stormy.judge_calls == sum(len(s) for each in samples.values() for s in each)
    assert stormy.judge_calls == calm.judge_calls
    archived = Archive.at(archive)
    assert archived is not None
    stored = archived.job(job)
    assert stored is not None
    back = {r.id: r.repeats for r in stored.results}
    assert back == {r.id: r.repeats for r in results}
    assert any(not rep.decided or len(rep.samples) > 3 for reps in back.values() for rep in reps)
