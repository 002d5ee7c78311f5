"""`--samples auto` in batch mode: an undecided unit's next sample goes into the next batch,
so a job takes as many rounds as its most undecided unit needs samples, at most the maximum;
its samples and verdicts are the online job's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.core.models import JobSummary, RowResult
from evalq.examples.video import GECKO_VIDEO_EXAMPLES, clip_bytes
from tests.support.batches import FAST_POLLS
from tests.support.datasets import png, write_rows, yes_no
from tests.support.noisy_rows import (
    noisy_grounded_rows,
    noisy_pairwise_rows,
    noisy_pointwise_rows,
    split_seeds,
)
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration
OPTIONS = {"template": "question_answering_quality", "samples": "auto:6"}
GROUNDED_AUTO = {"samples": "auto:6"}


def test_undecided_units_go_into_the_next_batch_a_bounded_number_of_rounds(
    tmp_path: Path,
) -> None:
    data = noisy_pointwise_rows(tmp_path, easy=3, split=2)
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, rounds, batch_rows, online_rows = _in_batch_then_online(s, "pointwise", data, OPTIONS)
    assert done.status == "finished" and done.rows_scored == 5
    most = max(len(r.repeats[0].samples) for r in batch_rows.values())
    assert rounds == most <= 6  # one sample per round, each round one batch
    assert _samples_of(batch_rows) == _samples_of(online_rows)
    assert all(len(batch_rows[f"easy{i}"].repeats[0].samples) == 3 for i in range(3))


def test_undecided_labellings_go_into_the_next_batch_and_match_the_online_samples(
    tmp_path: Path,
) -> None:
    data = noisy_grounded_rows(tmp_path, easy=2, split=2, tag="gr-batch")
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, rounds, batch_rows, online_rows = _in_batch_then_online(
            s, "groundedness", data, GROUNDED_AUTO
        )
    assert done.status == "finished" and done.rows_scored == 4
    most = max(len(r.repeats[0].samples) for r in batch_rows.values())
    assert rounds == most <= 6  # one labelling per round, each round one batch
    assert _samples_of(batch_rows) == _samples_of(online_rows)
    assert all(len(batch_rows[f"easy{i}"].repeats[0].samples) == 3 for i in range(2))
    assert {k: r.score for k, r in batch_rows.items()} == {
        k: r.score for k, r in online_rows.items()
    }


def test_undecided_comparisons_go_into_the_next_batch_in_both_orders(tmp_path: Path) -> None:
    data = noisy_pairwise_rows(tmp_path, easy=2, split=2)
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, rounds, batch_rows, online_rows = _in_batch_then_online(
            s, "pairwise", data, {"samples": "auto:4"}
        )
    assert done.status == "finished" and done.rows_done == 4
    most = max(len(r.repeats[0].samples) for r in batch_rows.values())
    assert rounds <= most <= 8  # a round asks each undecided comparison again
    assert _samples_of(batch_rows) == _samples_of(online_rows)
    for i in range(2):  # two comparisons agreeing in both orders: the minimum
        assert [s.order for s in batch_rows[f"easy{i}"].repeats[0].samples] == ["AB", "BA"] * 2


def test_an_undecided_gecko_question_goes_into_the_next_batch(tmp_path: Path) -> None:
    (seed,) = split_seeds(1, {"yes": 0.5, "no": 0.5}, "question")
    questions = [
        yes_no("Gk-batch: is it red? [judge-odds yes=1 seed=1]"),
        yes_no(f"Gk-batch: is it round? [judge-odds yes=0.5 no=0.5 seed={seed}]"),
    ]
    image = png(tmp_path / "a.png")
    data = write_rows(
        tmp_path / "g.jsonl",
        [{"id": "r", "prompt": "p", "image": str(image), "questions": questions}],
    )
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, rounds, batch_rows, online_rows = _in_batch_then_online(
            s, "gecko-image", data, {"samples": "auto:6"}
        )
    assert done.status == "finished" and done.rows_scored == 1
    sure, split = batch_rows["r"].repeats
    assert len(sure.samples) == 3 and sure.decided  # the minimum
    assert len(split.samples) > 3
    assert rounds == len(split.samples) <= 6  # one sample a round, while one is undecided
    assert _samples_of(batch_rows) == _samples_of(online_rows)
    assert batch_rows["r"].score == online_rows["r"].score


def test_rank_in_batch_mode_asks_each_comparison_as_online(tmp_path: Path) -> None:
    rows = [
        {"id": "sure", "prompt": "Q?", "low": "Weak. [judge-odds win=0 seed=1]", "high": "Ok."},
        {"id": "torn", "prompt": "R?", "low": "Hm. [judge-odds win=0.5 seed=7]", "high": "Eh."},
    ]
    data = write_rows(tmp_path / "rank.jsonl", rows)
    options = {"candidates": ["low", "high"], "samples": "auto:4"}
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, _, batch_rows, online_rows = _in_batch_then_online(s, "rank", data, options)
    assert done.status == "finished" and done.rows_done == 2
    (pair,) = batch_rows["sure"].repeats
    assert (pair.unit, pair.verdict, len(pair.samples)) == ("low vs high", "B", 4)
    assert _samples_of(batch_rows) == _samples_of(online_rows)


def test_an_undecided_video_question_goes_into_the_next_batch(tmp_path: Path) -> None:
    (seed,) = split_seeds(1, {"a": 0.5, "b": 0.5}, "video_question")
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(clip_bytes(GECKO_VIDEO_EXAMPLES[0]))
    choices = ["a) it stays still", "b) it moves right", "c) it moves left", "d) it grows"]
    asked = [("Gv-batch: does it move? [judge-odds a=1 seed=1]", "a")]
    asked.append((f"Gv-batch: which way? [judge-odds a=0.5 b=0.5 seed={seed}]", "a"))
    questions = [
        {"question": q, "answer": a, "choices": choices, "tag": "action"} for q, a in asked
    ]
    row = {"id": "v", "prompt": "a ball", "video": str(clip), "questions": questions}
    data = write_rows(tmp_path / "v.jsonl", [row])
    with stack(tmp_path / "stack", **FAST_POLLS) as s:
        done, rounds, batch_rows, online_rows = _in_batch_then_online(
            s, "gecko-video", data, {"samples": "auto:6"}
        )
    assert done.status == "finished" and done.rows_scored == 1
    sure, split = batch_rows["v"].repeats
    assert len(sure.samples) == 3 and sure.decided
    assert rounds == len(split.samples) <= 6 and len(split.samples) > 3
    assert _samples_of(batch_rows) == _samples_of(online_rows)


def _in_batch_then_online(
    s: Stack, metric: str, data: Path, options: dict[str, Any]
) -> tuple[JobSummary, int, dict[str, RowResult], dict[str, RowResult]]:
    """The job in batch mode (its summary, the batches it made, its rows), then the same rows
    online under another name of the judge (so no reply comes from the batch job's cache)."""
    client = s.client()
    batch = client.submit(
        metric, data, judge_model="gemini-2.5-flash", options=options, mode="batch"
    ).job_id
    done = client.wait(batch, timeout_s=300)
    rounds = int(s.stats()["batches"]["created"])
    batch_rows = {r.id: r for r in client.results(batch)}
    online = client.submit(metric, data, judge_model="gemini-2.5-flash-001", options=options)
    assert client.wait(online.job_id, timeout_s=300).status == "finished"
    return done, rounds, batch_rows, {r.id: r for r in client.results(online.job_id)}


def _samples_of(rows: dict[str, RowResult]) -> dict[str, list[list[str | None]]]:
    return {k: [[s.answer for s in rep.samples] for rep in r.repeats] for k, r in rows.items()}
