"""prepare_row's call-cache reads (worker.runtime.CacheProbe): the first pass only notes keys and
answers misses, one MGET fetches them, and afterwards a key not fetched is read on its own."""

from __future__ import annotations

from worker.runtime import CacheProbe
from worker.store import Store


def test_keys_are_noted_then_fetched_at_once_then_read_alone(store: Store) -> None:
    store.set("evalq:call:a", "reply a", 60)
    store.set("evalq:call:c", "reply c", 60)
    probe = CacheProbe(store)

    assert probe.get("evalq:call:a") is None  # before the fetch: noted, answered as a miss
    assert probe.get("evalq:call:b") is None
    assert probe.get("evalq:call:a") is None
    assert probe.wanted == ["evalq:call:a", "evalq:call:b", "evalq:call:a"]

    probe.fetch()
    assert probe.known == {"evalq:call:a": "reply a", "evalq:call:b": None}
    assert probe.get("evalq:call:a") == "reply a"
    assert probe.get("evalq:call:b") is None
    assert probe.get("evalq:call:c") == "reply c"  # a later call's key: read on its own
    assert "evalq:call:c" not in probe.known


def test_a_fetch_with_nothing_noted_reads_nothing(store: Store) -> None:
    probe = CacheProbe(store)
    probe.fetch()
    assert probe.known == {} and probe.fetched
