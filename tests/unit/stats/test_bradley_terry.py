"""Bradley-Terry fitting and bootstrap intervals (pure functions)."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from evalq.stats.bradley_terry import (
    Comparison,
    fit,
    order_of,
    percentile,
    rank,
    tally,
    win_matrix,
)

TRUE = {"alpha": 0.1, "beta": 0.6, "gamma": 0.3}


def simulated_rows(n: int, seed: int, tie_rate: float = 0.1) -> list[list[Comparison]]:
    """Rows of verdicts drawn from known strengths (ties at ``tie_rate``)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        row = []
        for a, b in combinations(TRUE, 2):
            p = TRUE[a] / (TRUE[a] + TRUE[b])
            u = rng.random()
            score = 0.5 if u < tie_rate else (1.0 if rng.random() < p else 0.0)
            row.append((a, b, score))
        out.append(row)
    return out


def test_fit_recovers_a_known_order_and_strengths() -> None:
    comparisons = [c for row in simulated_rows(400, seed=1) for c in row]
    strength = fit(list(TRUE), comparisons, prior=0.0)
    assert order_of(strength, list(TRUE)) == ["beta", "gamma", "alpha"]
    assert sum(strength.values()) == pytest.approx(1.0)
    for name, true in TRUE.items():
        assert strength[name] == pytest.approx(true, abs=0.05)


def test_exact_win_shares_give_exact_strengths() -> None:
    # a scores 3 of the 4 points (ties as half wins): the MLE strength ratio is exactly 3:1.
    comparisons = [("a", "b", 1.0), ("a", "b", 0.5), ("a", "b", 0.5), ("b", "a", 0.0)]
    strength = fit(["a", "b"], comparisons, prior=0.0)
    assert strength["a"] / strength["b"] == pytest.approx(3.0 / 1.0)


def test_ties_count_as_half_wins() -> None:
    wins, games = tally(["a", "b"], [("a", "b", 0.5), ("b", "a", 1.0)])
    assert wins["a"]["b"] == 0.5
    assert wins["b"]["a"] == 1.5
    assert games["a"]["b"] == games["b"]["a"] == 2
    only_ties = fit(["a", "b", "c"], [("a", "b", 0.5), ("b", "c", 0.5), ("a", "c", 0.5)])
    assert only_ties == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})


def test_the_prior_keeps_undefeated_and_winless_candidates_finite() -> None:
    comparisons = [("top", "mid", 1.0), ("mid", "low", 1.0), ("top", "low", 1.0)] * 5
    strength = fit(["low", "mid", "top"], comparisons)
    assert order_of(strength, ["low", "mid", "top"]) == ["top", "mid", "low"]
    assert all(0 < s < 1 for s in strength.values())


def test_win_matrix_shares_with_ties_halved() -> None:
    matrix = win_matrix(["a", "b", "c"], [("a", "b", 1.0), ("b", "a", 0.5), ("a", "c", 0.0)])
    assert matrix["a"] == {"b": 0.75, "c": 0.0}
    assert matrix["b"] == {"a": 0.25, "c": None}


def test_bad_comparisons_are_refused() -> None:
    with pytest.raises(ValueError):
        tally(["a", "b"], [("a", "z", 1.0)])
    with pytest.raises(ValueError):
        tally(["a", "b"], [("a", "b", 2.0)])


def test_bootstrap_ranking_recovers_the_order_with_intervals() -> None:
    result = rank(list(TRUE), simulated_rows(40, seed=2), bootstrap=300, seed=7)
    assert result.order == ["beta", "gamma", "alpha"]
    for name in TRUE:
        low, high = result.ci95[name]
        assert low <= result.strength[name] <= high
    assert result.rank_ci95["beta"] == (1, 1)
    assert result.rank_ci95["alpha"][1] == 3
    again = rank(list(TRUE), simulated_rows(40, seed=2), bootstrap=300, seed=7)
    assert again == result  # seeded: the same rows give the same intervals


def test_intervals_shrink_as_rows_are_added() -> None:
    rows = simulated_rows(40, seed=3)
    few = rank(list(TRUE), rows[:10], bootstrap=400, seed=11)
    many = rank(list(TRUE), rows, bootstrap=400, seed=11)
    for name in TRUE:
        width_few = few.ci95[name][1] - few.ci95[name][0]
        width_many = many.ci95[name][1] - many.ci95[name][0]
        assert width_many < width_few, name


def test_no_rows_gives_equal_strengths_and_no_bootstrap() -> None:
    result = rank(["a", "b"], [], bootstrap=100)
    assert result.strength == pytest.approx({"a": 0.5, "b": 0.5})
    assert result.bootstrap == 0


def test_percentile_interpolates() -> None:
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([0.0, 10.0], 0.25) == 2.5
    with pytest.raises(ValueError):
        percentile([], 0.5)
