"""A per-process, byte-bounded LRU of loaded media: a row's Q validator tasks on one worker
read or download its image once instead of Q times. It holds whatever the caller's loader
returns under the caller's key, so the rules of what may be read stay with the loader."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from evalq.core.judge import MediaPart


class MediaCache:
    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._items: OrderedDict[Hashable, MediaPart] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get_or_load(self, key: Hashable, load: Callable[[], MediaPart]) -> MediaPart:
        """The part under key, loaded outside the lock: two tasks may both load a part the
        first time, which costs a read and keeps one slow download from holding up the rest."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        part = load()
        size = len(part.data or b"")
        with self._lock:
            if key not in self._items and size <= self._max_bytes:
                self._items[key] = part
                self._bytes += size
                while self._bytes > self._max_bytes:
                    _, old = self._items.popitem(last=False)
                    self._bytes -= len(old.data or b"")
        return part
