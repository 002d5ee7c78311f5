"""The evalq runtime, one folder a concept, each importing only those below it: celery_app/
(Celery's plumbing), jobs/ (a job's control), batch/, lifecycle/ (a row's life), runtime,
dispatch/ (how rows reach workers), judges/ (one judge call's layers), store/ (Redis), settings,
archive/ (the system of record)."""
