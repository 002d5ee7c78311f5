"""Batch mode: a job's judge calls go through Gemini's Batch API instead of one by one.

The metrics run unchanged. A sweep (evalq.worker.batch.sweep) drives every row that is not done with
judges whose replies come from the batch results stored so far (evalq.worker.batch.judge): a call
whose reply is there resolves, one that is not is collected for the next batch and leaves its
row waiting. So a metric's stages (Gecko's rubric, then its questions; a response, then its
judging) become rounds of batches by themselves, and verdicts, rows and the summary are written
by the same code as online. The ledger (evalq.worker.batch.ledger) records every batch in Redis, so a
restarted worker re-attaches to batches in flight instead of sending them again.
"""
