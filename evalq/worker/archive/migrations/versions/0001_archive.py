"""The first archive: jobs, their rows and verdicts, and the question sets rows were scored on.

Revision ID: 0001
Revises:
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "archive_jobs",
        sa.Column("job_id", sa.String(12), primary_key=True),
        sa.Column("name", sa.Text()),
        sa.Column("metric", sa.String(64), nullable=False),
        sa.Column("dataset", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float()),
        sa.Column("archived_at", sa.Float(), nullable=False),
        sa.Column("rows_total", sa.Integer(), nullable=False),
        sa.Column("rows_done", sa.Integer(), nullable=False),
        sa.Column("rows_scored", sa.Integer(), nullable=False),
        sa.Column("rows_partial", sa.Integer(), nullable=False),
        sa.Column("rows_failed", sa.Integer(), nullable=False),
        sa.Column("mean_score", sa.Float()),
        sa.Column("cost_usd", sa.Float()),
        sa.Column("judge_model", sa.Text(), nullable=False),
        sa.Column("simulated", sa.Boolean(), nullable=False),
        sa.Column("question_set", sa.String(64)),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("batches", sa.Text()),
        sa.Column("batch_bound", sa.Integer()),
        sa.Column("written_by", sa.Text(), nullable=False),
        sa.Column("evalq_version", sa.String(32), nullable=False),
    )
    op.create_index("archive_jobs_created_at", "archive_jobs", ["created_at"])
    op.create_index("archive_jobs_metric", "archive_jobs", ["metric"])
    op.create_index("archive_jobs_name", "archive_jobs", ["name"])
    op.create_table(
        "archive_question_sets",
        sa.Column("fingerprint", sa.String(64), primary_key=True),
        sa.Column("questions", sa.Text(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
    )
    op.create_table(
        "archive_rows",
        sa.Column(
            "job_id",
            sa.String(12),
            sa.ForeignKey("archive_jobs.job_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("row_key", sa.String(400), primary_key=True),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("row_id", sa.Text(), nullable=False),
        sa.Column("candidate", sa.Text()),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16)),
        sa.Column("score", sa.Float()),
        sa.Column("reason", sa.String(32)),
        sa.Column(
            "question_set", sa.String(64), sa.ForeignKey("archive_question_sets.fingerprint")
        ),
        sa.Column("input", sa.Text()),
        sa.Column("result", sa.Text()),
    )
    op.create_index("archive_rows_question_set", "archive_rows", ["question_set"])
    op.create_table(
        "archive_verdicts",
        sa.Column("job_id", sa.String(12), primary_key=True),
        sa.Column("row_key", sa.String(400), primary_key=True),
        sa.Column("unit", sa.Integer(), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32)),
        sa.Column("judge_model", sa.Text()),
        sa.Column("model_version", sa.Text()),
        sa.Column("result", sa.Integer()),
        sa.Column("verdict", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id", "row_key"],
            ["archive_rows.job_id", "archive_rows.row_key"],
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("archive_verdicts")
    op.drop_table("archive_rows")
    op.drop_table("archive_question_sets")
    op.drop_table("archive_jobs")
