"""What a groundedness job's judges were set up with, for JobSummary.judge_setup: the judge's
template. The model under test and its prompt are what a comparison compares, not the judge,
so they stay out."""

from __future__ import annotations

from typing import Any

from evalq.core.models import JobConfig
from evalq.metrics.groundedness.prompts import JUDGE_TEMPLATE_VERSION


def groundedness_setup(job: JobConfig) -> dict[str, Any]:
    setup: dict[str, Any] = {"templates": {"judge": JUDGE_TEMPLATE_VERSION}}
    if job.options.get("samples") not in (None, 1):  # asked again: a score moves with it
        setup["samples"] = job.options["samples"]
    return setup
