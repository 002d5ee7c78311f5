"""Where evalq's tasks wait: the two queues, and the one rule that routes a task to its queue,
which the Celery app, the producer and the watchdog all follow."""

from __future__ import annotations

QUEUE_QUESTIONS = "evalq.questions"
QUEUE_ROWS = "evalq.rows"
PREPARE_ROW = "evalq.prepare_row"  # the task that starts a row; sent by producer and watchdog


def queue_for(task_name: str) -> str:
    """The one routing rule: a row's first task waits in the rows queue, everything else (unit
    calls, callbacks, batch steps) in the questions queue, which workers drain first."""
    return QUEUE_ROWS if task_name == PREPARE_ROW else QUEUE_QUESTIONS
