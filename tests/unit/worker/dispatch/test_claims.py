"""Claims on shared work (a rubric every candidate of a prompt waits for) are leases: renewed
by the heartbeat while their holder lives, so a holder killed mid-write holds the waiting
cells up for one lease, not for the whole time a write may take."""

from __future__ import annotations

from evalq.worker.dispatch.heartbeat import Heartbeat, claim_lease_s
from evalq.worker.store import SharedEntries, Store, keys
from evalq.worker.store import shared as store_module


def test_a_claim_is_a_short_lease_that_the_heartbeat_renews(store: Store) -> None:
    shared = SharedEntries(store, keys.rubric, lease_s=claim_lease_s(1.0))
    assert shared.claim("prompt-digest", 240)
    lock = keys.claim(keys.rubric("prompt-digest"))
    assert 0 < store.r.ttl(lock) <= 3  # one lease, not the 240 s the write may take
    assert not SharedEntries(store, keys.rubric).claim("prompt-digest", 240)
    store.r.expire(lock, 1)  # time passes; the holder's worker is alive and beats
    Heartbeat(store, interval_s=1.0, max_hold_s=60).beat()
    assert store.r.ttl(lock) >= 2
    shared.release("prompt-digest")
    assert store.r.exists(lock) == 0
    Heartbeat(store, interval_s=1.0, max_hold_s=60).beat()  # nothing held: nothing renewed
    assert store.r.exists(lock) == 0


def test_a_lease_held_by_another_process_is_not_renewed_here(store: Store) -> None:
    lock = keys.claim(keys.rubric("other"))
    assert store._claim(lock, "another-host:1:dead", 2)  # a killed holder's claim
    store_module._HELD.add(lock)  # even if this process thought it held it
    try:
        store.r.expire(lock, 1)
        Heartbeat(store, interval_s=1.0, max_hold_s=60).beat()
        assert store.r.ttl(lock) <= 1  # left to expire: the next cell takes over
    finally:
        store_module._HELD.discard(lock)
