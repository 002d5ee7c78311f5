"""Krippendorff's alpha against the worked example of Krippendorff (2011), "Computing
Krippendorff's Alpha-Reliability", section C: four observers, twelve units, values missing."""

from __future__ import annotations

import pytest

from evalq.stats.agreement import krippendorff_alpha, krippendorff_alpha_interval

_ = None
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]
UNITS = [[v for v in unit if v is not None] for unit in zip(*OBSERVERS, strict=True)]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_the_papers_worked_example(level: str, published: float) -> None:
    assert krippendorff_alpha(UNITS, level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]


def test_interval_alpha_is_the_general_one() -> None:
    assert krippendorff_alpha_interval(UNITS) == krippendorff_alpha(UNITS, "interval")


def test_alpha_by_hand_on_two_units() -> None:
    # Units (a, a) and (a, b): o_aa = 2, o_ab = o_ba = 1, o_bb = 0; n_a = 3, n_b = 1, n = 4.
    # Nominal: D_o = 2 (the two off-diagonal coincidences); D_e sum = 2 * 3 * 1 = 6;
    # alpha = 1 - 3 * 2 / 6 = 0.
    assert krippendorff_alpha([["a", "a"], ["a", "b"]]) == pytest.approx(0.0)
    assert krippendorff_alpha([["a", "a"], ["b", "b"]]) == pytest.approx(1.0)


def test_alpha_is_none_without_pairable_units_or_variation() -> None:
    assert krippendorff_alpha([["a"], ["b"]]) is None
    assert krippendorff_alpha([["a", "a"], ["a", "a"]]) is None
    assert krippendorff_alpha([]) is None
