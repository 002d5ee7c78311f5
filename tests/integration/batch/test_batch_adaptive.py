"""`--samples auto` in batch mode: an undecided unit's next sample goes into the next batch,
so a job takes as many rounds as its most undecided unit needs samples, at most the maximum;
its samples and verdicts are the online job's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.batches import FAST_POLLS
from tests.support.noisy_rows import noisy_pointwise_rows
from tests.support.stack import stack

pytestmark = pytest.mark.integration
OPTIONS = {"template": "question_answering_quality", "samples": "auto:6"}


def test_undecided_units_go_into_the_next_batch_a_bounded_number_of_rounds(
    tmp_path: Path,
) -> None:
    data = noisy_pointwise_rows(tmp_path, easy=3, split=2)
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        client = s.client()
        batch = client.submit(
            "pointwise", data, judge_model="gemini-2.5-flash", options=OPTIONS, mode="batch"
        ).job_id
        done = client.wait(batch, timeout_s=300)
        rounds = s.stats()["batches"]["created"]
        batch_rows = {r.id: r for r in client.results(batch)}
        online = client.submit(
            "pointwise", data, judge_model="gemini-2.5-flash-001", options=OPTIONS
        ).job_id
        assert client.wait(online, timeout_s=300).status == "finished"
        online_rows = {r.id: r for r in client.results(online)}
    assert done.status == "finished" and done.rows_scored == 5
    most = max(len(r.repeats[0].samples) for r in batch_rows.values())
    assert rounds == most <= 6  # one sample per round, each round one batch
    assert {k: [s.answer for s in r.repeats[0].samples] for k, r in batch_rows.items()} == {
        k: [s.answer for s in r.repeats[0].samples] for k, r in online_rows.items()
    }
    assert all(len(batch_rows[f"easy{i}"].repeats[0].samples) == 3 for i in range(3))
