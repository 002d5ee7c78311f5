"""What a Gecko job's judges were set up with, for JobSummary.judge_setup: the rubric and
validator templates, the validator mode, who writes the rubric, --soft and --samples. A comparison of two
jobs names any of them that differ (evalq.comparisons.setups): a score moves with them."""

from __future__ import annotations

from typing import Any

from evalq.core.models import JobConfig
from evalq.metrics.gecko.judges import rubric_model
from evalq.metrics.gecko.modes import soft_mode, validator_mode
from evalq.metrics.gecko.rubric import IMAGE_RUBRIC, RubricSpec
from evalq.metrics.gecko.validation import IMAGE_VALIDATOR, ValidatorSpec


def gecko_setup(job: JobConfig, rubric: RubricSpec, validator: ValidatorSpec) -> dict[str, Any]:
    """A Gecko metric's setup, given the rubric and validator it asks with."""
    mode = validator_mode(job.options)
    setup: dict[str, Any] = {
        "templates": {"rubric": rubric.template_version, **validator.templates(mode == "batched")},
        "validator": mode,
        "rubric_model": rubric_model(job),
        "soft": soft_mode(job.options),
    }
    if job.options.get("samples") not in (None, 1):  # asked again: a score moves with it
        setup["samples"] = job.options["samples"]
    return setup


def image_setup(job: JobConfig) -> dict[str, Any]:
    return gecko_setup(job, IMAGE_RUBRIC, IMAGE_VALIDATOR)
