"""Gecko's validator asked again (`--samples auto` or K) with the noisy simulated judge: a sure
question stops early, a split one is asked further and scores its share of the expected answer,
never a sure 0 or 1; each question's samples and certainty are in the row's repeats."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from evalq.core.judge import MediaPart
from evalq.core.metric import get_metric
from evalq.core.models import RowResult
from tests.support.contexts import row_context, run_row
from tests.support.datasets import png, write_rows, yes_no
from tests.support.metric_harness import MemoryJudge, simulated
from tests.support.noisy_rows import split_seeds

SPLIT = {"yes": 0.5, "no": 0.5}


def _gecko_rows(tmp_path: Path, questions: list[dict[str, str]]) -> Path:
    image = png(tmp_path / "a.png")
    row = {"id": "r", "prompt": "p", "image": str(image), "questions": questions}
    return write_rows(tmp_path / "d.jsonl", [row])


def _judged_row(
    tmp_path: Path, options: dict[str, object], questions: list[dict[str, str]]
) -> tuple[MemoryJudge, RowResult]:
    """The row run by the noisy simulated judge with `options`, its image as its media."""
    (row,) = load_dataset(_gecko_rows(tmp_path, questions), "gecko-image", options).rows
    judge = MemoryJudge("sim", simulated)
    image = MediaPart("image/png", (tmp_path / "a.png").read_bytes())
    ctx = row_context("gecko-image", row, {"sim": judge}, lambda _: image, options=options)
    return judge, run_row(get_metric("gecko-image"), ctx)[2]


def test_a_sure_question_stops_early_and_a_split_one_scores_its_share(tmp_path: Path) -> None:
    (seed,) = split_seeds(1, SPLIT, "question")
    questions = [
        yes_no("Is it red? [judge-odds yes=1 seed=1]"),
        yes_no(f"Is it round? [judge-odds yes=0.5 no=0.5 seed={seed}]"),
    ]
    judge, result = _judged_row(tmp_path, {"samples": "auto"}, questions)
    sure, split = result.repeats
    assert [s.answer for s in sure.samples] == ["yes"] * 3 and sure.decided
    assert len(split.samples) > 3
    assert all(r.temperature > 0 for r in judge.requests)
    share = sum(s.answer == "yes" for s in split.samples) / len(split.samples)
    assert result.questions[1].probability == pytest.approx(share)
    assert result.score == pytest.approx((1.0 + share) / 2)
    if not split.decided:
        assert split.verdict is None and 0 < share < 1


def test_fixed_samples_ask_every_question_k_times(tmp_path: Path) -> None:
    questions = [yes_no("Is it red? [judge-odds yes=1 seed=1]")]
    judge, result = _judged_row(tmp_path, {"samples": 4}, questions)
    (repeats,) = result.repeats
    assert (len(judge.requests), repeats.rule, repeats.verdict) == (4, "fixed", "yes")
    assert result.score == 1.0


def test_samples_are_refused_with_the_batched_validator(tmp_path: Path) -> None:
    data = _gecko_rows(tmp_path, [yes_no("Is it red?")])
    with pytest.raises(DatasetError, match="batched"):
        load_dataset(data, "gecko-image", {"samples": "auto", "validator": "batched"})
