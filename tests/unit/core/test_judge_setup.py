"""A job's judge setup (JobSummary.judge_setup): its judge models, the versions its rows were
judged by, thinking per judge role and what its metric says of itself (template versions,
validator mode, samples...), each metric from its own package (its registry entry's setup)."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.counters import JobCounters
from evalq.core.metric import metric_setup
from evalq.core.models import JobConfig, RowResult
from evalq.core.registry import metric_names, metrics
from evalq.core.summary import build_summary
from evalq.metrics.gecko.choices import MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION
from evalq.metrics.gecko.prompts import (
    BATCH_VALIDATOR_TEMPLATE_VERSION,
    CHOICE_VALIDATOR_TEMPLATE_VERSION,
    RUBRIC_TEMPLATE_VERSION,
    VALIDATOR_TEMPLATE_VERSION,
)
from evalq.metrics.gecko_video.prompts import (
    VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION,
    VIDEO_RUBRIC_TEMPLATE_VERSION,
)
from evalq.metrics.groundedness.prompts import JUDGE_TEMPLATE_VERSION
from evalq.metrics.ratings.templates import resolve_template
from tests.support.job_configs import job_config

THINKING: dict[str, int | str] = {
    "rubric": "modest",
    "validator": 0,
    "judge": "min",
    "candidate": "default",
}


def flash_job(metric: str, **fields: Any) -> JobConfig:
    """A job of `metric` judged by "flash" unless `fields` say otherwise."""
    return job_config(metric, **({"judge_model": "flash"} | fields))


def versioned_row(line: int, versions: dict[str, str]) -> RowResult:
    return RowResult(
        id=str(line), line=line, prompt="p", status="scored", score=1.0, model_versions=versions
    )


def setup_of(job: JobConfig, rows: list[RowResult]) -> dict[str, Any]:
    counters = JobCounters(status="finished", rows_done=len(rows), rows_scored=len(rows))
    return build_summary(job, counters, {}, rows, now=1.0).judge_setup


def test_a_gecko_jobs_setup_names_its_models_versions_templates_and_modes() -> None:
    job = flash_job(
        "gecko-image",
        judge_models=["flash", "pro"],
        thinking=THINKING,
        options={"rubric_model": "pro"},
    )
    rows = [
        versioned_row(1, {"flash": "flash-001"}),
        versioned_row(2, {"flash": "flash-002", "pro": "pro-001"}),
    ]
    assert setup_of(job, rows) == {
        "judge_models": ["flash", "pro"],
        "model_versions": {"flash": "flash-001,flash-002", "pro": "pro-001"},
        # The model under test's thinking is not the judge's.
        "thinking": {"rubric": "modest", "validator": 0},  # the roles Gecko calls
        "templates": {
            "rubric": RUBRIC_TEMPLATE_VERSION,
            "validator": VALIDATOR_TEMPLATE_VERSION,
            "choice validator": CHOICE_VALIDATOR_TEMPLATE_VERSION,
        },
        "validator": "per-question",
        "rubric_model": "pro",
        "soft": False,
    }


def test_the_validator_mode_picks_the_templates() -> None:
    batched = metric_setup(flash_job("gecko-image", options={"validator": "batched"}))
    assert batched["templates"]["validator"] == BATCH_VALIDATOR_TEMPLATE_VERSION
    assert batched["templates"]["choice validator"] == MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION
    assert (batched["validator"], batched["rubric_model"]) == ("batched", "flash")
    video = metric_setup(flash_job("gecko-video", options={"validator": "batched"}))
    assert video["templates"] == {
        "rubric": VIDEO_RUBRIC_TEMPLATE_VERSION,
        "validator": VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION,
    }


def test_a_rating_jobs_setup_names_its_template_samples_and_temperature() -> None:
    options = {"template": "fluency", "samples": 3}
    assert metric_setup(flash_job("pointwise", options=options)) == {
        "templates": {"judge": resolve_template(options, "pointwise").version},
        "samples": 3,
        "temperature": 0.7,
    }
    own = {"template": "mine", "template_text": "Rate {response}, A {response_a} B {response_b}"}
    pairwise = metric_setup(flash_job("pairwise", options=own))
    assert pairwise["templates"]["judge"].startswith("pairwise-frame/2+user:")  # its digest
    assert metric_setup(flash_job("rank", options=own)) == pairwise
    assert metric_setup(flash_job("groundedness")) == {
        "templates": {"judge": JUDGE_TEMPLATE_VERSION}
    }


def test_options_a_metric_can_not_read_say_nothing_and_the_summary_is_written() -> None:
    job = flash_job("pointwise")  # no template: refused at submit, so only a foreign config
    assert metric_setup(job) == {}
    assert setup_of(job, [versioned_row(1, {"flash": "flash-001"})])["model_versions"] == {
        "flash": "flash-001"
    }


@pytest.mark.parametrize("metric", metric_names())
def test_every_metric_says_how_its_judges_are_set_up(metric: str) -> None:
    assert metrics()[metric].setup is not None
    options = {"template": "fluency", "candidates": ["a", "b"]}
    assert "templates" in metric_setup(flash_job(metric, options=options))
