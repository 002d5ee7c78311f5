"""devtools/redis_sizing.py end to end, on jobs of 12 rows, held to the figures
docs/operations/redis.md's "Sizing Redis" quotes (measured on 300): a figure that is bytes per
unit (a message, a question, Celery's record of a row) is the same at any size, and a figure
per row is at least the documented one, the job's own fixed keys spread over fewer rows adding
to it, and within the half again the guide's maxmemory rule adds."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.redis_sizing import FEW_QUESTIONS, MANY_QUESTIONS, measure
from evalq.worker.settings import Settings
from tests.support.sizing_guide import documented

pytestmark = pytest.mark.integration

ROWS = 12  # more than the window holds with no worker alive, so the broker holds fewer


def test_sizing_measures_what_the_guide_quotes(tmp_path: Path) -> None:
    figures = measure(tmp_path, ROWS, timeout_s=300)
    guide = documented()
    jobs, waiting = figures["jobs"], figures["waiting"]
    assert (jobs["few"]["questions"], jobs["many"]["questions"]) == (
        ROWS * FEW_QUESTIONS,
        ROWS * MANY_QUESTIONS,
    )
    assert jobs["typical"]["rows"] == waiting["rows"] == ROWS
    assert figures["typical_questions_per_row"] == 4  # "the judge writes its rubric, 4 questions"

    # The broker holds the turns' window, not the job: with no worker alive, its least.
    assert waiting["messages"] == Settings().turn_window_min < ROWS
    # Per unit: the same bytes at 12 rows as at 300.
    assert figures["bytes_per_queued_message"] == pytest.approx(guide.message, rel=0.02)
    assert figures["typical_celery_results_bytes_per_row"] == pytest.approx(
        guide.celery_per_row, rel=0.02
    )
    assert figures["own_questions_bytes_per_question"] == pytest.approx(guide.question, rel=0.05)
    # Per row: the documented slope plus the job's fixed keys over 12 rows.
    assert figures["typical_submitted_bytes_per_row"] >= guide.waiting_row
    assert figures["own_questions_bytes_per_row_apart_from_questions"] >= guide.row_apart
    assert (
        guide.finished_row <= figures["typical_finished_bytes_per_row"] <= 1.5 * guide.finished_row
    )
