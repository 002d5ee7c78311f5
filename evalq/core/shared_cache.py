"""The cache a metric shares across rows and jobs (Redis on workers, a dict in tests), and work
several tasks need written once through it: the first to claim an entry writes it, the others
come back later (SharedWorkPending) and read it, so a prompt's rubric is paid for once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

from evalq.core.errors import SharedWorkPending


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


# How long a writer holds the claim at most (two rubric calls with their retries fit), and how
# soon a waiting task looks again.
CLAIM_TTL_S = 240
RECHECK_S = 5.0


class Stored(Protocol):
    def model_dump_json(self) -> str: ...


T = TypeVar("T", bound=Stored)


def written_once(
    kv: ClaimingKeyValue,
    key: str,
    ttl_s: int,
    write: Callable[[], T],
    read: Callable[[str], T],
    *,
    claim_ttl_s: int = CLAIM_TTL_S,
    recheck_s: float = RECHECK_S,
) -> tuple[T, bool]:
    """The entry under `key`, and whether this call wrote it: `write()` stored by whichever
    task claims it first; the others raise SharedWorkPending to come back and read it. A
    claimer reads once more first: the last writer may have finished just before."""
    if not kv.claim(key, claim_ttl_s):
        raise SharedWorkPending(
            "waiting for another task to write this prompt's rubric (shared by its candidates)",
            retry_after_s=recheck_s,
        )
    try:
        if (stored := kv.get(key)) is not None:
            return read(stored), False
        value = write()
        kv.set(key, value.model_dump_json(), ttl_s)
        return value, True
    finally:
        kv.release(key)
