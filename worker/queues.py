"""Queue and task names, apart from the Celery app: the watchdog and the heartbeat need the
names, and the app starts them, so holding the names in the app would make an import cycle."""

from __future__ import annotations

QUEUE_QUESTIONS = "evalq.questions"
QUEUE_ROWS = "evalq.rows"
PREPARE_ROW = "evalq.prepare_row"  # the task that starts a row; sent by producer and watchdog
