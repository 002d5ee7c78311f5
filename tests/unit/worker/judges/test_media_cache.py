"""The worker's media LRU: one load per key, bounded by bytes, oldest out first."""

from __future__ import annotations

from collections.abc import Callable

from evalq.core.judge import MediaPart
from evalq.worker.judges.media_cache import MediaCache


def part(n: int) -> MediaPart:
    return MediaPart(mime_type="image/png", data=b"x" * n)


def test_a_key_is_loaded_once_and_the_least_recent_goes_first_past_the_byte_bound() -> None:
    cache = MediaCache(max_bytes=10)
    loads: list[str] = []

    def loader(key: str, size: int) -> Callable[[], MediaPart]:
        def load() -> MediaPart:
            loads.append(key)
            return part(size)

        return load

    a = cache.get_or_load("a", loader("a", 4))
    assert cache.get_or_load("a", loader("a", 4)) is a
    cache.get_or_load("b", loader("b", 4))
    cache.get_or_load("a", loader("a", 4))  # a is now the most recent
    cache.get_or_load("c", loader("c", 4))  # 12 bytes: b, the least recent, goes
    cache.get_or_load("a", loader("a", 4))
    cache.get_or_load("b", loader("b", 4))
    assert loads == ["a", "b", "c", "b"]


def test_a_part_bigger_than_the_whole_cache_is_returned_and_not_kept() -> None:
    cache = MediaCache(max_bytes=3)
    loads: list[int] = []

    def load() -> MediaPart:
        loads.append(1)
        return part(5)

    assert cache.get_or_load("big", load).data == b"xxxxx"
    cache.get_or_load("big", load)
    assert len(loads) == 2


def test_the_same_reference_under_other_rules_is_another_key() -> None:
    cache = MediaCache(max_bytes=100)
    first = cache.get_or_load(("ref", "rules-1"), lambda: part(1))
    second = cache.get_or_load(("ref", "rules-2"), lambda: part(2))
    assert first.data != second.data
