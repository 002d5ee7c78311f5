"""A job's stored configuration (JobConfig) built by hand, for the code that reads one: the
summary, the judge setup, human agreement, the exports."""

from __future__ import annotations

from typing import Any

from evalq.core.models import JobConfig


def job_config(metric: str = "gecko-image", **fields: Any) -> JobConfig:
    """A job of `metric` with `fields` over defaults no test reads: a test names only what it is
    about, and a field JobConfig gains is filled in here once."""
    base: dict[str, Any] = {
        "job_id": "j",
        "metric": metric,
        "judge_model": "m",
        "dataset": "d.jsonl",
        "rows_total": 1,
        "created_at": 0.0,
    }
    return JobConfig(**(base | fields))
