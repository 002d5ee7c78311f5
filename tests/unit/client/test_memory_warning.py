"""`evalq status`'s warning when Redis nears its maxmemory: when it says so, and what."""

from __future__ import annotations

from evalq.client.reads import memory_warning

MIB = 1024 * 1024


def test_no_limit_or_room_left_says_nothing() -> None:
    assert memory_warning("r:6379", 10**12, 0) is None  # no maxmemory set
    assert memory_warning("r:6379", 79 * MIB, 100 * MIB) is None


def test_near_or_past_the_limit_says_how_full_and_what_to_do() -> None:
    said = memory_warning("redis.internal:6379", 85 * MIB, 100 * MIB)
    assert said is not None
    assert "Redis at redis.internal:6379 uses 85 MiB of its maxmemory 100 MiB (85%)" in said
    assert "refuses writes" in said
    assert "Raise maxmemory (docs/operations/redis.md)" in said
    assert "EVALQ_RESULT_TTL_S" in said
    assert memory_warning("r:6379", 80 * MIB, 100 * MIB) is not None  # the bound itself
    assert "(120%)" in (memory_warning("r:6379", 120 * MIB, 100 * MIB) or "")
