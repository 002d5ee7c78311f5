"""A row's life, online and in batch mode alike, as plain functions that return an outcome and know
nothing of Celery: evalq.tasks.rows turns an outcome into a chord, a retry or a return value, and
evalq.worker.batch.sweep into a row waiting, held or done."""
