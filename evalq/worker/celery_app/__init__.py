"""Celery's plumbing: the app, how tasks are sent and routed, what a worker does with a task's error."""
