"""Shared work: what workers share across jobs and hosts (the judge-call and rubric caches, a
job's Files API uploads) and the leases and locks that say who does a piece of work now."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase

_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
_HELD: set[str] = set()  # the claim keys this process holds now
_HELD_LOCK = threading.Lock()


class SharedStore(StoreBase):
    # ---- the judge-call cache and the rubric cache ----

    def cached_call(self, digest: str) -> str | None:
        """The judge reply cached under a call digest
        (evalq.worker.judges.call_cache.call_digest)."""
        return self._get(keys.call(digest))

    def cached_calls(self, digests: Sequence[str]) -> list[str | None]:
        """cached_call for several digests, in one round trip."""
        names = [keys.call(digest) for digest in digests]
        return cast(list[str | None], self.r.mget(names)) if names else []

    def has_cached_call(self, digest: str) -> bool:
        return bool(self.r.exists(keys.call(digest)))

    def call_replies(self) -> SharedEntries:
        """The judge-call cache as the domain's KeyValue, by call digest."""
        return SharedEntries(self, keys.call)

    def rubrics(self, lease_s: int | None = None) -> SharedEntries:
        """The rubric cache as the domain's KeyValue, by rubric digest; a claim's first lease
        is lease_s (None: the whole time the write is allowed)."""
        return SharedEntries(self, keys.rubric, lease_s)

    # ---- a job's Files API uploads (evalq.worker.judges.files) ----

    def upload_record(self, job_id: str, digest: str) -> str | None:
        return self._get(keys.upload(job_id, digest))

    def save_upload_record(self, job_id: str, digest: str, record_json: str, ttl_s: int) -> None:
        self.r.set(keys.upload(job_id, digest), record_json, ex=ttl_s)

    def claim_upload(self, job_id: str, digest: str, token: str, ttl_s: int) -> bool:
        return self._claim(keys.upload_lock(job_id, digest), token, ttl_s)

    def release_upload(self, job_id: str, digest: str, token: str) -> None:
        self._release(keys.upload_lock(job_id, digest), token)

    # ---- locks: the watchdog's sweep, a batch-mode job's sweep or submit ----

    def claim_watchdog(self, owner: str, ttl_s: int) -> bool:
        """The right to sweep for ttl_s; False while another worker's watchdog holds it."""
        return self._claim(keys.WATCHDOG_LOCK, owner, ttl_s)

    def claim_batch_lock(self, job_id: str, owner: str, ttl_s: int) -> bool:
        """The right to sweep or submit the job's batches; False while another holds it."""
        return self._claim(keys.batch_lock(job_id), owner, ttl_s)

    def release_batch_lock(self, job_id: str, owner: str) -> None:
        self._release(keys.batch_lock(job_id), owner)

    def batch_locked(self, job_id: str) -> bool:
        """Whether a worker holds the job's batch lock now."""
        return bool(self.r.exists(keys.batch_lock(job_id)))

    # ---- the primitives under them ----

    def _get(self, key: str) -> str | None:
        return cast(str | None, self.r.get(key))

    def _claim(self, key: str, owner: str, ttl_s: int) -> bool:
        """Take a lock that expires after ttl_s; False while someone else holds it."""
        return bool(self.r.set(key, owner, nx=True, ex=ttl_s))

    def _release(self, key: str, owner: str) -> None:
        """Drop a lock only if `owner` still holds it (an expired lock may be another's now)."""
        self._script("release")(keys=[key], args=[owner])

    def renew_claims(self, lease_s: int) -> int:
        """Extend every claim this process holds by lease_s, in one round trip (the heartbeat
        calls it each beat); returns how many."""
        with _HELD_LOCK:
            held = sorted(_HELD)
        if held:
            self._script("renew")(keys=held, args=[_OWNER, lease_s])
        return len(held)


def renew_claims(store: SharedStore, lease_s: int) -> int:
    """Extend every claim this process holds by lease_s (the heartbeat calls it each beat)."""
    return store.renew_claims(lease_s)


@dataclass(frozen=True)
class SharedEntries:
    """One kind of entry shared across jobs (rubrics, judge replies), as the domain's KeyValue
    (evalq.core.shared_cache.KeyValue): callers name an entry by its digest, `key` (an evalq.worker.store.keys
    builder) names it in Redis."""

    store: SharedStore
    key: Callable[[str], str]
    lease_s: int | None = None  # a claim's first lease (renewed by the heartbeat); None: ttl_s

    def get(self, entry: str) -> str | None:
        return self.store._get(self.key(entry))

    def set(self, entry: str, value: str, ttl_s: int) -> None:
        self.store.r.set(self.key(entry), value, ex=ttl_s)

    def claim(self, entry: str, ttl_s: int) -> bool:
        """The right to write the entry, for ttl_s at most (a lease of lease_s, renewed by the
        worker's heartbeat while this process lives, released by the task that took it, so a
        holder killed mid-write holds the others up for one lease); False while another holds
        it."""
        key = keys.claim(self.key(entry))
        lease_s = ttl_s if self.lease_s is None else min(ttl_s, self.lease_s)
        if not self.store._claim(key, _OWNER, lease_s):
            return False
        with _HELD_LOCK:
            _HELD.add(key)
        return True

    def release(self, entry: str) -> None:
        key = keys.claim(self.key(entry))
        with _HELD_LOCK:
            _HELD.discard(key)
        self.store._release(key, _OWNER)
