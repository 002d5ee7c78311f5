"""Celery's plumbing: the app (which starts a worker's watchdog, heartbeat, pace and archiver),
how tasks are sent and routed, and what a worker does with a task's error."""
