"""The archive's tables, in SQLAlchemy Core, at the newest migration; a change here comes with
a migration. JSON columns hold the text evalq wrote to Redis byte for byte, so a job reads back
as it printed from Redis; the plain columns beside them are for SQL."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

jobs = Table(
    "archive_jobs",
    metadata,
    Column("job_id", String(12), primary_key=True),
    Column("name", Text),
    Column("owner", Text),  # who submitted it (JobConfig.owner); NULL before owners were kept
    Column("metric", String(64), nullable=False),
    Column("dataset", Text, nullable=False),
    Column("status", String(16), nullable=False),  # finished or cancelled
    Column("mode", String(16), nullable=False),  # online or batch
    Column("created_at", Float, nullable=False),  # epoch s
    Column("ended_at", Float),
    Column("archived_at", Float, nullable=False),
    Column("rows_total", Integer, nullable=False),
    Column("rows_done", Integer, nullable=False),
    Column("rows_scored", Integer, nullable=False),
    Column("rows_partial", Integer, nullable=False),
    Column("rows_failed", Integer, nullable=False),
    Column("mean_score", Float),
    Column("cost_usd", Float),
    Column("judge_model", Text, nullable=False),
    Column("simulated", Boolean, nullable=False),
    Column("question_set", String(64)),
    Column("config", Text, nullable=False),  # JobConfig JSON
    Column("summary", Text, nullable=False),  # JobSummary JSON
    Column("batches", Text),  # batch mode: the ledger's records, a JSON list
    Column("batch_bound", Integer),
    Column("written_by", Text, nullable=False),  # the worker or host that wrote it
    Column("evalq_version", String(32), nullable=False),
)
Index("archive_jobs_created_at", jobs.c.created_at)
Index("archive_jobs_metric", jobs.c.metric)
Index("archive_jobs_name", jobs.c.name)
Index("archive_jobs_owner", jobs.c.owner)

question_sets = Table(
    "archive_question_sets",
    metadata,
    Column("fingerprint", String(64), primary_key=True),
    Column("questions", Text, nullable=False),  # a JSON list of Question
    Column("count", Integer, nullable=False),
)

rows = Table(
    "archive_rows",
    metadata,
    Column(
        "job_id",
        String(12),
        ForeignKey("archive_jobs.job_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("row_key", String(400), primary_key=True),  # the line, or line/candidate
    Column("line", Integer, nullable=False),
    Column("row_id", Text, nullable=False),
    Column("candidate", Text),
    Column("prompt", Text, nullable=False),
    Column("status", String(16)),  # scored, partial, failed; NULL: never run (cancelled)
    Column("score", Float),
    Column("reason", String(32)),
    Column("question_set", String(64), ForeignKey("archive_question_sets.fingerprint")),
    Column("input", Text),  # RowInput JSON; NULL for a line refused at submit
    Column("result", Text),  # RowResult JSON; NULL for a row never run
)
Index("archive_rows_question_set", rows.c.question_set)

verdicts = Table(
    "archive_verdicts",
    metadata,
    Column("job_id", String(12), primary_key=True),
    Column("row_key", String(400), primary_key=True),
    Column("unit", Integer, primary_key=True),
    Column("status", String(16), nullable=False),
    Column("reason", String(32)),
    Column("judge_model", Text),
    Column("model_version", Text),
    Column("result", Integer),
    Column("verdict", Text, nullable=False),  # Verdict JSON
    ForeignKeyConstraint(
        ["job_id", "row_key"],
        ["archive_rows.job_id", "archive_rows.row_key"],
        ondelete="CASCADE",
    ),
)
