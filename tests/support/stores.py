"""The Store under a client, for tests that look past the client's two interfaces
(evalq.worker.jobs.reads, evalq.worker.jobs.control) at what Redis holds: raw job hashes,
reservations, broker queues. The client itself has no Store to hand out; this one is opened on the
same settings, once per client."""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from evalq.worker.store import Store

_STORES: WeakKeyDictionary[Any, Store] = WeakKeyDictionary()


def store_of(client: Any) -> Store:
    """A Store on the Redis `client` (a Client or JobReader) reads and steers."""
    if (store := _STORES.get(client)) is None:
        store = _STORES[client] = Store.from_settings(client.settings)
    return store
