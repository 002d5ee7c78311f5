"""``python -m devtools.redis_sizing``: how many bytes of Redis a row and a question take, so an
operator can size `maxmemory` (docker-compose sets it, with noeviction, and refuses writes past
it rather than dropping queued tasks or results).

Measured, not estimated: a private redis-server, the fake Gemini server and one worker from
devtools.local; INFO memory's used_memory is read before and after each step. Three jobs of
shape images run through the client's own submit (Store.create_job, the broker's messages):

- a typical gecko-image job (the judge writes each row's rubric): bytes per row once submitted
  (the stored row waiting for its turn; the broker holds only the turns' window, and its
  messages are measured on their own) and once finished
  (stored row, verdicts, results, cached rubric, Celery's result records);
- two jobs whose rows bring their own questions, few and many: the difference between them,
  over the difference in questions, is the cost of one question (its verdict, its result entry,
  its cached judge reply), and what is left is the cost of a row apart from its questions.

Every figure is read with no worker running: the submitted one holds every row's message, and
no worker's connections count as a job's bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis

from devtools.bench.common import Stack, dataset
from devtools.local import wait_for

FEW_QUESTIONS = 2
MANY_QUESTIONS = 12


@dataclass(frozen=True)
class JobBytes:
    """What one job added to used_memory, and what it holds."""

    rows: int
    questions: int
    submitted: int  # after submit, before any worker ran
    broker: int  # of which the queued messages (MEMORY USAGE of the queue lists)
    messages: int  # how many: the turns' window, not the job's rows
    finished: int  # after every row finished, queues empty
    celery_results: int  # of which Celery's result records, gone after a day


def used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


QUEUES = ("evalq.questions", "evalq.rows")  # worker.queues; the tool reads Redis as it is


def queue_bytes(client: redis.Redis) -> int:
    return sum(
        int(client.memory_usage(queue, samples=0) or 0)  # 0: every element, not a sample
        for queue in QUEUES
    )


def queued(client: redis.Redis) -> int:
    return sum(int(client.llen(queue)) for queue in QUEUES)


def per_question(few: JobBytes, many: JobBytes) -> float:
    """The slope between two finished jobs of as many rows: bytes per extra question."""
    if many.questions == few.questions:
        raise ValueError("the two jobs must differ in their number of questions")
    return (many.finished - few.finished) / (many.questions - few.questions)


def per_row_apart_from_questions(job: JobBytes, question_bytes: float) -> float:
    return (job.finished - question_bytes * job.questions) / job.rows


def maxmemory_for(rows_kept: int, bytes_per_row: float) -> int:
    """Redis memory for `rows_kept` finished rows still within their TTL, plus half again for
    what used_memory leaves out or holds only for a while: the allocator's fragmentation, the
    AOF rewrite buffer, queued messages of running jobs."""
    return int(rows_kept * bytes_per_row * 1.5)


def celery_results_bytes(client: redis.Redis) -> int:
    """Celery's result records (kept result_expires, a day), apart from evalq's own keys."""
    return sum(
        int(client.memory_usage(key, samples=0) or 0)
        for key in client.scan_iter("celery-task-meta-*", count=1000)
    )


def clients(client: redis.Redis) -> int:
    return int(client.info("clients")["connected_clients"])


def measure_job(stack: Stack, path: Path, timeout_s: float) -> JobBytes:
    """One job's bytes, each figure read with no worker connected: a worker's connections (a
    pool as large as its concurrency) take Redis memory of their own, which is not the job's."""
    r = stack.redis.client()
    before = used_memory(r)
    results_before = celery_results_bytes(r)
    job = stack.client.submit("gecko-image", path, use_cache=False).job_id
    submitted = used_memory(r) - before
    connected = clients(r)  # the client's own, the broker's included
    broker = queue_bytes(r)
    messages = queued(r)
    stack.pool.start(concurrency=16)
    summary = stack.client.wait(job, timeout_s=timeout_s, poll_s=0.2)
    wait_for(lambda: queue_bytes(r) == 0, 60, "the queues to drain")
    stack.pool.stop_all()
    wait_for(lambda: clients(r) <= connected, 60, "the worker's connections to close")
    results = stack.client.results(job)
    return JobBytes(
        rows=summary.rows_total,
        questions=sum(len(row.questions) for row in results),
        submitted=submitted,
        broker=broker,
        messages=messages,
        finished=used_memory(r) - before,
        celery_results=celery_results_bytes(r) - results_before,
    )


def measure(work: Path, rows: int, timeout_s: float) -> dict[str, Any]:
    stack = Stack(work, ["--latency-ms", "0"], workers=0, concurrency=16)
    try:
        typical = measure_job(stack, dataset(work / "typical", rows, "typical"), timeout_s)
        few = measure_job(stack, dataset(work / "few", rows, "few", FEW_QUESTIONS), timeout_s)
        many = measure_job(stack, dataset(work / "many", rows, "many", MANY_QUESTIONS), timeout_s)
    finally:
        stack.close()
    question = per_question(few, many)
    row = per_row_apart_from_questions(few, question)
    questions_per_row = typical.questions / typical.rows
    return {
        "rows_per_job": rows,
        "jobs": {"typical": asdict(typical), "few": asdict(few), "many": asdict(many)},
        "typical_submitted_bytes_per_row": round(typical.submitted / typical.rows),
        "typical_stored_bytes_per_waiting_row": round(
            (typical.submitted - typical.broker) / typical.rows
        ),
        "bytes_per_queued_message": round(typical.broker / max(1, typical.messages)),
        "typical_finished_bytes_per_row": round(typical.finished / typical.rows),
        "typical_celery_results_bytes_per_row": round(typical.celery_results / typical.rows),
        "typical_questions_per_row": round(questions_per_row, 2),
        "own_questions_bytes_per_question": round(question),
        "own_questions_bytes_per_row_apart_from_questions": round(row),
        "maxmemory_for_1e6_typical_rows": maxmemory_for(10**6, typical.finished / typical.rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.redis_sizing", description=__doc__)
    parser.add_argument("--rows", type=int, default=300, help="rows per measured job")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="per job")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalq-sizing-") as folder:
        figures = measure(Path(folder), args.rows, args.timeout_s)
    json.dump(figures, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
