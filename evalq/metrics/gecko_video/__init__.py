"""Gecko on videos, built on evalq.metrics.gecko. Prompts: prompts (typed-keyword rubric,
multiple-choice validators). Parser: parsing (reply schemas, rubric replies, letters). Scorer:
metric (the video variant of GeckoMetric: plan, run_unit, aggregate); the judge setup a job
reports: setup."""
