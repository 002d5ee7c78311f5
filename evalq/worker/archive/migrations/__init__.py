"""The archive's schema migrations (Alembic), applied by evalq.worker.archive.engine.open_archive."""
