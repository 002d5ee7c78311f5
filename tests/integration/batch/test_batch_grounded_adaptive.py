"""Groundedness with `--samples auto` in batch mode: a labelling with an undecided sentence
goes into the next batch, a bounded number of rounds, and its samples are the online job's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.batches import FAST_POLLS
from tests.support.noisy_rows import noisy_grounded_rows
from tests.support.stack import stack

pytestmark = pytest.mark.integration
GROUNDED_AUTO = {"samples": "auto:6"}


def test_undecided_labellings_go_into_the_next_batch_and_match_the_online_samples(
    tmp_path: Path,
) -> None:
    data = noisy_grounded_rows(tmp_path, easy=2, split=2, tag="gr-batch")
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        client = s.client()
        batch = client.submit(
            "groundedness",
            data,
            judge_model="gemini-2.5-flash",
            options=GROUNDED_AUTO,
            mode="batch",
        ).job_id
        done = client.wait(batch, timeout_s=300)
        rounds = s.stats()["batches"]["created"]
        batch_rows = {r.id: r for r in client.results(batch)}
        online = client.submit(
            "groundedness", data, judge_model="gemini-2.5-flash-001", options=GROUNDED_AUTO
        ).job_id
        assert client.wait(online, timeout_s=300).status == "finished"
        online_rows = {r.id: r for r in client.results(online)}
    assert done.status == "finished" and done.rows_scored == 4
    most = max(len(r.repeats[0].samples) for r in batch_rows.values())
    assert rounds == most <= 6  # one labelling per round, each round one batch
    assert {
        k: [[s.answer for s in rep.samples] for rep in r.repeats] for k, r in batch_rows.items()
    } == {k: [[s.answer for s in rep.samples] for rep in r.repeats] for k, r in online_rows.items()}
    assert all(len(batch_rows[f"easy{i}"].repeats[0].samples) == 3 for i in range(2))
    assert {k: r.score for k, r in batch_rows.items()} == {
        k: r.score for k, r in online_rows.items()
    }
