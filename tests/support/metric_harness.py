"""A metric run in-process with in-memory judges, no Redis and no Celery: plan -> units ->
aggregate -> summarize over a RowContext the test builds, media read from the dataset's folder.
The ratings metrics' unit tests (pointwise, pairwise, rank) and the truncation tests use it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalq.core.data_roots import DataRoots
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import InputError
from evalq.core.judge import JudgeReply, JudgeRequest, MediaPart
from evalq.core.media import DOCUMENT_TYPES, MediaRules, load_media
from evalq.core.metric import RowContext, get_metric
from evalq.core.models import JobConfig, RowInput, RowResult, Verdict
from evalq.fake_gemini.brain import SimulatedJudge
from evalq.fake_gemini.protocol import FakeMedia, FakeRequest
from tests.support.contexts import run_row
from tests.support.memory_kv import MemoryKV

Reply = Callable[[JudgeRequest], str]


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
    )
    return SimulatedJudge().reply(fake)


@dataclass
class Harness:
    """Runs a metric's plan -> units -> aggregate -> summarize in-process."""

    metric: str
    options: dict[str, Any]
    judges: Mapping[str, Any]  # model -> Judge
    candidates: Mapping[str, Any] = field(default_factory=dict)

    def job(self, rows_total: int = 1) -> JobConfig:
        models = list(self.judges)
        return JobConfig(
            job_id="test",
            metric=self.metric,
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

    def load(self, path: Path) -> LoadedDataset:
        return load_dataset(path, self.metric, self.options)

    def run_row(self, row: RowInput) -> tuple[Any, dict[int, Verdict], RowResult]:
        """plan -> run_unit per unit -> aggregate, the plan read back from its JSON as the
        tasks read it from the store."""
        return run_row(get_metric(self.metric), self.context(row))

    def run(self, rows: Sequence[RowInput]) -> tuple[list[RowResult], dict[str, Any]]:
        results = [self.run_row(row)[2] for row in rows]
        return results, get_metric(self.metric).summarize(results)


def qa_inputs(n: int = 1) -> list[RowInput]:
    return [
        RowInput(
            id=f"r{i}",
            line=i + 1,
            prompt=f"Question {i}?",
            data={"prompt": f"Question {i}?", "response": f"Answer {i}."},
        )
        for i in range(n)
    ]
