"""One module a schema revision, oldest first (Alembic's revision chain)."""
