"""Alembic's environment for the archive: it migrates on the connection evalq hands it
(evalq.worker.archive.engine), never on one of its own, inside the caller's transaction."""

from __future__ import annotations

from alembic import context

from evalq.worker.archive.engine import VERSION_TABLE
from evalq.worker.archive.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
