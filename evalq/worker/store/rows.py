"""Rows and plans: each row's input, its plan (first write wins), what a unit task reads before its
call, the rows' signs of life (the watchdog's clock), re-drives, and which rows are done."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from evalq.core.errors import JobNotFound
from evalq.core.metric import Plan, PlanT, load_plan
from evalq.core.models import JobConfig, RowInput, Verdict
from evalq.worker.store import keys
from evalq.worker.store.base import RowRef, StoreBase, job_gone


@dataclass(frozen=True)
class UnitInputs:
    """What a unit task reads before its call, in one round trip: its verdict if one is stored
    (a redelivery), the job's status now, and the row's plan (None: no plan stored). The job's
    config and the row's input are read into the Store's memo with it. The spend cap is the
    gate's before each call (evalq.worker.judges.budget), not read here."""

    verdict: Verdict | None
    status: str
    plan: Plan[Any] | None


class RowsStore(StoreBase):
    """Rows keyed by their line number (`row_key`), never by the user's id: ids are the user's
    to choose and could repeat, lines can not, so no row hides behind another's key. Keys:
    row, plan, job_rows, done, activity, redrives (evalq.worker.store.keys)."""

    def row(self, row: RowRef) -> RowInput:
        if (memo := self._memo.get(("row", row.job_id, row.line))) is not None:
            return cast(RowInput, memo)
        raw = self.r.get(keys.row(row.job_id, row.line))
        if raw is None:
            raise _no_row(row)
        return cast(
            RowInput,
            self._memo.put(
                ("row", row.job_id, row.line), RowInput.model_validate_json(cast(str, raw))
            ),
        )

    def row_keys(self, job_id: str) -> list[str]:
        return cast(list[str], self.r.lrange(keys.job_rows(job_id), 0, -1))

    def not_done(self, job_id: str) -> list[str]:
        done = cast(set[str], self.r.smembers(keys.done(job_id)))
        return [line for line in self.row_keys(job_id) if line not in done]

    def is_done(self, row: RowRef) -> bool:
        return bool(self.r.sismember(keys.done(row.job_id), row.line))

    # ---- plans ----

    def keep_row_plan(self, row: RowRef, plan: PlanT) -> PlanT:
        """Store the plan unless one is stored, and return the stored one, in one round trip.
        First write wins: a redelivered prepare_row must not renumber the row's units."""
        key = keys.plan(row.job_id, row.line)
        pipe = self.r.pipeline(transaction=True)
        pipe.set(key, plan.model_dump_json(), ex=self.job_ttl(row.job_id), nx=True)
        pipe.get(key)
        _, raw = pipe.execute()
        return self._remember_plan(row, cast(str, raw), type(plan)) or plan

    def row_plan(self, row: RowRef, model: type[PlanT]) -> PlanT | None:
        """The row's stored plan as its metric's ``model``; StoredPlanError if it doesn't fit."""
        if isinstance(memo := self._memo.get(("plan", row.job_id, row.line)), model):
            return memo
        raw = cast(str | None, self.r.get(keys.plan(row.job_id, row.line)))
        return self._remember_plan(row, raw, model)

    def _remember_plan(self, row: RowRef, raw: str | None, model: type[PlanT]) -> PlanT | None:
        """A stored plan read as its metric's model (StoredPlanError if it doesn't fit), kept in
        this process's memo: a row's plan never changes once written."""
        if not raw:
            return None
        plan = load_plan(model, raw, f"job {row.job_id}, row on line {row.line}")
        return cast(PlanT, self._memo.put(("plan", row.job_id, row.line), plan))

    def unit_inputs(
        self,
        row: RowRef,
        index: int,
        plan_model: Callable[[JobConfig], type[Plan[Any]]],
    ) -> UnitInputs:
        """Everything a unit task reads before its call, in one round trip (see UnitInputs);
        the config, row and plan only when this process has not read them yet. `plan_model`
        names the plan's type for the job's metric (the caller knows the metrics)."""
        job_id = row.job_id
        config = self._memo.get(("config", job_id))
        given = self._memo.get(("row", row.job_id, row.line))
        plan = self._memo.get(("plan", row.job_id, row.line))
        pipe = self.r.pipeline(transaction=True)
        pipe.hget(keys.verdicts(job_id, row.line), str(index))
        fields = ["status", *(["config"] if config is None else [])]
        pipe.hmget(keys.job(job_id), fields)
        if given is None:
            pipe.get(keys.row(job_id, row.line))
        if plan is None:
            pipe.get(keys.plan(job_id, row.line))
        found = pipe.execute()
        verdict, job = cast(str | None, found[0]), cast(list[str | None], found[1])
        status = job[0]
        if status is None or (config is None and job[1] is None):
            raise job_gone(job_id)
        if config is None:
            config = JobConfig.model_validate_json(cast(str, job[1]))
            self._memo.put(("config", job_id), config)
        rest = found[2:]
        if given is None:
            if (raw_row := cast(str | None, rest.pop(0))) is None:
                raise _no_row(row)
            self._memo.put(("row", row.job_id, row.line), RowInput.model_validate_json(raw_row))
        if plan is None:
            model = plan_model(cast(JobConfig, config))
            plan = self._remember_plan(row, cast(str | None, rest.pop(0)), model)
        return UnitInputs(
            verdict=Verdict.model_validate_json(verdict) if verdict else None,
            status=status,
            plan=cast(Plan[Any] | None, plan),
        )

    # ---- signs of life and re-drives (the watchdog's clock) ----

    def touch(self, job_id: str, *lines: str, at: float | None = None) -> None:
        """Record a sign of life of the rows on `lines`; `at` in the future for a row waiting
        on a countdown."""
        if not lines:
            return
        key = keys.activity(job_id)
        when = time.time() if at is None else at
        pipe = self.r.pipeline()
        pipe.zadd(key, dict.fromkeys(lines, when))
        pipe.expire(key, self.job_ttl(job_id))
        pipe.execute()

    def quiet_since(self, job_id: str, before: float) -> list[str]:
        """Rows whose last sign of life is older than `before`."""
        return cast(list[str], self.r.zrangebyscore(keys.activity(job_id), "-inf", before))

    def touched(self, job_id: str) -> set[str]:
        return set(cast(list[str], self.r.zrange(keys.activity(job_id), 0, -1)))

    def count_redrives(
        self, job_id: str, lines: list[str], *, at: float | None = None, count_all: bool = True
    ) -> dict[str, int]:
        """Count one more re-drive of each row; returns each row's re-drives since its last new
        verdict (this one included). `at` is when the watchdog re-drives them (the sign of life
        it writes, evalq.worker.lifecycle.job_end.redrive). Without ``count_all``, a re-drive counts
        only when a task took the row since its previous re-drive (a sign of life later than that
        one's `at`): one whose message still waits behind other work is not a strike. The watchdog,
        one sweeper at a time, is the only caller."""
        key = keys.redrives(job_id)
        pipe = self.r.pipeline()
        for line in lines:
            pipe.hlen(keys.verdicts(job_id, line))
            pipe.hget(key, line)
            pipe.zscore(keys.activity(job_id), line)
        seen = pipe.execute()
        strikes: dict[str, int] = {}
        write = self.r.pipeline()
        for i, line in enumerate(lines):
            verdicts, record = int(seen[3 * i]), cast(str | None, seen[3 * i + 1])
            alive_at = cast(float | None, seen[3 * i + 2])
            parts = record.split(":") if record else []
            before, then = (int(parts[0]), int(parts[1])) if parts else (0, 0)
            last = float(parts[2]) if len(parts) > 2 else None
            if verdicts > then or not parts:
                strikes[line] = 1
            elif count_all or last is None or (alive_at is not None and alive_at > last):
                strikes[line] = before + 1
            else:
                strikes[line] = before
            entry = f"{strikes[line]}:{verdicts}" + ("" if at is None else f":{at!r}")
            write.hset(key, line, entry)
        write.expire(key, self.job_ttl(job_id))
        write.execute()
        return strikes


def _no_row(row: RowRef) -> JobNotFound:
    return JobNotFound(f"job {row.job_id!r} has no row on line {row.line} (expired?)")
