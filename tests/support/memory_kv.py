"""The metric context's small cache (evalq.core.kv.KeyValue: Redis on workers) kept in a dict,
for unit tests of metric logic that run without Redis.

Entries never expire here: the tests that use it cover one run, not a rubric's lifetime. A test
may read or seed `data` directly, e.g. to plant a cached rubric."""

from __future__ import annotations


class MemoryKV:
    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.data.get(key)

    def set(self, key: str, value: str, ttl_s: int) -> None:
        self.data[key] = value
