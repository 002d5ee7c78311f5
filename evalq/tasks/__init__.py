"""Celery tasks: thin wrappers that load by id, call domain logic with a judge, store results."""
