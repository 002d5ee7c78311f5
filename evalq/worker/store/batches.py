"""Batch mode's ledger, as stored (evalq.worker.batch reads and writes these as JSON): each
batch's record, its requests in order, the results by call digest, which replies were served,
the requests' transient failures, and the job's batch meta."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase


class BatchesStore(StoreBase):
    def batch_records(self, job_id: str) -> dict[str, str]:
        """Every batch of the job: local id -> BatchRecord JSON."""
        return cast(dict[str, str], self.r.hgetall(keys.batches(job_id)))

    def save_batch_record(self, job_id: str, batch: str, record_json: str) -> None:
        key = keys.batches(job_id)
        pipe = self.r.pipeline()
        pipe.hset(key, batch, record_json)
        pipe.expire(key, self.job_ttl(job_id))
        pipe.execute()

    def save_batch_units(self, job_id: str, batch: str, entries: Sequence[str]) -> None:
        """The batch's requests in order, written once (a second call replaces the first)."""
        key = keys.batch_units(job_id, batch)
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(key)
        for start in range(0, len(entries), 1000):
            pipe.rpush(key, *entries[start : start + 1000])
        pipe.expire(key, self.job_ttl(job_id))
        pipe.execute()

    def batch_units(self, job_id: str, batch: str, start: int = 0, end: int = -1) -> list[str]:
        return cast(list[str], self.r.lrange(keys.batch_units(job_id, batch), start, end))

    def save_batch_replies(self, job_id: str, replies: Mapping[str, str]) -> None:
        """Results by call digest; a result already there stays (first write wins)."""
        if not replies:
            return
        key = keys.batch_replies(job_id)
        pipe = self.r.pipeline()
        for digest, value in replies.items():
            pipe.hsetnx(key, digest, value)
        pipe.expire(key, self.job_ttl(job_id))
        pipe.execute()

    def batch_reply(self, job_id: str, digest: str) -> str | None:
        return cast(str | None, self.r.hget(keys.batch_replies(job_id), digest))

    def batch_first_serve(self, job_id: str, digest: str) -> bool:
        """True the first time a batch reply is handed to a metric (it is accounted then)."""
        pipe = self.r.pipeline()
        pipe.sadd(keys.batch_served(job_id), digest)
        pipe.expire(keys.batch_served(job_id), self.job_ttl(job_id))
        added, _ = pipe.execute()
        return bool(added)

    def batch_retry(self, job_id: str, digest: str, batch: str) -> int:
        """Count a request's transient failure (or missing result) in one batch; returns how
        many distinct batches it has failed in. Ingesting a batch twice counts it once."""
        key = keys.batch_tries(job_id)
        if self.r.hsetnx(key, f"{digest}@{batch}", 1):
            pipe = self.r.pipeline()
            pipe.hincrby(key, digest, 1)
            pipe.expire(key, self.job_ttl(job_id))
            pipe.execute()
        return int(cast(str, self.r.hget(key, digest)) or 0)

    def batch_meta(self, job_id: str) -> dict[str, str]:
        return cast(dict[str, str], self.r.hgetall(keys.batch_meta(job_id)))

    def max_batches(self, job_id: str) -> int | None:
        """The most batches the job may send (EVALQ_BATCH_MAX_BATCHES as its workers apply
        it, recorded by each sweep); None before the first sweep."""
        value = self.r.hget(keys.batch_meta(job_id), "max_batches")
        return int(cast(str, value)) if value else None

    def set_batch_meta(self, job_id: str, **fields: str | int | float) -> None:
        key = keys.batch_meta(job_id)
        pipe = self.r.pipeline()
        pipe.hset(key, mapping={name: str(value) for name, value in fields.items()})
        pipe.expire(key, self.job_ttl(job_id))
        pipe.execute()

    def incr_batch_meta(self, job_id: str, name: str, amount: int = 1) -> int:
        key = keys.batch_meta(job_id)
        pipe = self.r.pipeline()
        pipe.hincrby(key, name, amount)
        pipe.expire(key, self.job_ttl(job_id))
        value, _ = pipe.execute()
        return int(value)
