"""The archive: the system of record for ended jobs, in a SQL database through SQLAlchemy
(SQLite by default, PostgreSQL for a team), its schema moved forward by Alembic migrations.

Redis is the working store and expires; every job that ends is written here once, by the worker
that ended it (or a watchdog sweep: evalq.worker.jobs.archiving), and every reading command falls
back to it when Redis no longer has the job (evalq.client.reads). The archive owns every table, as
the Store owns every Redis key:

- archive: the Archive facade every caller uses (it loads SQLAlchemy on first use);
- place: where the archive is (the URL, shown without a password, its identity), light;
- errors: what a command says and the archiver retries on; filters: which jobs a listing selects;
- schema: the tables; migrations/: their revisions;
- engine: opening it (schema created or upgraded once per process), errors as one line;
- record: a job as written; writer: one transaction per job, idempotent;
- reader: a job read back, the history with filters, question sets, rows for analysis;
- copy: every job of one archive copied into another (`evalq archive --from --to`);
- mixed_archives: the warning when the workers of one Redis write to different archives.
"""
