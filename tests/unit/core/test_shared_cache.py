"""The shared cache's work written once (evalq.core.shared_cache): the claimer writes, the
others come back later and read it."""

from __future__ import annotations

import pytest

from evalq.core.errors import SharedWorkPending, policy_of
from evalq.core.shared_cache import written_once


class Claims:
    """An in-memory shared cache with claims, as evalq.worker.store.SharedEntries keeps them."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.held: set[str] = set()

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def set(self, key: str, value: str, ttl_s: int) -> None:
        self.values[key] = value

    def claim(self, key: str, ttl_s: int) -> bool:
        if key in self.held:
            return False
        self.held.add(key)
        return True

    def release(self, key: str) -> None:
        self.held.discard(key)


class Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def model_dump_json(self) -> str:
        return self.text


def test_shared_work_is_written_by_the_claimer_and_waited_for_by_the_rest() -> None:
    kv = Claims()
    kv.claim("k", 60)  # another task is writing it
    with pytest.raises(SharedWorkPending) as waiting:
        written_once(kv, "k", 60, lambda: Text("mine"), Text)
    assert policy_of(waiting.value) == "countdown" and waiting.value.retry_after_s > 0
    kv.release("k")
    value, wrote = written_once(kv, "k", 60, lambda: Text("mine"), Text)
    assert (value.text, wrote, kv.values["k"], kv.held) == ("mine", True, "mine", set())
    # Claimed after the writer finished: read what it wrote, never written twice.
    value, wrote = written_once(kv, "k", 60, lambda: Text("again"), Text)
    assert (value.text, wrote) == ("mine", False)


def test_a_writer_that_fails_releases_its_claim() -> None:
    kv = Claims()

    def broken() -> Text:
        raise RuntimeError("judge down")

    with pytest.raises(RuntimeError):
        written_once(kv, "k", 60, broken, Text)
    assert kv.held == set() and "k" not in kv.values
