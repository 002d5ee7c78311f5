"""The owner of each archived job: who submitted it (its Redis user, else its OS user).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL for jobs archived before owners were recorded (their configs name none either).
    with op.batch_alter_table("archive_jobs") as batch:
        batch.add_column(sa.Column("owner", sa.Text()))
    op.create_index("archive_jobs_owner", "archive_jobs", ["owner"])


def downgrade() -> None:
    op.drop_index("archive_jobs_owner", table_name="archive_jobs")
    with op.batch_alter_table("archive_jobs") as batch:
        batch.drop_column("owner")
