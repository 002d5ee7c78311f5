"""Writing a job's record: one transaction that replaces whatever the archive held of the job,
so a job written twice is one record, and a writer killed half way leaves the previous record
(or none), never a part."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from evalq.core.models import JobSummary
from evalq.worker.archive import schema
from evalq.worker.archive.engine import FILE_ID, writing
from evalq.worker.archive.record import ArchivedRow, JobRecord

INSERT_CHUNK = 1000  # rows per executemany


def evalq_version() -> str:
    try:
        return version("evalq")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Written:
    """What a write left to check it by (evalq.worker.archive.confirm): the record's archived_at,
    and for SQLite the (device, inode) of the file the writing connection had open."""

    archived_at: float
    file: tuple[int, int] | None


def write_record(engine: Engine, record: JobRecord) -> Written:
    summary = JobSummary.model_validate_json(record.summary_json)
    job_id = record.config.job_id
    archived_at = time.time()
    with writing(engine) as connection:
        opened = connection.info.get(FILE_ID)
        replace_job(
            connection,
            _job_values(record, summary, archived_at),
            record.question_sets,
            (_row_values(job_id, row) for row in record.rows),
            (
                _verdict_values(job_id, row.key, unit, text)
                for row in record.rows
                for unit, text in row.verdicts
            ),
        )
    return Written(archived_at=archived_at, file=opened)


def replace_job(
    connection: Connection,
    job: dict[str, Any],
    question_sets: dict[str, str],
    rows: Iterable[dict[str, Any]],
    verdicts: Iterable[dict[str, Any]],
) -> None:
    """Put one job's record (its columns' values) in place of whatever the archive held of it,
    in the caller's transaction: a write and a copy (evalq.worker.archive.copy) alike."""
    job_id = job["job_id"]
    _lock_job(connection, job_id)
    for table in (schema.verdicts, schema.rows, schema.jobs):
        connection.execute(sa.delete(table).where(table.c.job_id == job_id))
    connection.execute(sa.insert(schema.jobs), [job])
    _insert_question_sets(connection, question_sets)
    _insert_many(connection, schema.rows, rows)
    _insert_many(connection, schema.verdicts, verdicts)


def _lock_job(connection: Connection, job_id: str) -> None:
    """PostgreSQL writers of one job queue on an advisory lock for it; SQLite's queue on the
    file's lock (engine opens every write with BEGIN IMMEDIATE)."""
    if connection.dialect.name == "postgresql":
        key = job_lock_key(job_id)
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def job_lock_key(job_id: str) -> int:
    """The PostgreSQL advisory lock a writer of the job holds for its transaction."""
    return int.from_bytes(hashlib.sha256(job_id.encode()).digest()[:8], "big", signed=True)


def _insert_many(connection: Connection, table: sa.Table, values: Iterable[dict[str, Any]]) -> None:
    batch: list[dict[str, Any]] = []
    for item in values:
        batch.append(item)
        if len(batch) >= INSERT_CHUNK:
            connection.execute(sa.insert(table), batch)
            batch = []
    if batch:
        connection.execute(sa.insert(table), batch)


def _insert_question_sets(connection: Connection, sets: dict[str, str]) -> None:
    """Question sets are shared between jobs (a rerun on frozen questions asks the same ones),
    so one already there stays as it is."""
    if not sets:
        return
    values = [
        {"fingerprint": fingerprint, "questions": text, "count": len(json.loads(text))}
        for fingerprint, text in sets.items()
    ]
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(schema.question_sets).on_conflict_do_nothing(
        index_elements=["fingerprint"]
    )
    for start in range(0, len(values), INSERT_CHUNK):
        connection.execute(statement, values[start : start + INSERT_CHUNK])


def _job_values(record: JobRecord, summary: JobSummary, archived_at: float) -> dict[str, Any]:
    config = record.config
    return {
        "job_id": config.job_id,
        "name": config.name,
        "owner": config.owner,
        "metric": config.metric,
        "dataset": config.dataset,
        "status": record.status,
        "mode": config.mode,
        "created_at": config.created_at,
        "ended_at": record.ended_at,
        "archived_at": archived_at,
        "rows_total": summary.rows_total,
        "rows_done": summary.rows_done,
        "rows_scored": summary.rows_scored,
        "rows_partial": summary.rows_partial,
        "rows_failed": summary.rows_failed,
        "mean_score": summary.mean_score,
        "cost_usd": summary.cost_usd,
        "judge_model": summary.judge_model,
        "simulated": summary.simulated,
        "question_set": summary.question_set,
        "config": config.model_dump_json(),
        "summary": record.summary_json,
        "batches": record.batches_json,
        "batch_bound": record.batch_bound,
        "written_by": record.written_by,
        "evalq_version": evalq_version(),
    }


def _row_values(job_id: str, row: ArchivedRow) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(row.result_json) if row.result_json else {}
    return {
        "job_id": job_id,
        "row_key": row.key,
        "line": row.line,
        "row_id": row.row_id,
        "candidate": row.candidate,
        "prompt": row.prompt,
        "status": result.get("status"),
        "score": result.get("score"),
        "reason": result.get("reason"),
        "question_set": row.question_set,
        "input": row.input_json,
        "result": row.result_json,
    }


def _verdict_values(job_id: str, key: str, unit: int, text: str) -> dict[str, Any]:
    verdict: dict[str, Any] = json.loads(text)
    return {
        "job_id": job_id,
        "row_key": key,
        "unit": unit,
        "status": verdict.get("status") or "unknown",
        "reason": verdict.get("reason"),
        "judge_model": verdict.get("judge_model"),
        "model_version": verdict.get("model_version"),
        "result": verdict.get("result"),
        "verdict": text,
    }


def delete_jobs(engine: Engine, job_ids: Sequence[str]) -> None:
    """Remove jobs from the archive (tests, and people pruning history by hand)."""
    with writing(engine) as connection:
        for table in (schema.verdicts, schema.rows, schema.jobs):
            connection.execute(sa.delete(table).where(table.c.job_id.in_(list(job_ids))))
