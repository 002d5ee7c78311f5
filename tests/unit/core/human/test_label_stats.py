"""Label accuracy and Cohen's kappa against worked examples (Cohen's 2x2 textbook table, a
3x3 table worked by hand in fractions) and, on random labels, against kappa written as its
other definition: observed against chance disagreement over every pair of items."""

from __future__ import annotations

import numpy as np
import pytest

from evalq.core.human.label_stats import Weights, cohen_kappa, label_accuracy
from evalq.stats.intervals import wilson


def from_table(table: list[list[int]], labels: list[str]) -> tuple[list[str], list[str]]:
    judge: list[str] = []
    human: list[str] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            judge += [labels[i]] * count
            human += [labels[j]] * count
    return judge, human


def test_the_textbook_two_by_two() -> None:
    # 50 items: both yes 20, judge yes / human no 5, judge no / human yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4.
    judge, human = from_table([[20, 5], [10, 15]], ["yes", "no"])
    kappa = cohen_kappa(judge, human)
    assert kappa.value == pytest.approx(0.4)
    assert (kappa.n, kappa.method, kappa.note) == (50, "cohen kappa", None)
    assert kappa.ci95 is not None and kappa.ci95[0] < 0.4 < kappa.ci95[1]


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # Judge rows [10 3 0 | 2 8 4 | 1 2 10], n = 40, margins judge 13 14 13, human 13 13 14.
        # Disagreement observed / expected (w = 1 off-diagonal; |i-j|/2; (|i-j|/2)^2):
        (None, 1 - (12 / 40) / (1067 / 1600)),  # 587/1067
        ("linear", 1 - (13 / 80) / (709 / 1600)),  # 449/709
        ("quadratic", 1 - (3 / 32) / (53 / 160)),  # 38/53
    ],
)
def test_a_three_by_three_worked_by_hand(weights: Weights | None, expected: float) -> None:
    judge, human = from_table([[10, 3, 0], [2, 8, 4], [1, 2, 10]], ["1", "2", "3"])
    kappa = cohen_kappa(judge, human, weights=weights)
    assert kappa.value == pytest.approx(expected, abs=1e-12)


def pairwise_definition(judge: list[int], human: list[int], k: int, weights: str) -> float:
    """Kappa as 1 - mean disagreement of the items' own pairs / mean disagreement over every
    (judge of item a, human of item b) pairing: the chance term without a contingency table."""
    a, b = np.asarray(judge), np.asarray(human)

    def dis(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        d = np.abs(x - y) / (k - 1)
        return {"none": (d > 0).astype(float), "linear": d, "quadratic": d**2}[weights]

    return float(1 - dis(a, b).mean() / dis(a[:, None], b[None, :]).mean())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_random_labels_match_the_pairwise_definition(seed: int, weights: Weights | None) -> None:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, 70)
    judge = np.clip(human + rng.integers(-2, 3, 70), 1, 5)
    kappa = cohen_kappa(
        [str(v) for v in judge],
        [str(v) for v in human],
        categories=["1", "2", "3", "4", "5"],
        weights=weights,
        resamples=50,
    )
    expected = pairwise_definition(list(judge), list(human), 5, weights or "none")
    assert kappa.value == pytest.approx(expected, abs=1e-12)


def test_two_categories_weigh_every_miss_alike() -> None:
    judge, human = from_table([[20, 5], [10, 15]], ["0", "1"])
    values = [cohen_kappa(judge, human, weights=w).value for w in (None, "linear", "quadratic")]
    assert values == [pytest.approx(0.4)] * 3


def test_numeric_labels_are_ordered_as_numbers() -> None:
    # "10" after "9", not after "1": a 9-vs-10 miss is small under linear weights.
    judge = ["1", "9", "10", "5"]
    human = ["1", "10", "10", "5"]
    by_number = cohen_kappa(judge, human, weights="linear", resamples=20)
    given = cohen_kappa(
        judge, human, weights="linear", categories=["1", "5", "9", "10"], resamples=20
    )
    assert by_number.value == given.value


def test_undefined_and_bad_labels() -> None:
    same = cohen_kappa(["yes"] * 5, ["yes"] * 5)
    assert same.value is None and "one and the same label" in same.note
    one = cohen_kappa(["yes"], ["no"])
    assert one.value is None and "at least 2" in one.note
    with pytest.raises(ValueError, match=r"human\[1\] is 'maybe'"):
        cohen_kappa(["yes", "no"], ["yes", "maybe"], categories=["no", "yes"])
    with pytest.raises(ValueError, match="pass categories"):
        cohen_kappa(["low", "high"], ["low", "low"], weights="linear")


def test_kappa_interval_is_seeded() -> None:
    judge, human = from_table([[10, 3, 0], [2, 8, 4], [1, 2, 10]], ["1", "2", "3"])
    assert cohen_kappa(judge, human) == cohen_kappa(judge, human)
    assert cohen_kappa(judge, human).ci95 != cohen_kappa(judge, human, seed=1).ci95


def test_label_accuracy_is_a_share_with_a_wilson_interval() -> None:
    judge = ["yes", "no", "yes", "yes", "no"]
    human = ["yes", "no", "no", "yes", "no"]
    accuracy = label_accuracy(judge, human)
    assert accuracy.value == pytest.approx(0.8)
    assert accuracy.ci95 == wilson(4, 5)
    assert accuracy.n == 5
    perfect = label_accuracy(["a"] * 10, ["a"] * 10)
    assert perfect.value == 1.0 and perfect.ci95 is not None and perfect.ci95[0] < 0.75
    empty = label_accuracy([], [])
    assert empty.value is None and empty.note == "no labels to compare"
