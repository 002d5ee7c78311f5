"""The metric context's small cache in a dict, for unit tests of metric logic without Redis:
evalq.testing's, which a metric from another package tests with too."""

from __future__ import annotations

from evalq.testing import MemoryKV

__all__ = ["MemoryKV"]
