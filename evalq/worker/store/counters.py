"""Counters and cost: adding to a job's counters (one script that refuses to recreate a
vanished job and renews the hash's expiry), the spend and its cap, and the counters read back
typed (evalq.core.counters.JobCounters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Literal, cast

from evalq.core.counters import JobCounters
from evalq.core.models import FailoverNote, TaskErrors
from evalq.core.pricing import USAGE_KINDS, Usage
from evalq.worker.store import keys
from evalq.worker.store.base import REDIS_DOWN, StoreBase, job_gone

# The counters a job starts with at 0 (create_job); others appear when first counted.
COUNTERS = (
    "rows_done",
    "rows_scored",
    "rows_partial",
    "rows_failed",
    "judge_calls",
    "prompt_tokens",
    "output_tokens",
    "rubric_cache_hits",
    "cache_hits",
    "retries",
    "rate_limited",
    "limiter_wait_ms",
    "simulated_calls",
    "redriven",
    "redrive_capped",
    "candidate_calls",
    "candidate_prompt_tokens",
    "candidate_output_tokens",
    "thought_tokens",
    "candidate_thought_tokens",
    "cached_tokens",
    "candidate_cached_tokens",
    "unit_tasks",
    "units_inline",
)
Gate = Literal["go", "reserved", "busy", "over", "idle", "gone"]


@dataclass(frozen=True)
class CallAdmission:
    """What reserve_call.lua said of a call about to start (its docstring has the verdicts),
    with the figures it decided on, in billionths of a dollar."""

    verdict: Gate
    status: str
    spent_nanos: int
    reserved_nanos: int
    cap_nanos: int | None


# Fields of JobCounters read from hash fields of another name or shape.
_DERIVED = {"failed_by_reason", "usage", "task_errors", "failover"}


def usage_field(role: str, kind: str, model: str) -> str:
    """The job-hash field of one usage counter; the model goes last, whatever it holds."""
    return f"usage:{role}:{kind}:{model}"


def usage_counters(usage: Usage) -> dict[str, int]:
    """A call's usage as job-hash counters: per role and model, and the priced spend."""
    counters = {
        usage_field(usage.role, kind, usage.model): amount
        for kind in USAGE_KINDS
        if (amount := getattr(usage, kind))
    }
    counters["spent_nanos"] = usage.cost_nanos
    return counters


def read_counters(job_hash: Mapping[str, str]) -> JobCounters:
    """A job hash's counters, typed; a field JobCounters does not know is ignored."""
    plain: dict[str, Any] = {
        name: job_hash[name]
        for name in JobCounters.model_fields
        if name not in _DERIVED and job_hash.get(name)
    }
    return JobCounters(
        **plain,
        failed_by_reason={
            name.removeprefix("failed:"): int(value)
            for name, value in sorted(job_hash.items())
            if name.startswith("failed:")
        },
        usage=_usage(job_hash),
        task_errors=_task_errors(job_hash),
        failover=_failover(job_hash),
    )


def _usage(job_hash: Mapping[str, str]) -> list[Usage]:
    """The per-role, per-model usage counters of a job hash."""
    found: dict[tuple[str, str], Usage] = {}
    for name, value in job_hash.items():
        if not name.startswith("usage:"):
            continue
        parts = name.split(":", 3)
        if len(parts) != 4 or parts[2] not in USAGE_KINDS:
            continue
        _, role, kind, model = parts
        entry = found.setdefault((role, model), Usage(role=role, model=model))
        setattr(entry, kind, getattr(entry, kind) + int(value or 0))
    return list(found.values())


def _failover(job_hash: Mapping[str, str]) -> FailoverNote | None:
    """The Redis failover a job hash notes (evalq.worker.jobs.failover); None when none."""
    at = job_hash.get(keys.FAILOVER_AT)
    if not at:
        return None
    return FailoverNote(
        at=float(at),
        calls_restored=int(job_hash.get(keys.FAILOVER_CALLS_RESTORED) or 0),
        calls_unconfirmed=int(job_hash.get(keys.FAILOVER_CALLS_UNCONFIRMED) or 0),
    )


def _task_errors(job_hash: Mapping[str, str]) -> TaskErrors | None:
    """What a job hash says of its task errors; None when there were none."""
    count = int(job_hash.get(keys.TASK_ERRORS) or 0)
    if not count:
        return None
    at = job_hash.get(keys.TASK_ERROR_AT)
    return TaskErrors(
        count=count,
        last_error=job_hash.get(keys.TASK_ERROR_LAST),
        task=job_hash.get(keys.TASK_ERROR_TASK),
        at=float(at) if at else None,
    )


class CountersStore(StoreBase):
    def incr(self, job_id: str, **amounts: int) -> None:
        """Add to a job's counters, only while the job exists (add_counters.lua)."""
        if any(amounts.values()):
            self._add(job_id, amounts)

    def account(
        self, job_id: str, counters: Mapping[str, int], usage: Usage | None = None
    ) -> tuple[int, int | None]:
        """Add a call's counters and its usage to the job in one round trip, while the job
        exists; returns the priced spend after it and the cap in force (None: no cap; (0,
        None) when the job is gone). HINCRBY is atomic, so the spend adds up across every
        worker and host."""
        amounts = dict(counters)
        if usage is not None:
            amounts.update(usage_counters(usage))
        return self._add(job_id, amounts, spend=True)

    def _add(
        self, job_id: str, amounts: Mapping[str, int], *, spend: bool = False
    ) -> tuple[int, int | None]:
        """Spend (`spend`) is also written under this process's tag in the job's spent_by,
        and tallied here once Redis took it (evalq.worker.store.tallies)."""
        pairs = [str(x) for name, amount in amounts.items() if amount for x in (name, amount)]
        script_keys = [keys.job(job_id)]
        args: list[str | int] = [self.job_ttl(job_id)]
        if spend:
            script_keys.append(keys.spent_by(job_id))
            args.append(self.tally_tag)
        with self.tallies.writing() if spend else nullcontext():
            try:
                found, spent, cap = self._script("add_counters")(
                    keys=script_keys, args=[*args, *pairs]
                )
            except REDIS_DOWN:
                if spend:
                    self.tallies.unconfirmed(job_id, amounts)
                raise
            if spend and int(found):
                self.tallies.add(job_id, amounts)
        return int(spent), int(cap) if cap else None

    def budget(self, job_id: str) -> tuple[int, int | None]:
        """(priced spend so far, the cap in force or None), in billionths of a dollar."""
        spent, budget = cast(
            list[str | None], self.r.hmget(keys.job(job_id), ["spent_nanos", "budget_nanos"])
        )
        return int(spent or 0), int(budget) if budget else None

    def admit_call(
        self, job_id: str, member: str, estimate_nanos: int, hold_s: float
    ) -> CallAdmission:
        """One round trip before a call: the job's status and, under a cap, the call's estimated
        cost reserved as `member` for up to `hold_s` (reserve_call.lua)."""
        verdict, status, spent, reserved, cap = self._script("reserve_call")(
            keys=[keys.job(job_id), keys.reservations(job_id)],
            args=[member, estimate_nanos, max(1, round(hold_s * 1000)), self.job_ttl(job_id)],
        )
        return CallAdmission(
            verdict=verdict,
            status=status,
            spent_nanos=int(spent),
            reserved_nanos=int(reserved),
            cap_nanos=int(cap) if cap else None,
        )

    def release_calls(self, job_id: str, members: Sequence[str]) -> int:
        """Settle reservations whose calls' cost is counted now (release_calls.lua); returns
        the nanos released (a reservation already expired is released once, by its expiry)."""
        if not members:
            return 0
        released = self._script("release_calls")(
            keys=[keys.job(job_id), keys.reservations(job_id)], args=list(members)
        )
        return int(released)

    def reserved(self, job_id: str) -> int:
        """The cost reserved now by the job's calls in flight (nanos; 0 without a cap)."""
        return int(cast(str | None, self.r.hget(keys.job(job_id), "reserved_nanos")) or 0)

    def set_budget(self, job_id: str, cap_nanos: int | None) -> None:
        if cap_nanos is None:
            self.r.hdel(keys.job(job_id), "budget_nanos")
        else:
            self.r.hset(keys.job(job_id), "budget_nanos", cap_nanos)

    def counters(self, job_id: str) -> JobCounters:
        """The job's counters, typed; JobNotFound when the job is gone."""
        job_hash = cast(dict[str, str], self.r.hgetall(keys.job(job_id)))
        if not job_hash:
            raise job_gone(job_id)
        return read_counters(job_hash)

    def job_progress(self, job_id: str) -> tuple[JobCounters, int]:
        """The job's counters and how many rows its row list holds, read together: a list
        shorter than rows_total (expired, or lost) means some rows can never be driven."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hgetall(keys.job(job_id))
        pipe.llen(keys.job_rows(job_id))
        job_hash, listed = pipe.execute()
        if not job_hash or "config" not in job_hash:
            raise job_gone(job_id)
        return read_counters(cast(dict[str, str], job_hash)), int(listed)
