"""Comparing candidates scored on the same prompts: rows aligned across jobs (or across the
candidates of one job), paired statistics per pair and per tag, and a leaderboard. Pure domain
code: it reads RowResults and never touches Redis or the judge."""
