"""A per-process, byte-bounded LRU of loaded media: a row's Q validator tasks on one worker
read or download its image once instead of Q times."""

from __future__ import annotations

import threading
from collections import OrderedDict

from evalq.core.judge import MediaPart
from evalq.core.media import IMAGE_TYPES, MediaRules, load_media
from evalq.core.models import MediaRef


class MediaCache:
    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        # Keyed by the rules too: bytes one job may read are not handed to a job that may not.
        self._items: OrderedDict[tuple[MediaRef, tuple[str, ...], MediaRules], MediaPart] = (
            OrderedDict()
        )
        self._bytes = 0
        self._lock = threading.Lock()

    def load(
        self,
        ref: MediaRef,
        row_id: str,
        field: str,
        rules: MediaRules,
        allowed: tuple[str, ...] = IMAGE_TYPES,
    ) -> MediaPart:
        key = (ref, allowed, rules)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        part = load_media(ref, row_id, field, rules, allowed)
        size = len(part.data or b"")
        with self._lock:
            if key not in self._items and size <= self._max_bytes:
                self._items[key] = part
                self._bytes += size
                while self._bytes > self._max_bytes:
                    _, old = self._items.popitem(last=False)
                    self._bytes -= len(old.data or b"")
        return part
