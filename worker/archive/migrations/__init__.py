"""The archive's schema migrations (Alembic), applied by worker.archive.engine.open_archive."""
