"""Each metric's dry_plan, pure: an in-memory cache, no Redis."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from evalq.core.dry_report import quota_time
from evalq.core.dry_run import CallTally, CharsCounter, DryEnv
from evalq.core.errors import InputError
from evalq.core.judge import MediaPart
from evalq.core.metric import get_metric
from evalq.core.models import Coverage, JobConfig, Question, RowInput, Rubric
from evalq.core.pricing import DEFAULT_PRICES
from evalq.core.thinking import effective
from evalq.metrics.gecko.metric import rubric_cache_id
from evalq.metrics.gecko.prompts import RUBRIC_TEMPLATE_VERSION
from tests.support.images import png_bytes
from tests.support.memory_kv import MemoryKV


def env_for(
    metric: str,
    judges: list[str],
    options: dict[str, Any] | None = None,
    kv: MemoryKV | None = None,
) -> DryEnv:
    job = JobConfig(
        job_id="000000000000",
        metric=metric,
        judge_model=judges[0],
        judge_models=judges,
        dataset="d.jsonl",
        rows_total=1,
        created_at=time.time(),
        options=options or {},
        thinking=effective(),
    )
    image = MediaPart(mime_type="image/png", data=png_bytes())

    def media(row: RowInput, field: str) -> MediaPart:
        if field not in row.media:
            raise InputError(row.id, field, "missing")
        return image

    return DryEnv(job=job, counter=CharsCounter(), prices=DEFAULT_PRICES, media_loader=media, kv=kv)


def call_counts(env: DryEnv) -> dict[tuple[str, str], int]:
    return {key: tally.calls for key, tally in env.tallies.items()}


def gecko_row(row_id: str, prompt: str, questions: list[Question] | None = None) -> RowInput:
    from evalq.core.models import MediaRef

    return RowInput(
        id=row_id,
        line=int(row_id[-1]) if row_id[-1].isdigit() else 1,
        prompt=prompt,
        media={"image": MediaRef(kind="path", value="/x.png")},
        questions=questions,
    )


def test_gecko_rubric_once_per_prompt_cached_rubrics_exact_and_judges_times_questions() -> None:
    kv = MemoryKV()
    cached = Rubric(
        questions=[Question(question=f"q{i}?", expected="yes") for i in range(7)],
        coverage=Coverage(),
        template_version=RUBRIC_TEMPLATE_VERSION,
        judge_model="gemini-2.5-flash",
    )
    kv.data[rubric_cache_id("cached prompt", "gemini-2.5-flash", RUBRIC_TEMPLATE_VERSION)] = (
        cached.model_dump_json()
    )
    env = env_for("gecko-image", ["gemini-2.5-flash", "gemini-2.5-pro"], kv=kv)
    metric = get_metric("gecko-image")
    metric.dry_plan(gecko_row("r1", "a red cube beside a green ball"), env)
    metric.dry_plan(gecko_row("r2", "a red cube beside a green ball"), env)
    metric.dry_plan(gecko_row("r3", "cached prompt"), env)
    own = [Question(question="mine?", expected="no")]
    metric.dry_plan(gecko_row("r4", "whatever", own), env)
    estimated = 5  # red, cube, beside, green, ball
    assert env.counters["rubrics_to_write"] == 1 and env.counters["rubrics_shared"] == 1
    assert env.counters["rubrics_cached"] == 1 and env.counters["rubrics_given"] == 1
    per_judge = 2 * estimated + 7 + 1
    assert env.counters["questions_expected"] == per_judge
    assert call_counts(env) == {
        ("rubric", "gemini-2.5-flash"): 1,
        ("validator", "gemini-2.5-flash"): per_judge,
        ("validator", "gemini-2.5-pro"): per_judge,
    }
    # A 64x64 image is one tile: 258 tokens in every validator prompt.
    assert env.tallies["validator", "gemini-2.5-flash"].prompt > 258 * per_judge


def test_gecko_batched_asks_once_per_row_and_judge() -> None:
    env = env_for("gecko-image", ["gemini-2.5-flash"], {"validator": "batched"})
    own = [Question(question=f"q{i}?", expected="yes") for i in range(4)]
    get_metric("gecko-image").dry_plan(gecko_row("r1", "p", own), env)
    assert call_counts(env) == {("validator", "gemini-2.5-flash"): 1}
    assert env.tallies["validator", "gemini-2.5-flash"].output == 4 * 45


def test_gecko_a_row_without_its_media_fails_and_adds_nothing() -> None:
    env = env_for("gecko-image", ["gemini-2.5-flash"])
    row = RowInput(id="r", line=1, prompt="p")
    mark = env.mark()
    with pytest.raises(InputError):
        get_metric("gecko-image").dry_plan(row, env)
    env.rollback(mark)
    assert env.tallies == {} and env.counters == {}


def test_pointwise_judges_times_samples() -> None:
    env = env_for(
        "pointwise",
        ["gemini-2.5-flash", "gemini-2.5-pro"],
        {"samples": 4, "template": "fluency"},
    )
    row = RowInput(id="r", line=1, prompt="q", data={"prompt": "q", "response": "An answer."})
    get_metric("pointwise").dry_plan(row, env)
    assert call_counts(env) == {("judge", "gemini-2.5-flash"): 4, ("judge", "gemini-2.5-pro"): 4}
    assert env.tallies["judge", "gemini-2.5-pro"].thought == 4 * 128  # Pro's minimum


def test_rank_every_pair_both_orders_and_generations_of_the_model_under_test() -> None:
    options = {
        "candidates": ["a", "b", "terse"],
        "candidate_prompts": {"terse": "Answer in one line."},
        "candidate_model": "gemini-2.5-flash-lite",
    }
    env = env_for("rank", ["gemini-2.5-flash"], options)
    row = RowInput(id="r", line=1, prompt="q", data={"prompt": "q", "a": "A.", "b": "B."})
    get_metric("rank").dry_plan(row, env)
    assert call_counts(env) == {
        ("candidate", "gemini-2.5-flash-lite"): 1,
        ("judge", "gemini-2.5-flash"): 3 * 2,  # 3 pairs, both orders
    }
    assert env.counters["candidate pairs"] == 3
    # The model under test keeps its default thinking: Flash-Lite does not think by default.
    assert env.tallies["candidate", "gemini-2.5-flash-lite"].thought == 0


def test_groundedness_generates_when_the_row_has_no_response() -> None:
    env = env_for("groundedness", ["gemini-2.5-flash", "gemini-2.5-pro"])
    given = RowInput(
        id="r1",
        line=1,
        prompt="q",
        data={"query": "q", "context": "The sky is blue.", "response": "It is blue. Yes."},
    )
    missing = RowInput(id="r2", line=2, prompt="q", data={"query": "q", "context": "c"})
    metric = get_metric("groundedness")
    metric.dry_plan(given, env)
    metric.dry_plan(missing, env)
    assert call_counts(env) == {
        ("candidate", "gemini-2.5-flash"): 1,
        ("judge", "gemini-2.5-flash"): 2,
        ("judge", "gemini-2.5-pro"): 2,
    }
    # The model under test thinks by default (2.5 Flash): its allowance is counted as output.
    assert env.tallies["candidate", "gemini-2.5-flash"].thought == 8192


def test_time_at_quota_is_the_slowest_model_and_unknown_without_a_quota() -> None:
    tallies = {
        ("rubric", "pro"): CallTally(calls=10, prompt=1000),
        ("validator", "flash"): CallTally(calls=120, prompt=600_000),
    }
    quotas = {"pro": (5, None), "flash": (60, 100_000)}
    total, per_model, _ = quota_time(tallies, lambda m: quotas.get(m, (None, None)))
    assert per_model == {"flash": 6 * 60, "pro": 2 * 60}  # flash: tokens are the bottleneck
    assert total == 6 * 60
    missing, _, note = quota_time(tallies, lambda m: (None, None))
    assert missing is None and "no quota configured" in note


def test_example_datasets_plan_without_error(tmp_path: Path) -> None:
    from evalq.core.dataset import load_dataset
    from evalq.examples.gecko import write_gecko_image_example

    loaded = load_dataset(write_gecko_image_example(tmp_path / "ex"), "gecko-image")
    env = env_for("gecko-image", ["gemini-2.5-flash"])
    for row in loaded.rows:
        get_metric("gecko-image").dry_plan(row, env)
    assert env.counters["rubrics_to_write"] == len({r.prompt for r in loaded.rows})


@pytest.mark.parametrize(
    ("metric", "row", "options", "top", "bottom"),
    [
        (
            "pointwise",
            RowInput(id="r", line=1, prompt="q", data={"prompt": "q", "response": "An answer."}),
            {"samples": "auto", "template": "fluency"},
            8,
            3,
        ),
        (
            "pairwise",
            RowInput(
                id="r",
                line=1,
                prompt="q",
                data={"prompt": "q", "response_a": "A.", "response_b": "B."},
            ),
            {"samples": "auto:4"},
            8,
            4,
        ),
        (
            "gecko-image",
            gecko_row("r1", "p", [Question(question="Red?", expected="yes", tag="object")]),
            {"samples": "auto"},
            8,
            3,
        ),
    ],
)
def test_adaptive_repeats_plan_a_range_from_the_minimum_to_the_maximum(
    metric: str, row: RowInput, options: dict[str, Any], top: int, bottom: int
) -> None:
    env = env_for(metric, ["gemini-2.5-flash"], options)
    get_metric(metric).dry_plan(row, env)
    (tally,) = env.tallies.values()
    assert (tally.calls, tally.calls - tally.optional_calls) == (top, bottom)
    assert 0 < tally.optional_nanos < tally.cost_nanos
