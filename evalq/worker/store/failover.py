"""Redis failovers: which Redis this is (its run_id and replication id, which change when
another process answers or a replica is promoted), the failovers workers have seen, and a
job's spend restored from one process's own tallies after one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase


@dataclass(frozen=True)
class RedisIdentity:
    """What changes when writes may have been lost: the server process (run_id: a restart, or
    another server behind the same address) and its replication history (master_replid: a
    replica promoted)."""

    run_id: str
    replid: str

    @property
    def key(self) -> str:
        return f"{self.run_id}:{self.replid}"


class FailoverStore(StoreBase):
    def redis_identity(self) -> RedisIdentity | None:
        """One INFO (server and replication sections) of the Redis this connection reaches;
        None when this Redis user may not run INFO (no failover can be noticed then)."""
        try:
            info: dict[str, Any] = self.r.info("server", "replication")
        except redis.exceptions.NoPermissionError:
            return None
        return RedisIdentity(str(info.get("run_id", "")), str(info.get("master_replid", "")))

    def note_failover(self, identity: RedisIdentity, at: float) -> bool:
        """Record that workers found Redis changed to `identity`; True for the first to say so
        (who re-drives the jobs' rows: the others only restore their own spend)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hsetnx(keys.FAILOVERS, identity.key, repr(at))
        pipe.expire(keys.FAILOVERS, self.ttl_s)
        first, _ = pipe.execute()
        return bool(first)

    def reconcile_spend(self, job_id: str, at: float, *, active: bool) -> int | None:
        """Add back the spend this process counted for the job that Redis no longer holds, and
        note the failover on the job (always when `active`, else only if something was lost or
        is unconfirmed). Returns the calls restored; None when the job is gone. When Redis holds
        no spend of the job at all, its calls are reported instead of added: that hash may have
        expired, and adding them could count them twice (reconcile_spend.lua)."""
        spent, unconfirmed = self.tallies.of(job_id)
        args: list[Any] = [self.job_ttl(job_id), self.tally_tag, repr(at), unconfirmed]
        args.append("1" if active else "0")
        for name, amount in sorted(spent.items()):
            args += [name, amount]
        found, restored = self._script("reconcile_spend")(
            keys=[keys.job(job_id), keys.spent_by(job_id)], args=args
        )
        if int(found) < 0:
            return None
        self.tallies.reported(job_id, unconfirmed)
        return int(restored)
