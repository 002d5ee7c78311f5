"""Results: counting a finished row once (finish_row.lua, which also ends the row's turn), the
rows' results, the unscored questions by reason, and the job summary written when the last row
lands."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, cast

from evalq.core.models import RowResult
from evalq.worker.store import keys
from evalq.worker.store.base import StoreBase, row_key


def finish_args(
    job_id: str, result: RowResult, ttl_s: int, archive_due: float = 0.0
) -> tuple[list[str], list[Any]]:
    """finish_row.lua's KEYS and ARGV for one row's result (`archive_due`: when the job's
    archive write is due should the row land after a cancel)."""
    unscored: dict[str, int] = {}
    for q in result.questions:
        if q.reason:
            unscored[q.reason] = unscored.get(q.reason, 0) + 1
    args: list[Any] = [row_key(result), result.model_dump_json(), result.status, ttl_s]
    args.append(result.reason or "" if result.status == "failed" else "")
    args.append("" if result.score is None else repr(float(result.score)))  # running mean
    args += [repr(archive_due), job_id]
    for reason, count in sorted(unscored.items()):
        args += [reason, count]
    names = [keys.done(job_id), keys.job(job_id), keys.results(job_id), keys.unscored(job_id)]
    return [*names, keys.turns(job_id), keys.ARCHIVE_PENDING], args


class ResultsStore(StoreBase):
    def finish_row(self, job_id: str, result: RowResult) -> int:
        """Record a row's result and count it; -1 when it was already counted."""
        due = time.time() + self.archive_grace_s
        names, args = finish_args(job_id, result, self.job_ttl(job_id), due)
        return int(self._script("finish_row")(keys=names, args=args))

    def unscored_counts(self, job_id: str) -> dict[str, int]:
        raw = cast(dict[str, str], self.r.hgetall(keys.unscored(job_id)))
        return {k: int(v) for k, v in sorted(raw.items())}

    def iter_results(self, job_id: str) -> Iterator[RowResult]:
        for _, raw in self.r.hscan_iter(keys.results(job_id), count=500):
            yield RowResult.model_validate_json(cast(str, raw))

    def save_summary(self, job_id: str, summary_json: str) -> None:
        self.r.set(keys.summary(job_id), summary_json, ex=self.job_ttl(job_id))

    def summary_json(self, job_id: str) -> str | None:
        return cast(str | None, self.r.get(keys.summary(job_id)))
