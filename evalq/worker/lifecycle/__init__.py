"""A row's life, online and in batch mode alike, as plain functions that return an outcome
(evalq.worker.lifecycle.outcomes) and know nothing of Celery: evalq.tasks.rows turns an outcome into
a chord, a retry or a return value, and evalq.worker.batch.sweep into a row waiting, held or done.

`planning` (the stored plan, or the metric's, size-checked and kept first-write-wins),
`inline_units` (what prepare_row answers from the call cache), `units` (one unit's call and
its one write), `judge_errors` (the one judge-error policy: pause, countdown or give up),
`ending` (failing a row; scoring and counting it), `job_end` (a row counted toward its job, the
summary the last one writes), `online` (the three row tasks' bodies).
"""
