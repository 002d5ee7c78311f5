"""`evalq compare` says when a difference is within a side's judge noise floor."""

from __future__ import annotations

import pytest

from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides, comparison_dict
from evalq.core.models import NOISE_Z, Repeats, RowResult, Sample


def row_rated_with_samples(i: int, rating: float, *samples: str) -> RowResult:
    repeats = [Repeats(unit="rating", samples=[Sample(answer=s) for s in samples])]
    return RowResult(
        id=str(i),
        line=i,
        prompt=f"p{i}",
        status="scored",
        score=(rating - 1) / 4,
        details={"mean_rating": rating},
        repeats=repeats if samples else [],
    )


def pointwise_side(label: str, rating: float, *samples: str) -> Side:
    rows = [row_rated_with_samples(i, rating, *samples) for i in range(4)]
    return Side(label, rows, job_id=f"job-{label}", metric="pointwise")


# Each of side a's 4 rows asked the judge twice: 3 and 4, on the score's scale 0.5 and 0.75:
# s2 = 0.03125, over 2 samples 0.015625 per row; the mean of 4 rows: sqrt(4 * 0.015625) / 4 =
# 0.0625; its 95% spread NOISE_Z * 0.0625 on 0-1, times 4 on the 1-5 rating scale.
MARGIN = NOISE_Z * 0.0625 * 4


def test_a_difference_inside_a_sides_noise_is_said_in_words() -> None:
    comparison = compare_sides([pointwise_side("a", 3.5, "3", "4"), pointwise_side("b", 3.3)])
    pair = comparison.pairs[0]
    assert pair.overall.mean_diff == pytest.approx(0.2)
    assert [m.side for m in pair.noise_margins] == ["a"]  # b has no repeats
    assert pair.noise_margins[0].margin == pytest.approx(MARGIN)
    assert pair.within_noise == [
        f"within the judge's noise floor of a (job-a): the difference +0.200 is inside "
        f"±{MARGIN:.3f}, the 95% spread its mean has from re-asking the judge alone "
        "(mean rating (1-5))"
    ]
    out = comparison_dict(comparison)["pairs"][0]
    assert out["within_noise"] == pair.within_noise
    assert out["noise_floor"][0]["within"] is True


def test_a_difference_beyond_every_sides_noise_is_not() -> None:
    comparison = compare_sides([pointwise_side("a", 4.5, "3", "4"), pointwise_side("b", 3.0)])
    pair = comparison.pairs[0]
    assert pair.noise_margins[0].within is False
    assert pair.within_noise == []


def test_sides_without_repeats_have_no_noise_floor() -> None:
    comparison = compare_sides([pointwise_side("a", 3.5), pointwise_side("b", 3.3)])
    assert comparison.pairs[0].noise_margins == []
    assert comparison.pairs[0].within_noise == []
