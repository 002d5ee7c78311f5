"""evalq's benchmarks, run with ``./scripts/bench`` (``python -m devtools.bench``): the quick
one (quick: latency bound, quota adherence, overhead, cached rerun) and, with ``--scale``, the
scaling one (scale), reading processes with measure and profiling workers with profile. What
both share sits in common."""
