"""Groundedness with `--samples auto` and `--samples K` end to end: real Redis, a real worker,
the noisy simulated judge over HTTP. Rows whose sentences the judge labels the same every time
stop early, a sentence it labels 50/50 is asked further, an undecided sentence is never a sure
label, and every sample is one judge call counted once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.core.models import RowResult
from tests.conftest import FakeGemini
from tests.support.noisy_rows import noisy_grounded_rows

pytestmark = pytest.mark.integration


def _grounded_job(
    client: Any, data: Path, judge: str, samples: int | str
) -> tuple[Any, dict[str, RowResult]]:
    job = client.submit("groundedness", data, judge_model=judge, options={"samples": samples})
    summary = client.wait(job.job_id, timeout_s=180)
    assert summary.status == "finished"
    return summary, {r.id: r for r in client.results(job.job_id)}


def _labellings(rows: dict[str, RowResult]) -> int:
    """Judge calls the rows' repeats account for: one per sample of each judge's labelling."""
    return sum(len(row.repeats[0].samples) for row in rows.values())


def test_groundedness_auto_stops_easy_rows_early_and_never_labels_a_split_sentence_sure(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = noisy_grounded_rows(tmp_path, easy=3, split=3, tag="gr-auto")
    judge = "judge-adaptive-grounded"
    plan = client.plan("groundedness", data, judge_model=judge, options={"samples": "auto"})
    assert (plan.calls_min, plan.calls_total) == (6 * 3, 6 * 8)
    summary, rows = _grounded_job(client, data, judge, "auto")
    for i in range(3):
        row = rows[f"easy{i}"]
        assert {len(r.samples) for r in row.repeats} == {3}  # stopped at the first sure point
        assert all(r.decided for r in row.repeats)
        assert row.score == 1
    for i in range(3):
        row = rows[f"split{i}"]
        first, torn = row.repeats[0], row.repeats[1]
        assert first.verdict == "supported" and first.decided
        assert torn.unit.startswith("s2: The Eiffel Tower")
        assert len(torn.samples) > 3  # its first three disagree: asked further
        labelled = row.details["judges"][judge]["response_sentences"][1]
        if torn.decided:
            assert labelled["label"] == torn.verdict
            assert row.score == (1 if torn.verdict == "supported" else 0)
        else:
            assert torn.verdict is None
            assert (labelled["label"], labelled["status"]) == (None, "undecided")
            share = sum(s.answer == "supported" for s in torn.samples) / len(torn.samples)
            assert row.score == pytest.approx(share)
            assert 0 < row.score < 1  # a split vote, never a sure 0 or 1
    assert fake.stats()["requests"] == summary.judge_calls == _labellings(rows)
    assert summary.simulated


def test_groundedness_fixed_samples_ask_every_labelling_k_times_and_fill_repeats(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = noisy_grounded_rows(tmp_path, easy=2, split=1, tag="gr-fixed")
    summary, rows = _grounded_job(client, data, "judge-fixed-grounded", 3)
    for row in rows.values():
        assert row.repeats and all(len(r.samples) == 3 for r in row.repeats)
        assert all(r.rule == "fixed" for r in row.repeats)
    assert summary.judge_calls == fake.stats()["requests"] == 3 * 3
    assert summary.judge_setup["samples"] == 3  # a score moves with the samples asked
