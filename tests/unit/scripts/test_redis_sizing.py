"""The arithmetic of devtools/redis_sizing.py: from two measured jobs that differ only in their
questions, the bytes of one question and of a row apart from its questions."""

from __future__ import annotations

import pytest

from devtools.redis_sizing import (
    JobBytes,
    maxmemory_for,
    per_question,
    per_row_apart_from_questions,
)


def job_bytes(rows: int, questions: int, finished: int) -> JobBytes:
    return JobBytes(
        rows=rows,
        questions=questions,
        submitted=0,
        broker=0,
        messages=0,
        finished=finished,
        celery_results=0,
    )


def test_slope_and_intercept_recover_the_bytes_they_were_made_from() -> None:
    row, question = 4000, 2500
    few = job_bytes(100, 200, 100 * row + 200 * question)
    many = job_bytes(100, 1200, 100 * row + 1200 * question)
    assert per_question(few, many) == question
    assert per_row_apart_from_questions(few, question) == row
    assert per_row_apart_from_questions(many, question) == row


def test_jobs_with_as_many_questions_cannot_say_what_a_question_costs() -> None:
    with pytest.raises(ValueError, match="differ in their number of questions"):
        per_question(job_bytes(10, 20, 1), job_bytes(10, 20, 2))


def test_maxmemory_leaves_half_again_as_headroom() -> None:
    assert maxmemory_for(1000, 16_000) == 24_000_000
