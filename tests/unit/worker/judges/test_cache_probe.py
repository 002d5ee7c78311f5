"""prepare_row's call-cache reads (evalq.worker.runtime.CacheProbe): the first pass only notes call digests
and answers misses, one MGET fetches them, and afterwards a digest not fetched is read on its own."""

from __future__ import annotations

from evalq.worker.runtime import CacheProbe
from evalq.worker.store import Store


def test_keys_are_noted_then_fetched_at_once_then_read_alone(store: Store) -> None:
    store.call_replies().set("a", "reply a", 60)
    store.call_replies().set("c", "reply c", 60)
    probe = CacheProbe(store)

    assert probe.get("a") is None  # before the fetch: noted, answered as a miss
    assert probe.get("b") is None
    assert probe.get("a") is None
    assert probe.wanted == ["a", "b", "a"]

    probe.fetch()
    assert probe.known == {"a": "reply a", "b": None}
    assert probe.get("a") == "reply a"
    assert probe.get("b") is None
    assert probe.get("c") == "reply c"  # a later call's digest: read on its own
    assert "c" not in probe.known


def test_a_fetch_with_nothing_noted_reads_nothing(store: Store) -> None:
    probe = CacheProbe(store)
    probe.fetch()
    assert probe.known == {} and probe.fetched
