"""The small shared cache a metric may use (Redis on workers, a dict in tests): its own module
so that the metric interface and the dry-run planner can both name it without importing each
other."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class KeyValue(Protocol):
    """A small shared cache (Redis on workers) for things reused across rows and jobs. Entries
    are named by a digest of what they were made from, never by a storage key: where they live
    is the runtime's business (on workers, evalq.worker.store.keys names them)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str, ttl_s: int) -> None: ...


@runtime_checkable
class ClaimingKeyValue(KeyValue, Protocol):
    """A shared cache whose entries one writer claims, so work shared by several tasks (a
    prompt's rubric, for each of its candidates) is paid for once while the others wait."""

    def claim(self, key: str, ttl_s: int) -> bool:
        """Whether this caller may write the entry now (held for ttl_s at most)."""
        ...

    def release(self, key: str) -> None: ...
