"""``python -m devtools.redis_sizing``: how many bytes of Redis a row and a question take,
measured on a private stack, so an operator can size `maxmemory`."""

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
CONCURRENCY = 16
QUEUES = (
    "evalq.questions",
    "evalq.rows",
)  # evalq.worker.dispatch.queues; the tool reads Redis as it is
UNACKED = "unacked"  # kombu's hash of the messages delivered and not yet acknowledged


@dataclass(frozen=True)
class Waiting:
    """What a job submitted with no worker running added: its rows waiting for their turn."""

    rows: int
    submitted: int  # bytes, after submit
    broker: int  # of which the queued messages (MEMORY USAGE of the queue lists)
    messages: int  # how many: the turns' window, not the job's rows


@dataclass(frozen=True)
class JobBytes:
    """What one job added once finished, and what it holds."""

    rows: int
    questions: int
    finished: int  # every row finished, every message consumed and acknowledged
    celery_results: int  # of which Celery's result records, gone after a day


def key_bytes(client: redis.Redis, keys: list[Any]) -> int:
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.memory_usage(key, samples=0)  # 0: every element, not a sample
    return sum(int(size or 0) for size in pipe.execute())  # None: gone since the scan


def stored_bytes(client: redis.Redis, match: str | None = None) -> int:
    """The MEMORY USAGE of every key (or of those matching `match`), summed."""
    total, batch = 0, []
    for key in client.scan_iter(match=match, count=1000):
        batch.append(key)
        if len(batch) == 1000:
            total, batch = total + key_bytes(client, batch), []
    return total + key_bytes(client, batch)


def celery_results_bytes(client: redis.Redis) -> int:
    """Celery's result records (kept result_expires, a day), apart from evalq's own keys."""
    return stored_bytes(client, "celery-task-meta-*")


def queue_bytes(client: redis.Redis) -> int:
    return key_bytes(client, list(QUEUES))


def queued(client: redis.Redis) -> int:
    return sum(int(client.llen(queue)) for queue in QUEUES)


def settled(client: redis.Redis) -> bool:
    """Nothing queued and nothing delivered but unacknowledged: every task has ended and
    stored its result (tasks ack late)."""
    return queued(client) == 0 and int(client.hlen(UNACKED)) == 0


def per_question(few: JobBytes, many: JobBytes) -> float:
    """The slope between two finished jobs of as many rows: bytes per extra question."""
    if many.questions == few.questions:
        raise ValueError("the two jobs must differ in their number of questions")
    return (many.finished - few.finished) / (many.questions - few.questions)


def per_row_apart_from_questions(job: JobBytes, question_bytes: float) -> float:
    return (job.finished - question_bytes * job.questions) / job.rows


def maxmemory_for(rows_kept: int, bytes_per_row: float) -> int:
    """Redis memory for `rows_kept` finished rows still within their TTL, plus half again for
    what the keys' own bytes leave out or Redis holds only for a while: the allocator's
    fragmentation, the AOF rewrite buffer, client connections, queued messages of running
    jobs."""
    return int(rows_kept * bytes_per_row * 1.5)


def submit(stack: Stack, path: Path) -> str:
    return stack.client.submit("gecko-image", path, use_cache=False).job_id


def finished(
    stack: Stack, job: str, before: int, results_before: int, timeout_s: float
) -> JobBytes:
    """A job run to its end by the running worker, read once nothing of it is in flight."""
    r = stack.redis.client()
    summary = stack.client.wait(job, timeout_s=timeout_s, poll_s=0.2)
    wait_for(lambda: settled(r), 60, "every message consumed and acknowledged")
    results = stack.client.results(job)
    return JobBytes(
        rows=summary.rows_total,
        questions=sum(len(row.questions) for row in results),
        finished=stored_bytes(r) - before,
        celery_results=celery_results_bytes(r) - results_before,
    )


def measure_job(stack: Stack, path: Path, timeout_s: float) -> JobBytes:
    r = stack.redis.client()
    before, results_before = stored_bytes(r), celery_results_bytes(r)
    return finished(stack, submit(stack, path), before, results_before, timeout_s)


def measure(work: Path, rows: int, timeout_s: float) -> dict[str, Any]:
    stack = Stack(work, ["--latency-ms", "0"], workers=0, concurrency=CONCURRENCY)
    try:
        r = stack.redis.client()
        before, results_before = stored_bytes(r), celery_results_bytes(r)
        job = submit(stack, dataset(work / "typical", rows, "typical"))
        waiting = Waiting(
            rows=stack.client.summary(job).rows_total,
            submitted=stored_bytes(r) - before,
            broker=queue_bytes(r),
            messages=queued(r),
        )
        stack.pool.start(concurrency=CONCURRENCY)
        typical = finished(stack, job, before, results_before, timeout_s)
        few = measure_job(stack, dataset(work / "few", rows, "few", FEW_QUESTIONS), timeout_s)
        many = measure_job(stack, dataset(work / "many", rows, "many", MANY_QUESTIONS), timeout_s)
    finally:
        stack.close()
    question = per_question(few, many)
    row = per_row_apart_from_questions(few, question)
    return {
        "rows_per_job": rows,
        "waiting": asdict(waiting),
        "jobs": {"typical": asdict(typical), "few": asdict(few), "many": asdict(many)},
        "typical_submitted_bytes_per_row": round(waiting.submitted / waiting.rows),
        "typical_stored_bytes_per_waiting_row": round(
            (waiting.submitted - waiting.broker) / waiting.rows
        ),
        "bytes_per_queued_message": round(waiting.broker / max(1, waiting.messages)),
        "typical_finished_bytes_per_row": round(typical.finished / typical.rows),
        "typical_celery_results_bytes_per_row": round(typical.celery_results / typical.rows),
        "typical_questions_per_row": round(typical.questions / typical.rows, 2),
        "own_questions_bytes_per_question": round(question),
        "own_questions_bytes_per_row_apart_from_questions": round(row),
        "maxmemory_for_1e6_typical_rows": maxmemory_for(10**6, typical.finished / typical.rows),
    }


HELP = """``python -m devtools.redis_sizing``: how many bytes of Redis a row and a question take, so an
operator can size `maxmemory` (docker-compose sets it, with noeviction, and refuses writes past
it rather than dropping queued tasks or results).

Measured, not estimated: a private redis-server, the fake Gemini server and one worker from
devtools.local. Three jobs of shape images run through the client's own submit
(Store.create_job, the broker's messages):

- a typical gecko-image job (the judge writes each row's rubric): bytes per row once submitted,
  read before the worker starts (the stored row waiting for its turn; the broker holds only the
  turns' window, and its messages are measured on their own), and once finished (stored row,
  verdicts, results, cached rubric, Celery's result records);
- two jobs whose rows bring their own questions, few and many: the difference between them,
  over the difference in questions, is the cost of one question (its verdict, its result entry,
  its cached judge reply), and what is left is the cost of a row apart from its questions.

A figure is what the job's keys add: every key's MEMORY USAGE summed, before and after. Redis's
used_memory counts more than rows: a fresh redis-server's first submit and first worker add
about a megabyte that no later job adds again (over 300 rows, a quarter of a finished row's
bytes and most of a waiting one's), and connections' buffers come and go with whatever was
last read or sent. So the worker stays connected from job to job, and a finished job is read
once its queues are empty and no message is unacknowledged (tasks ack late, after their results
are stored).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.redis_sizing", description=HELP)
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
