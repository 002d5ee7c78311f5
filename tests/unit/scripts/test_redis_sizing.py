"""The arithmetic of devtools/redis_sizing.py: from two measured jobs that differ only in their
questions, the bytes of one question and of a row apart from its questions; and the sizing
guide's advice, which is arithmetic on the figures it quotes."""

from __future__ import annotations

import re

import pytest

from devtools.redis_sizing import (
    JobBytes,
    maxmemory_for,
    per_question,
    per_row_apart_from_questions,
)
from tests.support.sizing_guide import documented, guide_text


def job_bytes(rows: int, questions: int, finished: int) -> JobBytes:
    return JobBytes(rows=rows, questions=questions, finished=finished, celery_results=0)


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


def test_the_guides_advice_follows_from_its_table() -> None:
    """The prose rounds the table's figures into a rule and two examples: re-measured figures
    pasted into the table without the prose following would size Redis by the old ones."""
    figures = documented()
    text = " ".join(guide_text().split())
    per_row_kb, per_question_kb = figures.finished_row / 1000, figures.question / 1000
    assert f"rows finished within the TTL x {per_row_kb:.1f} KB" in text
    assert f"counting {per_question_kb:.1f} KB per question" in text
    held = re.search(r"default 2 GB holds about ([\d,]+) typical finished rows", text)
    assert held, text
    two_gb = 2 * 1024**3  # Redis reads maxmemory 2gb in binary units
    assert int(held.group(1).replace(",", "")) == pytest.approx(
        two_gb / maxmemory_for(1, figures.finished_row), rel=0.05
    )
    million = re.search(r"a million rows a week needs about (\d+) GB", text)
    assert million, text
    assert int(million.group(1)) == round(maxmemory_for(10**6, figures.finished_row) / 1e9)
