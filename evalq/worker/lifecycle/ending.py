"""How a row ends, whoever ends it (a row task, a batch sweep): scored from its verdicts, or
failed; counted once either way (evalq.worker.lifecycle.job_end.finish_row's gate)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalq.core.metric import Plan, get_metric
from evalq.core.models import UnscoredReason, Verdict
from evalq.core.verdicts import failed_row
from evalq.core.versions import verdict_versions
from evalq.worker.lifecycle.job_end import finish_row
from evalq.worker.lifecycle.outcomes import Finished
from evalq.worker.store import RowRef, Store


def aggregate_and_count(
    store: Store, row: RowRef, plan: Plan[Any], verdicts: Mapping[int, Verdict]
) -> Finished:
    """Score the row from its verdicts and count it. The metric scores a candidate's cell as a
    row; the cell's candidate and the versions its judges answered as are set here, once, for
    every metric."""
    config = store.config(row.job_id)
    given = store.row(row)
    result = get_metric(config.metric).aggregate(given, plan, dict(verdicts))
    result.candidate = given.candidate
    if not result.model_versions:
        result.model_versions = verdict_versions(verdicts.values(), config.judge_model)
    finish_row(store, row.job_id, result, config.rows_total)
    return Finished(result.status)


def fail_row(store: Store, row: RowRef, reason: UnscoredReason, error: str) -> Finished:
    """Count the row as failed with `error`."""
    given = store.row(row)
    result = failed_row(
        given.id,
        given.line,
        given.prompt,
        reason,
        error,
        candidate=given.candidate,
        extra=given.extra,
    )
    finish_row(store, row.job_id, result, store.config(row.job_id).rows_total)
    return Finished("failed")
