"""A metric's RowContext for unit tests that run plan / run_unit / aggregate without Celery:
one job of one row, judged by the given judges (by model), media handed over as given; and the
row run through those three steps as the tasks run it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalq.core.judge import Judge, MediaPart
from evalq.core.metric import RowContext
from evalq.core.models import JobConfig, RowInput
from evalq.core.shared_cache import KeyValue
from evalq.testing import MemoryKV, run_row

__all__ = ["row_context", "run_row"]


def row_context(
    metric: str,
    row: RowInput,
    judges: Mapping[str, Judge],
    media: Callable[[str], MediaPart],
    *,
    several: bool = False,
    options: dict[str, Any] | None = None,
    kv: KeyValue | None = None,
    **fields: Any,
) -> RowContext:
    """``several``: the job names every judge (judge_models); otherwise only the first."""
    models = list(judges)
    job: dict[str, Any] = {"judge_models": models} if several else {}
    if options is not None:
        job["options"] = options
    config = JobConfig(
        job_id="j",
        metric=metric,
        judge_model=models[0],
        dataset="d",
        rows_total=1,
        created_at=0,
        **job,
    )
    return RowContext(
        job=config,
        row=row,
        judge=lambda model: judges[model],
        candidate=lambda model: judges[model],
        media=media,
        kv=kv if kv is not None else MemoryKV(),
        count=lambda name, amount: None,
        **fields,
    )
