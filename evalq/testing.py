"""A metric run in-process, the way evalq tests its own, over a RowContext built here and judged by
in-memory judges or the fake server's simulated judge: no Redis, no Celery, no worker, so a
metric from another package is tested with this alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalq.core.data_roots import DataRoots
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import InputError
from evalq.core.judge import JudgeReply, JudgeRequest, MediaPart
from evalq.core.media import DOCUMENT_TYPES, MediaPlace, MediaRules, load_media
from evalq.core.metric import Metric, Record, RowContext, get_metric, load_plan
from evalq.core.models import JobConfig, RowInput, RowResult, Verdict
from evalq.fake_gemini.brain import SimulatedJudge
from evalq.fake_gemini.protocol import FakeMedia, FakeRequest

Reply = Callable[[JudgeRequest], str]


class MemoryKV:
    """The metric context's small cache kept in a dict. Entries never expire: a test covers
    one run, not a rubric's lifetime. A test may read or seed ``data`` (a cached rubric)."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.data.get(key)

    def set(self, key: str, value: str, ttl_s: int) -> None:
        self.data[key] = value


@dataclass
class MemoryJudge:
    """A judge answering from a function of the request; keeps every request it saw."""

    model: str
    reply: Reply
    requests: list[JudgeRequest] = field(default_factory=list)

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        return JudgeReply(
            text=self.reply(request),
            model=self.model,
            model_version="memory",
            prompt_tokens=1,
            output_tokens=1,
            finish_reason="STOP",
        )


class FailingJudge:
    """A judge whose every call raises ``error`` (a JudgeError, a rate limit...)."""

    def __init__(self, model: str, error: Exception) -> None:
        self.model = model
        self.error = error

    def generate(self, request: JudgeRequest) -> JudgeReply:
        raise self.error


def simulated(request: JudgeRequest) -> str:
    """The fake server's brain, called in-process with what the HTTP layer would pass it."""
    system = request.system_instruction or ""
    fake = FakeRequest(
        model="sim",
        text=f"{system}\n{request.prompt}" if system else request.prompt,
        media=[FakeMedia(m.mime_type, m.data, m.uri) for m in request.media],
        response_schema=request.schema.model_json_schema() if request.schema else None,
        temperature=request.temperature,
        system=system,
        seed=request.sample if request.temperature > 0 else None,  # as the Gemini judge sends
    )
    return SimulatedJudge().reply(fake)


def run_row(metric: Metric[Any, Any], ctx: RowContext) -> tuple[Any, dict[int, Verdict], RowResult]:
    """plan -> run_unit per unit -> aggregate, as the tasks do, the plan read back from its JSON
    as the tasks read it from the store: the plan, each unit's verdict and the row's result."""
    planned = metric.plan(ctx)
    plan = load_plan(metric.plan_model, planned.model_dump_json(), ctx.row.id)
    assert plan == planned
    verdicts = {unit.index: metric.run_unit(ctx, plan, unit) for unit in plan.units}
    return plan, verdicts, metric.aggregate(ctx.row, plan, verdicts)


@dataclass
class Harness:
    """Runs a metric's plan -> units -> aggregate -> summarize in-process. ``metric``: a
    registered metric's name, or a metric object not registered (yet)."""

    metric: str | Metric[Any, Any]
    options: dict[str, Any]
    judges: Mapping[str, Any]  # model -> Judge
    candidates: Mapping[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> Metric[Any, Any]:
        return get_metric(self.metric) if isinstance(self.metric, str) else self.metric

    @property
    def name(self) -> str:
        return self.metric if isinstance(self.metric, str) else self.metric.name

    def job(self, rows_total: int = 1) -> JobConfig:
        models = list(self.judges)
        return JobConfig(
            job_id="test",
            metric=self.name,
            judge_model=models[0],
            judge_models=models,
            dataset="-",
            rows_total=rows_total,
            created_at=0.0,
            options=self.options,
        )

    def context(self, row: RowInput) -> RowContext:
        def media(name: str) -> MediaPart:
            ref = row.media.get(name)
            if ref is None:
                raise InputError(row.id, name, "missing")
            rules = MediaRules(roots=DataRoots.of(["/"]), max_bytes=10**7)  # datasets in tmp
            return load_media(ref, row.id, name, rules, DOCUMENT_TYPES)

        return RowContext(
            job=self.job(),
            row=row,
            judge=lambda model: self.judges[model],
            candidate=lambda model: self.candidates[model],
            media=media,
            kv=MemoryKV(),
            count=lambda name, amount: None,
        )

    def rows(self, records: Sequence[Record], folder: Path = Path()) -> list[RowInput]:
        """Records read by the metric's parse_row as a dataset's are, media under ``folder``."""
        place, options = MediaPlace(folder), self.options
        return [self.spec.parse_row(n, r, place, options, []) for n, r in enumerate(records, 1)]

    def load(self, path: Path) -> LoadedDataset:
        """A registered metric's dataset file, read and checked as `evalq run` reads it."""
        return load_dataset(path, self.name, self.options)

    def run_row(self, row: RowInput) -> tuple[Any, dict[int, Verdict], RowResult]:
        """plan -> run_unit per unit -> aggregate, the plan read back from its JSON as the
        tasks read it from the store."""
        return run_row(self.spec, self.context(row))

    def run(self, rows: Sequence[RowInput]) -> tuple[list[RowResult], dict[str, Any]]:
        results = [self.run_row(row)[2] for row in rows]
        return results, self.spec.summarize(results)
