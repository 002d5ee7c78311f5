"""evalq's benchmarks, run with ``./scripts/bench`` (``python -m devtools.bench``): quick,
and with a flag scale, archive, fairness or submit; measure reads processes, profile runs
py-spy, and common holds what they share."""
