"""Row ids that collide: refused at submit with every line named; rows are tracked by line
number inside, so even ids that slip through can not hide a row or finish a job early."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import EvalqError
from evalq.core.models import RowResult
from evalq.worker.jobs.watchdog import Watchdog
from evalq.worker.lifecycle.job_end import finalize, finish_row
from evalq.worker.settings import Settings
from evalq.worker.store import Store
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import run_evalq
from tests.support.datasets import load_refusal, png, write_rows
from tests.support.scratch import plant_job


def test_a_rejected_line_and_a_valid_row_with_its_id_are_refused(image_folder: Path) -> None:
    path = write_rows(
        image_folder / "d.jsonl",
        [
            {"id": "a", "prompt": "ok", "image": "a.png"},
            {"id": "b", "prompt": "no image"},  # rejected, but its id still counts
            {"id": "b", "prompt": "valid", "image": "a.png"},
        ],
    )
    assert "id 'b' on lines 2, 3" in load_refusal(path)


def test_a_garbage_line_takes_its_ordinal_as_id(image_folder: Path) -> None:
    path = write_rows(
        image_folder / "d.jsonl", ["{not json", {"id": "1", "prompt": "p", "image": "a.png"}]
    )
    assert "id '1' on lines 1, 2" in load_refusal(path)


def test_number_and_string_ids_and_default_ids_collide(image_folder: Path) -> None:
    row = {"prompt": "p", "image": "a.png"}
    path = write_rows(
        image_folder / "d.jsonl",
        [
            {**row, "id": 1},
            {**row, "id": "1"},
            {**row, "id": "6"},
            {**row, "id": "x"},
            {**row, "id": "x"},
            row,  # line 6: default id "6"
            {**row, "id": "x"},
        ],
    )
    message = load_refusal(path)
    assert "id '1' on lines 1, 2" in message
    assert "id '6' on lines 3, 6" in message
    assert "id 'x' on lines 4, 5, 7" in message
    assert "nothing was submitted" in message


def test_csv_bad_line_and_a_row_with_its_ordinal_as_id(image_folder: Path) -> None:
    """The CSV's first record (line 2, after the header) takes id 1, as a rejected one too."""
    path = image_folder / "d.csv"
    path.write_text("id,prompt,image\n,p,a.png,surplus\n1,p,a.png\n")
    assert "id '1' on lines 2, 3" in load_refusal(path)


def test_default_ids_count_records_not_lines(image_folder: Path) -> None:
    """A CSV record whose quoted cells hold line breaks counts once, and JSONL's blank lines
    do not count: the default id is the record's ordinal in both; rows keep their lines."""
    path = image_folder / "d.csv"
    path.write_text('prompt,image\n"a red\nsquare",a.png\n"two\n\nlines",a.png\n\nthird,a.png\n')
    loaded = load_dataset(path)
    assert [(r.id, r.line) for r in loaded.rows] == [("1", 2), ("2", 4), ("3", 8)]
    row = {"prompt": "p", "image": "a.png"}
    lines = write_rows(image_folder / "d.jsonl", [row, "", {**row, "id": "own"}, "", row])
    loaded = load_dataset(lines)
    assert [(r.id, r.line) for r in loaded.rows] == [("1", 1), ("own", 3), ("3", 5)]


def test_unique_ids_load(image_folder: Path) -> None:
    row = {"prompt": "p", "image": "a.png"}
    loaded = load_dataset(
        write_rows(image_folder / "d.jsonl", [{**row, "id": "b"}, row, {**row, "id": 3}])
    )
    assert [(r.id, r.line) for r in loaded.rows] == [("b", 1), ("2", 2), ("3", 3)]


# ---- the store and the watchdog, against a real Redis ----


def test_rows_sharing_an_id_are_tracked_apart(store: Store) -> None:
    job = plant_job(store, 3, same_id="same")
    first = RowResult(id="same", line=1, prompt="p", status="scored", score=1.0)
    assert store.finish_row(job, first) == 1
    assert store.not_done(job) == ["2", "3"]
    sent: list[tuple[str, str]] = []
    dog = Watchdog(
        store, lambda j, r: sent.append((j, r)), interval_s=1, stall_timeout_s=60, name="t"
    )
    dog.sweep()
    dog.sweep()  # queues empty twice: the rows never started are driven again, not forgotten
    assert sorted(r for _, r in sent) == ["2", "3"]
    assert store.status(job) == "running"
    assert int(store.job_hash(job)["rows_done"]) == 1


def test_a_job_is_never_finished_with_rows_missing(store: Store) -> None:
    job = plant_job(store, 2, same_id="same")
    store.finish_row(job, RowResult(id="same", line=1, prompt="p", status="scored", score=1.0))
    summary = finalize(store, job)
    assert store.status(job) == "running"
    assert summary.status == "running"
    assert summary.rows_done == 1
    assert job in store.active_jobs()
    last = RowResult(id="same", line=2, prompt="p", status="failed", score=None)
    finish_row(store, job, last, rows_total=2)
    assert store.status(job) == "finished"  # the last row's count finalizes it
    assert finalize(store, job).rows_done == 2


def test_counters_of_a_vanished_job_leave_nothing_behind(store: Store) -> None:
    """A call that lands after Redis lost the job (restarted empty) counts its tokens: that must
    not recreate a config-less job hash, which has no TTL and which `wait` would read as a job
    that can't finish instead of a job that is gone."""
    from evalq.core.errors import JobNotFound
    from evalq.worker.store import keys

    job = plant_job(store, 1, same_id="same")
    store.incr(job, judge_calls=1)
    assert store.job_hash(job)["judge_calls"] == "1"
    store.r.flushdb()  # Redis restarted without its append-only file
    store.incr(job, judge_calls=1, prompt_tokens=40)
    assert not store.r.exists(keys.job(job))
    store.r.hset(keys.job(job), "judge_calls", 1)  # a stray hash, as older code could leave
    with pytest.raises(JobNotFound):
        store.job_progress(job)


def test_wait_returns_on_finished_and_raises_when_rows_can_not_finish(store: Store) -> None:
    from evalq.client import Client

    kwargs = store.r.connection_pool.connection_kwargs
    client = Client(Settings(redis_url=f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs['db']}"))
    job = plant_job(store, 2, same_id="same")
    # written by an older worker with rows missing, which no status change allows today
    store.r.hset(f"evalq:job:{job}", "status", "finished")
    assert client.wait(job, timeout_s=30, poll_s=0.05).status == "finished"

    stuck = plant_job(store, 2, same_id="same")
    store.r.delete(f"evalq:job:{stuck}:rows")  # its row list is gone: nothing can drive it
    with pytest.raises(EvalqError, match="can not finish"):
        client.wait(stuck, timeout_s=30, poll_s=0.05)


# ---- end to end: the CLI, a real worker, the fake judge ----


@pytest.mark.integration
def test_cli_refuses_colliding_ids_and_enqueues_nothing(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    row = {"prompt": "p", "image": str(image), "questions": [{"question": "Kq?", "answer": "yes"}]}
    data = write_rows(
        tmp_path / "d.jsonl",
        [
            "{garbage",  # line 1: rejected, id "1"
            {**row, "id": 1},
            {**row, "id": "x", "image": str(tmp_path / "missing.png")},  # rejected at load
            {**row, "id": "x"},
            {**row, "id": "6"},
            row,  # line 6: id "6"
            {**row, "id": "ok"},
        ],
    )
    r = redis_server.client()
    jobs_before = r.zcard("evalq:jobs")
    done = run_evalq(
        worker_env(redis_server.url, fake.url), "run", "gecko-image", str(data), "--wait"
    )
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    for named in ("id '1' on lines 1, 2", "id 'x' on lines 3, 4", "id '6' on lines 5, 6"):
        assert named in message
    assert "Traceback" not in done.stderr
    assert r.zcard("evalq:jobs") == jobs_before  # nothing was stored or enqueued
    assert fake.stats()["requests"] == 0


@pytest.mark.integration
def test_a_job_with_failing_rows_finishes_with_every_row_counted(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    fake.script([{"match": "Fq-refused", "status": 400}, {"match": "Fq-", "reply": "yes"}])

    def row(question: str, **extra: object) -> dict[str, object]:
        return {
            "prompt": "p",
            "image": str(image),
            "questions": [{"question": question, "answer": "yes"}],
            **extra,
        }

    data = write_rows(
        tmp_path / "d.jsonl",
        [
            "{garbage",  # line 1: rejected at load
            row("Fq-a?", id="a"),
            row("Fq-refused?", id="b"),  # the judge refuses: unscored, the row fails
            row("Fq-c?", id="c", image="data:image/png;base64,AAAA"),  # bytes are no PNG
            row("Fq-e?"),  # line 5, id "5"
        ],
    )
    done = run_evalq(
        worker_env(redis_server.url, fake.url), "run", "gecko-image", str(data), "--wait", "--json"
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "finished"
    assert summary["rows_done"] == summary["rows_total"] == 5
    assert (summary["rows_scored"], summary["rows_failed"]) == (2, 3)
    results = run_evalq(
        worker_env(redis_server.url, fake.url), "results", summary["job_id"], "--format", "jsonl"
    )
    lines = [json.loads(line) for line in results.stdout.splitlines()]
    assert [(r["line"], r["id"]) for r in lines] == [
        (1, "1"),
        (2, "a"),
        (3, "b"),
        (4, "c"),
        (5, "5"),
    ]
