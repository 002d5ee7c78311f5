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
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from evalq.core.errors import DatasetError, InputError, StoredPlanError
from evalq.core.judge import Judge, JudgeReply, MediaPart
from evalq.core.models import (
    JobConfig,
    MediaRef,
    Question,
    RowInput,
    RowResult,
    Rubric,
    Verdict,
)
from evalq.core.registry import metric_names, metrics
from evalq.core.shared_cache import KeyValue

if TYPE_CHECKING:  # annotations only: the media rules load with the loader, not the store
    from evalq.core.dry_run import DryEnv
    from evalq.core.label_reading import HumanLabels
    from evalq.core.media import MediaPlace
    from evalq.core.row_value import RowValue
    from evalq.core.row_view import JudgedInput, ViewParts


Record = dict[str, Any]  # one dataset record, as read from the file
Options = Mapping[str, Any]  # the job's metric options (ctx.options)


class Unit(BaseModel):
    """One judge call of a row's fan-out. Each metric subclasses it with typed fields saying
    what the call is (which judge, question, sample, order...)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    kind: str  # each metric's unit type names its own (a Literal with its default)


UnitT = TypeVar("UnitT", bound=Unit)


class Plan(BaseModel, Generic[UnitT]):
    """What a row needs done, fixed once per row (a redelivery reuses it, keeping indexes).

    Each metric subclasses it with its own typed fields and unit type, and names the subclass
    as its ``plan_model``: a stored plan is validated once, when the store reads it, and the
    metric's run_unit and aggregate read typed attributes, never a dict re-checked per unit.
    """

    model_config = ConfigDict(extra="forbid")

    units: list[UnitT]
    simulated: bool = False


PlanT = TypeVar("PlanT", bound=Plan[Any])


def load_plan(model: type[PlanT], text: str | bytes, where: str) -> PlanT:
    """A stored plan as its metric's plan model. One that does not fit (damaged, or written by
    an evalq whose plans were untyped dicts) raises StoredPlanError naming the first misfit."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(the plan)"
        raise StoredPlanError(
            f"{where}: the stored plan does not fit {model.__name__} ({exc.error_count()} "
            f"problem(s); first at {field}: {first['msg']}). Plans written by an older evalq "
            "do not load: run the job again."
        ) from None


def check_plan_size(plan: Plan[Any], row_id: str, max_bytes: int) -> None:
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


UnitT_contra = TypeVar("UnitT_contra", bound=Unit, contravariant=True)


# What the judge was shown of a row, by the metric's field name: a text, or a media file.
Judged = dict[str, str | MediaRef]


class Metric(Protocol[PlanT, UnitT_contra]):
    """What a metric is. Its attributes are read-only here, so a metric class may declare
    them as plain class attributes of narrower types (judge_roles = ("judge",))."""

    @property
    def name(self) -> str: ...

    @property
    def required_columns(self) -> tuple[str, ...]:
        """A CSV header without them is no dataset for this metric."""
        ...

    @property
    def plan_model(self) -> type[PlanT]:
        """What the store loads the row's stored plan as."""
        ...

    @property
    def judged_units(self) -> str:
        """What one unit's verdict is, in the metric's own words, plural ("questions",
        "ratings", "comparisons"...): the summary counts unscored ones under it."""
        ...

    @property
    def judge_roles(self) -> tuple[str, ...]:
        """The roles whose calls the metric makes (evalq.core.thinking.Role; the model under
        test's "candidate" aside): the summary shows thinking and rubric reuse for these roles
        only, so a rating job is not described in a question-writing job's words."""
        ...

    # What the metric says of itself to the client, the comparisons and the core, which ask
    # it instead of branching on its name (tests/unit/test_metric_names.py walks the tree for
    # such branches).

    @property
    def candidate_field(self) -> str | None:
        """The field a --candidates column stands in for (a Gecko image, a pointwise
        response); None for a metric whose rows are not judged one candidate at a time."""
        ...

    @property
    def own_candidates(self) -> bool:
        """True: --candidates names the columns the metric compares inside each row (rank)."""
        ...

    @property
    def shows_media(self) -> bool:
        """True: a report shows the row's media as a thumbnail, not its name among texts."""
        ...

    @property
    def compared_on(self) -> RowValue:
        """The value two jobs' rows are compared on (`evalq compare`), with its scale."""
        ...

    @property
    def human_labels(self) -> HumanLabels:
        """How a rater's labels are read: the --human column's, and sentence labels."""
        ...

    def view(self, result: RowResult, named: list[JudgedInput], row: RowInput | None) -> ViewParts:
        """The row as a person reads it in a report: a headline, the texts (``named``: what
        the judge was shown, under the dataset's names), each verdict with its explanation.
        Never raises on odd details: a report renders whatever a job stored."""
        ...

    def refusal(self, options: Options, judges: list[str], vertexai: bool) -> str | None:
        """Why a job with these options can not run on these judge models (a --soft Gecko
        job on a judge that refuses log probabilities), before anything is stored; None
        when it can."""
        ...

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        """What the judge was shown of a stored row, by field name (the data's or media's
        key, or the prompt), in the order it was shown: every text it read, responses the
        model under test wrote for it (from the result's details) included, and its media."""
        ...

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        """Validate one dataset record; raise InputError naming the row and field. Its media
        cells are read as `place` says: from the dataset's folder, under the job's rules."""
        ...

    def check(self, rows: list[RowInput], options: Mapping[str, Any]) -> list[str]:
        """Dataset-level checks before anything is enqueued: raise DatasetError, or warn."""
        ...

    def plan(self, ctx: RowContext) -> PlanT:
        """Prepare the row's units (may call judges); JudgeError/InputError fail the row."""
        ...

    def run_unit(self, ctx: RowContext, plan: PlanT, unit: UnitT_contra) -> Verdict:
        """One judge call. Rate limits and spent daily quotas propagate; the rest is unscored."""
        ...

    def aggregate(self, row: RowInput, plan: PlanT, results: Mapping[int, Verdict]) -> RowResult:
        """Score the row from its units' verdicts (missing ones count as unscored)."""
        ...

    def summarize(self, rows: list[RowResult]) -> dict[str, Any]:
        """Metric-specific job figures (per-judge means, agreement, win rates...)."""
        ...

    def dry_plan(self, row: RowInput, env: DryEnv) -> None:
        """The row's calls for a dry run, each handed to ``env.call`` built as ``plan`` and
        ``run_unit`` would build it, without calling anything; InputError fails the row."""
        ...


@runtime_checkable
class QuestionSetMetric(Protocol):
    """What a metric that judges each row on a set of questions per prompt (Gecko) offers
    beside the Metric protocol, so the client side can freeze those sets (`evalq rubrics`) and
    run a job on another job's questions (`--questions-from`) without knowing which metric it
    is. Metrics without question sets do not have these; ask with isinstance."""

    def plan_questions(self, plan: Any) -> list[Question]:
        """The questions a stored plan (its ``plan_model``) asked: the row's whole set."""
        ...

    def rubric_key(self, prompt: str, model: str) -> str:
        """The name in the shared rubric cache of the questions `model` writes for `prompt`
        (the key the workers read and write)."""
        ...

    def write_questions(self, judge: Judge, prompt: str) -> tuple[Rubric, list[JudgeReply]]:
        """The prompt's questions as the workers' rubric judge writes them, and its replies."""
        ...


def load_target(target: str) -> Any:
    """The object a registry entry names ("module:attribute")."""
    module, attribute = target.split(":")
    return getattr(importlib.import_module(module), attribute)


def get_metric(name: str) -> Metric[Any, Any]:
    entry = metrics().get(name)
    if entry is None:
        from evalq.core.near_miss import did_you_mean

        hint = did_you_mean(name, metric_names())
        raise DatasetError(f"unknown metric {name!r}{hint}; available: {', '.join(metric_names())}")
    metric: Metric[Any, Any] = load_target(entry.metric)
    return metric


def known_metric(name: str) -> Metric[Any, Any] | None:
    """The metric of a stored job, or None when this evalq does not have it (a job run with
    a metric package since uninstalled): its views fall back to what every row has."""
    return get_metric(name) if name in metrics() else None


# A metric's say in its job's judge setup (registry MetricEntry.setup): what its judges were
# asked with beyond the judge models and thinking, as plain JSON values.
MetricSetup = Callable[[JobConfig], dict[str, Any]]


def metric_setup(job: JobConfig) -> dict[str, Any]:
    """What the job's metric says of how its judges were set up (its prompt template versions,
    validator mode, samples...); {} for a metric that says nothing. Looked up by name, as the
    metric itself is, so the core never branches on one. Options the metric can not read
    (checked at submit, so only a config stored by another evalq) say nothing either: the
    summary they are part of must still be written."""
    entry = metrics().get(job.metric)
    if entry is None or entry.setup is None:
        return {}
    setup: MetricSetup = load_target(entry.setup)
    try:
        return setup(job)
    except DatasetError:
        return {}
