"""Agreement statistics, checked against values worked out by hand."""

from __future__ import annotations

import pytest

from evalq.stats.agreement import (
    all_agree_share,
    cohen_kappa,
    complete_items,
    fleiss_kappa,
    pairwise_kappas,
)


def test_cohen_kappa_textbook_example() -> None:
    # 50 items: both yes 20, a yes/b no 5, a no/b yes 10, both no 15.
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_perfect_chance_and_worse() -> None:
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == pytest.approx(1.0)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.0)


def test_cohen_kappa_skips_missing_and_is_none_when_undefined() -> None:
    assert cohen_kappa([1, None, 0, 1], [1, 0, None, 1]) is None  # both all-1: p_e == 1
    assert cohen_kappa([None, None], [1, 0]) is None
    assert cohen_kappa([1, 0, None, 1, 0], [1, 0, 1, None, 1]) == pytest.approx(
        cohen_kappa([1, 0, 0], [1, 0, 1])
    )
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([1], [1, 0])


def test_all_agree_share_counts_complete_items_only() -> None:
    ratings: list[list[int | None]] = [[1, 1], [1, 0], [0, 0], [1, None], [None, None]]
    share, compared = all_agree_share(ratings)
    assert share == pytest.approx(2 / 3)
    assert compared == 3
    share, compared = all_agree_share([[1, 1, 1], [1, 1, 0]])
    assert share == pytest.approx(0.5)
    assert compared == 2
    assert all_agree_share([[1], [0]]) == (None, 0)  # one rater agrees with nobody
    partial: list[list[int | None]] = [[1, None], [0, 1]]
    assert complete_items(partial) == [[0, 1]]


def test_pairwise_kappas_names_pairs_in_order() -> None:
    kappas = pairwise_kappas({"a": [1, 0, 1, 0], "b": [1, 0, 1, 0], "c": [0, 1, 0, 1]})
    assert list(kappas) == ["a vs b", "a vs c", "b vs c"]
    assert kappas["a vs b"] == pytest.approx(1.0)
    assert kappas["b vs c"] == pytest.approx(-1.0)


def test_fleiss_kappa_known_value() -> None:
    # Three raters, four items. Per-item agreement P_i: 1, 1/3, 1, 1/3 -> P_bar = 2/3.
    # Category shares: yes 6/12, no 6/12 -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    ratings = [["y", "y", "y"], ["y", "y", "n"], ["n", "n", "n"], ["y", "n", "n"]]
    expected = 1 / 3
    assert fleiss_kappa(ratings) == pytest.approx(expected)
    skewed = [["y", "y", "y"], ["y", "y", "n"], ["y", "y", "y"], ["y", "n", "n"]]
    # P_i: 1, 1/3, 1, 1/3 -> 2/3; yes 9/12, no 3/12 -> P_e = 10/16; kappa = (2/3 - 5/8) / (3/8)
    assert fleiss_kappa(skewed) == pytest.approx((2 / 3 - 5 / 8) / (3 / 8))
    # With two raters Fleiss' kappa is Scott's pi; perfect agreement gives 1.
    assert fleiss_kappa([[1, 1], [0, 0]]) == pytest.approx(1.0)
    assert fleiss_kappa([[1, 1], [1, 1]]) is None
    assert fleiss_kappa([[1, None]]) is None
