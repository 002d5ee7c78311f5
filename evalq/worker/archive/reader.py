"""Reading jobs back from the archive: one job whole (everything `status`, `results`, `report`
and `compare` print), the history list with its filters, the question sets a job asked, and
many jobs' rows at once for analysis."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evalq.core.models import JobConfig, JobSummary, Question, RowInput, RowResult
from evalq.worker.archive import schema
from evalq.worker.archive.filters import JobFilter


@dataclass(frozen=True)
class StoredRow:
    key: str
    input_json: str | None
    result_json: str | None


@dataclass
class ArchivedJob:
    """One archived job, read once; its parts parsed when first asked for."""

    config: JobConfig
    summary_json: str
    status: str
    archived_at: float
    written_by: str
    rows: list[StoredRow]
    batches_json: str | None = None
    batch_bound: int | None = None

    @cached_property
    def summary(self) -> JobSummary:
        return JobSummary.model_validate_json(self.summary_json)

    @cached_property
    def results(self) -> list[RowResult]:
        return [RowResult.model_validate_json(r.result_json) for r in self.rows if r.result_json]

    @cached_property
    def inputs(self) -> list[RowInput]:
        return [RowInput.model_validate_json(r.input_json) for r in self.rows if r.input_json]

    @cached_property
    def row_keys(self) -> list[str]:
        return [r.key for r in self.rows]


def load_job(engine: Engine, job_id: str) -> ArchivedJob | None:
    with engine.connect() as connection:
        job = connection.execute(
            sa.select(schema.jobs).where(schema.jobs.c.job_id == job_id)
        ).first()
        if job is None:
            return None
        stored = connection.execute(
            sa.select(schema.rows.c.row_key, schema.rows.c.input, schema.rows.c.result)
            .where(schema.rows.c.job_id == job_id)
            .order_by(schema.rows.c.line, schema.rows.c.row_key)
        ).all()
    return ArchivedJob(
        config=JobConfig.model_validate_json(job.config),
        summary_json=job.summary,
        status=job.status,
        archived_at=job.archived_at,
        written_by=job.written_by,
        rows=[StoredRow(r.row_key, r.input, r.result) for r in stored],
        batches_json=job.batches,
        batch_bound=job.batch_bound,
    )


def list_summaries(engine: Engine, which: JobFilter) -> list[JobSummary]:
    """The summaries of the archived jobs `which` selects, the newest first."""
    statement = (
        sa.select(schema.jobs.c.summary)
        .where(*which.where(schema.jobs))
        .order_by(schema.jobs.c.created_at.desc(), schema.jobs.c.job_id)
    )
    if which.limit is not None:
        statement = statement.limit(which.limit)
    with engine.connect() as connection:
        return [JobSummary.model_validate_json(text) for (text,) in connection.execute(statement)]


def job_ids_with_prefix(engine: Engine, prefix: str, limit: int = 20) -> list[str]:
    statement = (
        sa.select(schema.jobs.c.job_id)
        .where(schema.jobs.c.job_id.startswith(prefix, autoescape=True))
        .order_by(schema.jobs.c.created_at.desc())
        .limit(limit)
    )
    with engine.connect() as connection:
        return [job_id for (job_id,) in connection.execute(statement)]


def question_sets(engine: Engine, job_id: str) -> dict[str, list[Question]]:
    """Prompt -> the questions the job's rows with that prompt were scored on."""
    statement = (
        sa.select(schema.rows.c.prompt, schema.question_sets.c.questions)
        .join(
            schema.question_sets,
            schema.question_sets.c.fingerprint == schema.rows.c.question_set,
        )
        .where(schema.rows.c.job_id == job_id)
        .order_by(schema.rows.c.line)
    )
    out: dict[str, list[Question]] = {}
    with engine.connect() as connection:
        for prompt, text in connection.execute(statement):
            out.setdefault(prompt, [Question.model_validate(q) for q in json.loads(text)])
    return out


def iter_rows(engine: Engine, which: JobFilter) -> Iterator[tuple[JobSummary, RowResult]]:
    """Every scored-or-failed row of the jobs `which` selects, with its job's summary, the
    newest job first and each job's rows in dataset order."""
    for summary in list_summaries(engine, which):
        statement = (
            sa.select(schema.rows.c.result)
            .where(schema.rows.c.job_id == summary.job_id, schema.rows.c.result.is_not(None))
            .order_by(schema.rows.c.line, schema.rows.c.row_key)
        )
        with engine.connect() as connection:
            for (text,) in connection.execute(statement):
                yield summary, RowResult.model_validate_json(text)
