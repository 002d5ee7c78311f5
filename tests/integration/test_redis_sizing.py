"""devtools/redis_sizing.py end to end, on small jobs: the figures docs/operations/redis.md's "Sizing Redis"
quotes come from real submits and finished jobs, and hang together."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.redis_sizing import FEW_QUESTIONS, MANY_QUESTIONS, measure

pytestmark = pytest.mark.integration


def test_sizing_measures_submitted_rows_their_messages_and_questions(tmp_path: Path) -> None:
    rows = 12
    figures = measure(tmp_path, rows, timeout_s=300)
    jobs = figures["jobs"]
    assert jobs["few"]["questions"] == rows * FEW_QUESTIONS
    assert jobs["many"]["questions"] == rows * MANY_QUESTIONS
    assert jobs["typical"]["rows"] == rows and jobs["typical"]["questions"] > 0
    for job in jobs.values():
        assert 0 < job["broker"] < job["submitted"] < job["finished"]  # messages, rows, results
        assert 0 < job["messages"] < rows * 2  # the turns' window, not every row's unit
        assert 0 < job["messages"] < rows * 2  # the turns' window, not every row's unit
        assert job["celery_results"] > 0
    assert jobs["many"]["finished"] > jobs["few"]["finished"]
    assert figures["own_questions_bytes_per_question"] > 0
    assert figures["bytes_per_queued_message"] > 0
    per_row = figures["typical_finished_bytes_per_row"]
    assert figures["maxmemory_for_1e6_typical_rows"] > 10**6 * per_row
