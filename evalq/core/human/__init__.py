"""Agreement with human raters: a dataset's labels read at the level the metric judges, the
judge's agreement with them in a job's summary, and judge setups ranked by it (evalq calibrate)."""
