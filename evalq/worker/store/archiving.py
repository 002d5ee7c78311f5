"""What Redis keeps about the archive: which ended jobs are due to be written, the outcome of
the last write, keys held from expiring until a write succeeds, which archive each worker
writes to; and a job's raw parts read in bulk for its record."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase

READ_CHUNK = 500  # keys per pipelined read of a job's rows, plans and verdicts


@dataclass(frozen=True)
class ArchiveState:
    """What `evalq status` says of a job's archive write: `due` is set while a write is
    pending (epoch s it is next tried), `written_at` after the last one succeeded."""

    due: float | None
    written_at: float | None
    error: str | None
    tries: int
    held: bool


def _chunks(items: Sequence[str], size: int = READ_CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ArchivingStore(StoreBase):
    # ---- which jobs are due, and the outcome of a write ----

    def archive_due(self, now: float, limit: int = 20) -> list[str]:
        """Ended jobs whose archive write is due by `now`, the longest waiting first."""
        return cast(
            list[str],
            self.r.zrangebyscore(keys.ARCHIVE_PENDING, "-inf", now, start=0, num=limit),
        )

    def archive_pending_since(self, job_id: str) -> float | None:
        """The job's place in the pending set (when its write is due), None when not pending:
        read before a write, so archive_written leaves a job a late row made due again."""
        score = self.r.zscore(keys.ARCHIVE_PENDING, job_id)
        return None if score is None else float(score)

    def archive_written(self, job_id: str, due: float | None, at: float) -> None:
        """Record a successful write. The job leaves the pending set only if nothing made it
        due again meanwhile (a row counted after a cancel), and keys held while the write
        was failing expire again as any job's do."""
        held = self._script("archive_written")(
            keys=[keys.ARCHIVE_PENDING, keys.job(job_id)],
            args=[
                job_id,
                "" if due is None else repr(due),
                repr(at),
                keys.ARCHIVED_AT,
                keys.ARCHIVE_ERROR,
                keys.ARCHIVE_TRIES,
                keys.ARCHIVE_HELD,
            ],
        )
        if int(held):
            self._expire_job_keys(job_id, self.job_ttl(job_id))

    def archive_failed(self, job_id: str, error: str) -> int:
        """Record a failed write; the job's keys are held from expiring from now until a
        write succeeds, so nothing is lost to a long outage. Returns the failed tries."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(keys.job(job_id), mapping={keys.ARCHIVE_ERROR: error[:500]})
        pipe.hincrby(keys.job(job_id), keys.ARCHIVE_TRIES, 1)
        pipe.hsetnx(keys.job(job_id), keys.ARCHIVE_HELD, 1)
        _, tries, newly_held = pipe.execute()
        if newly_held:
            self._expire_job_keys(job_id, None)
        return int(tries)

    def archive_retry_at(self, job_id: str, at: float) -> None:
        """When the job's next write is due (it stays on the pending set until written)."""
        self.r.zadd(keys.ARCHIVE_PENDING, {job_id: at})

    def archive_forget(self, job_id: str) -> None:
        """Drop a job gone from Redis from the pending set: nothing is left to write."""
        self.r.zrem(keys.ARCHIVE_PENDING, job_id)

    def archive_state(self, job_id: str) -> ArchiveState:
        pipe = self.r.pipeline(transaction=False)
        pipe.zscore(keys.ARCHIVE_PENDING, job_id)
        pipe.hmget(
            keys.job(job_id),
            [keys.ARCHIVED_AT, keys.ARCHIVE_ERROR, keys.ARCHIVE_TRIES, keys.ARCHIVE_HELD],
        )
        due, (written, error, tries, held) = pipe.execute()
        return ArchiveState(
            due=None if due is None else float(due),
            written_at=None if written is None else float(written),
            error=error,
            tries=int(tries or 0),
            held=bool(held),
        )

    def settle_expiry(self, job_id: str) -> None:
        """Give every key of an ended job the same expiry, the job's own (JobConfig.ttl_s) from
        now: keys written at submit would otherwise go before the results, and the last ones
        written would outlive the job's hash as orphans."""
        self._expire_job_keys(job_id, self.job_ttl(job_id))

    def _job_key_names(self, job_id: str) -> list[str]:
        """Every key of the job, found by name: its parts, then its hash, which so is given its
        expiry last and outlives none of them by the time the others took."""
        parts = cast(list[str], list(self.r.scan_iter(match=keys.job(job_id, "*"), count=1000)))
        return [*parts, keys.job(job_id)]

    def _expire_job_keys(self, job_id: str, ttl_s: int | None) -> None:
        """Hold every key of the job (ttl None: PERSIST) or let them expire after ttl_s."""
        for chunk in _chunks(self._job_key_names(job_id)):
            pipe = self.r.pipeline(transaction=False)
            for name in chunk:
                if ttl_s is None:
                    pipe.persist(name)
                else:
                    pipe.expire(name, ttl_s)
            pipe.execute()

    # ---- which archive each worker writes to ----

    def register_archive_writer(self, worker: str, archive: str, at: float) -> None:
        self.r.hset(keys.ARCHIVE_WRITERS, worker, f"{archive}\t{at!r}")

    def archive_writers(self, since: float) -> dict[str, str]:
        """Worker name -> the archive it said it writes to, for workers heard from since
        `since` (older entries, of workers gone, are dropped)."""
        out: dict[str, str] = {}
        stale: list[str] = []
        for worker, value in cast(dict[str, str], self.r.hgetall(keys.ARCHIVE_WRITERS)).items():
            archive, _, at = value.rpartition("\t")
            try:
                fresh = float(at) >= since
            except ValueError:
                fresh = False
            if fresh:
                out[worker] = archive
            else:
                stale.append(worker)
        if stale:
            self.r.hdel(keys.ARCHIVE_WRITERS, *stale)
        return out

    # ---- a job's parts, read in bulk for its record ----

    def raw_rows(self, job_id: str, lines: Sequence[str]) -> list[str | None]:
        """Each line's stored RowInput JSON (None for a rejected line, which has none)."""
        out: list[str | None] = []
        for chunk in _chunks(lines):
            out += cast(list[str | None], self.r.mget([keys.row(job_id, line) for line in chunk]))
        return out

    def raw_plans(self, job_id: str, lines: Sequence[str]) -> list[str | None]:
        out: list[str | None] = []
        for chunk in _chunks(lines):
            out += cast(list[str | None], self.r.mget([keys.plan(job_id, line) for line in chunk]))
        return out

    def raw_verdicts(self, job_id: str, lines: Sequence[str]) -> list[dict[str, str]]:
        """Each line's verdicts hash (unit index -> Verdict JSON)."""
        out: list[dict[str, str]] = []
        for chunk in _chunks(lines):
            pipe = self.r.pipeline(transaction=False)
            for line in chunk:
                pipe.hgetall(keys.verdicts(job_id, line))
            out += cast(list[dict[str, str]], pipe.execute())
        return out

    def raw_results(self, job_id: str) -> dict[str, str]:
        """Line -> RowResult JSON, as stored."""
        return cast(dict[str, str], self.r.hgetall(keys.results(job_id)))

    def job_exists(self, job_id: str) -> bool:
        """Whether Redis still has the job (its hash with a config), read now, never from the
        memo: a reader falls back to the archive once it has expired."""
        return bool(self.r.hexists(keys.job(job_id), "config"))

    def ended_at(self, job_id: str, status: str) -> float | None:
        """When the job reached `status` ({status}_at on its hash)."""
        value = self.r.hget(keys.job(job_id), f"{status}_at")
        return None if value is None else float(cast(str, value))
