"""Pairwise preference: prompt templates and reply parsing are in evalq.metrics.ratings; plan
and aggregate here (metric)."""
