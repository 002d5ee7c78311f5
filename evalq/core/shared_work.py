"""Work several tasks need and one pays for: a prompt's rubric, shared by each candidate of a
multi-candidate job (and by any row with the same prompt).

The first task to claim the entry writes it; the others find the claim held and come back
later (SharedWorkPending, a Celery countdown: no worker thread waits), then read what it
wrote. A claim expires, so a writer that died holds nobody up for long; one that failed
releases it at once, and the next task to come back tries in its place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from evalq.core.errors import SharedWorkPending
from evalq.core.kv import ClaimingKeyValue

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
