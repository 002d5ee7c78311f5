"""The metric plugin interface: every metric is prepare -> fan-out of units -> aggregate.

A metric is pure domain logic. The worker gives it a RowContext (judges, media, a small
key-value cache) and runs the same three tasks for every metric: prepare_row (one task: rubric
or candidate generation), one run_unit task per unit (one judge call each, the chord header),
and aggregate_row (the chord callback). Plans and unit results are stored, so a redelivered or
re-driven row reuses them and never asks twice.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from evalq.core.errors import InputError
from evalq.core.judge import Judge, MediaPart
from evalq.core.kv import KeyValue
from evalq.core.models import JobConfig, RowInput, RowResult, Verdict

if TYPE_CHECKING:
    from evalq.core.dry_run import DryEnv


class Unit(BaseModel):
    """One judge call of a row's fan-out; `data` is the metric's own description of it."""

    index: int
    kind: str = "question"
    data: dict[str, Any] = Field(default_factory=dict)


class Plan(BaseModel):
    """What a row needs done, fixed once per row (a redelivery reuses it, keeping indexes)."""

    units: list[Unit]
    data: dict[str, Any] = Field(default_factory=dict)
    simulated: bool = False


def check_plan_size(plan: Plan, row_id: str, max_bytes: int) -> None:
    """A plan is stored once per row and read by every unit task; one past the bound (a runaway
    rubric, huge candidates) fails its row instead of filling Redis and the workers."""
    size = len(plan.model_dump_json().encode("utf-8"))
    if size > max_bytes:
        raise InputError(
            row_id,
            "(plan)",
            f"the row's plan (its rubric or responses as JSON) is {size:,} bytes, over the limit"
            f" of {max_bytes:,} (EVALQ_MAX_PLAN_BYTES)",
        )


@dataclass
class RowContext:
    job: JobConfig
    row: RowInput
    judge: Callable[[str], Judge]  # judge(model) -> a judge that caches and accounts its calls
    candidate: Callable[[str], Judge]  # the model under test; its calls are counted apart
    media: Callable[[str], MediaPart]  # media(field) -> loaded media; raises InputError
    kv: KeyValue
    count: Callable[[str, int], None]  # count(counter, amount) on the job's counters
    cache_ttl_s: int = 30 * 24 * 3600  # how long kv entries (rubrics) live: EVALQ_RUBRIC_TTL_S

    @property
    def options(self) -> dict[str, Any]:
        return self.job.options


class Metric(Protocol):
    name: str
    required_columns: tuple[str, ...]  # a CSV header without them is no dataset for this metric

    def parse_row(
        self,
        number: int,
        record: dict[str, Any],
        base_dir: Path,
        options: Mapping[str, Any],
        warnings: list[str],
    ) -> RowInput:
        """Validate one dataset record; raise InputError naming the row and field."""
        ...

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        """Dataset-level checks before anything is enqueued: raise DatasetError, or warn."""
        ...

    def plan(self, ctx: RowContext) -> Plan:
        """Prepare the row's units (may call judges); JudgeError/InputError fail the row."""
        ...

    def run_unit(self, ctx: RowContext, plan: Plan, unit: Unit) -> Verdict:
        """One judge call. Rate limits and spent daily quotas propagate; the rest is unscored."""
        ...

    def aggregate(self, row: RowInput, plan: Plan, results: Mapping[int, Verdict]) -> RowResult:
        """Score the row from its units' verdicts (missing ones count as unscored)."""
        ...

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        """Metric-specific job figures (per-judge means, agreement, win rates...)."""
        ...

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The row's calls for a dry run, each handed to ``env.call`` built as ``plan`` and
        ``run_unit`` would build it, without calling anything; InputError fails the row."""
        ...


# name -> "module:attribute"; imported on first use so a metric's dependencies load lazily.
REGISTRY: dict[str, str] = {
    "gecko-image": "evalq.metrics.gecko.metric:GECKO_IMAGE",
    "gecko-video": "evalq.metrics.gecko_video.metric:GECKO_VIDEO",
    "groundedness": "evalq.metrics.groundedness.metric:GROUNDEDNESS",
    "pointwise": "evalq.metrics.pointwise.metric:POINTWISE",
    "pairwise": "evalq.metrics.pairwise.metric:PAIRWISE",
    "rank": "evalq.metrics.ranking.metric:RANK",
}


def get_metric(name: str) -> Metric:
    from evalq.core.errors import DatasetError

    target = REGISTRY.get(name)
    if target is None:
        raise DatasetError(f"unknown metric {name!r}; available: {', '.join(sorted(REGISTRY))}")
    module, attribute = target.split(":")
    metric: Metric = getattr(importlib.import_module(module), attribute)
    return metric
