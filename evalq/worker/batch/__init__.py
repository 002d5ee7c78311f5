"""Batch mode: a job's judge calls go through a Batch API instead of one by one, with the
metrics unchanged; docs/guides/batch-mode.md says how rounds, the ledger and re-attaching
work."""
