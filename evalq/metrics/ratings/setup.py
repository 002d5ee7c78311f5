"""What a rating job's judges were set up with, for JobSummary.judge_setup: the template's
version (a built-in rubric's, or a digest of the user's file), samples and temperature. The
same for pointwise, pairwise and rank (whose comparisons use the pairwise template)."""

from __future__ import annotations

from typing import Any, Literal

from evalq.core.models import JobConfig
from evalq.metrics.ratings.judging import adaptive_of, samples_of, temperature_of
from evalq.metrics.ratings.templates import resolve_template


def rating_setup(job: JobConfig, kind: Literal["pointwise", "pairwise"]) -> dict[str, Any]:
    samples = samples_of(job.options)
    return {
        "templates": {"judge": resolve_template(job.options, kind).version},
        "samples": job.options.get("samples", 1) if adaptive_of(job.options) else samples,
        "temperature": temperature_of(job.options, samples),
    }


def pointwise_setup(job: JobConfig) -> dict[str, Any]:
    return rating_setup(job, "pointwise")


def pairwise_setup(job: JobConfig) -> dict[str, Any]:
    """Pairwise's, and rank's: both judge with a pairwise template."""
    return rating_setup(job, "pairwise")
