"""Pairwise accuracy with ties (Deutsch et al. 2023's acc_eq, within groups as Gecko compares
images of one prompt) against a hand-worked example and a brute-force loop over pairs, tie
calibration against trying every epsilon, and the group bootstrap's weighting against
literally duplicating groups."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from evalq.core.human.pairwise_accuracy import _accuracy, _cutoffs, _pairs, pairwise_accuracy


def brute_acc(metric: list[float], human: list[float], groups: list[str], eps: float) -> float:
    """acc_eq straight from its definition: a pair agrees when both sides tie it (the metric
    within eps) or both order it the same way."""
    agree = total = 0
    for i, j in combinations(range(len(metric)), 2):
        if groups[i] != groups[j]:
            continue
        total += 1
        metric_tie = abs(metric[i] - metric[j]) <= eps + 1e-9
        human_tie = human[i] == human[j]
        if metric_tie or human_tie:
            agree += metric_tie and human_tie
        else:
            agree += (metric[i] > metric[j]) == (human[i] > human[j])
    return agree / total


def random_groups(seed: int) -> tuple[list[float], list[float], list[str]]:
    rng = np.random.default_rng(seed)
    n = 36
    groups = [f"prompt-{g}" for g in rng.integers(0, 9, n)]
    human = [float(h) for h in rng.integers(1, 6, n)]
    metric = [float(round(h / 5 + rng.normal(0, 0.2), 1)) for h in human]
    return metric, human, groups


def test_a_worked_example() -> None:
    # Prompt p: three images. Humans rate 5, 3, 3; the metric scores 0.9, 0.4, 0.4.
    #   (a, b): both say a is better       -> agree
    #   (a, c): both say a is better       -> agree
    #   (b, c): both tie                   -> agree (a correctly predicted tie)
    # Prompt q: humans 2, 4; metric 0.7, 0.7: the metric ties what humans order -> miss.
    # Prompt r: one image, no pair. Images of different prompts are never compared.
    metric = [0.9, 0.4, 0.4, 0.7, 0.7, 0.1]
    human = [5.0, 3.0, 3.0, 2.0, 4.0, 1.0]
    groups = ["p", "p", "p", "q", "q", "r"]
    plain = pairwise_accuracy(metric, human, groups, epsilon=0.0)
    assert plain.value == pytest.approx(3 / 4)
    assert plain.n == 4
    assert "acc_eq" in plain.method and "epsilon=0;" in plain.method and "2 groups" in plain.method
    # A tie in the metric where humans order the pair, and the reverse, are both misses.
    reverse = pairwise_accuracy([0.9, 0.5], [4.0, 4.0], ["p", "p"], epsilon=0.0)
    assert reverse.value == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_fixed_epsilon_equals_the_definition(seed: int) -> None:
    metric, human, groups = random_groups(seed)
    for eps in (0.0, 0.1, 0.25):
        ours = pairwise_accuracy(metric, human, groups, epsilon=eps, resamples=20)
        assert ours.value == pytest.approx(brute_acc(metric, human, groups, eps))


@pytest.mark.parametrize("seed", range(5))
def test_tie_calibration_is_the_best_epsilon_of_all(seed: int) -> None:
    metric, human, groups = random_groups(seed)
    gaps = {
        round(abs(metric[i] - metric[j]), 9)
        for i, j in combinations(range(len(metric)), 2)
        if groups[i] == groups[j]
    }
    scores = {eps: brute_acc(metric, human, groups, eps) for eps in sorted(gaps | {0.0})}
    best = max(scores.values())
    smallest_best = min(eps for eps, acc in scores.items() if acc == best)
    ours = pairwise_accuracy(metric, human, groups, resamples=20)
    assert ours.value == pytest.approx(best)
    assert f"tie-calibrated epsilon={smallest_best:.6g};" in ours.method


def test_calibration_turns_near_ties_into_ties_when_humans_tie_them() -> None:
    # Humans tie every pair; a metric with tiny differences misses them all at epsilon 0 and
    # gets them all once calibration ties differences up to 0.02.
    metric = [0.50, 0.51, 0.52, 0.30, 0.31]
    human = [3.0, 3.0, 3.0, 2.0, 2.0]
    groups = ["a", "a", "a", "b", "b"]
    assert pairwise_accuracy(metric, human, groups, epsilon=0.0).value == 0.0
    calibrated = pairwise_accuracy(metric, human, groups)
    assert calibrated.value == 1.0
    assert "tie-calibrated epsilon=0.02;" in calibrated.method


@pytest.mark.parametrize("epsilon", [0.0, None])
def test_group_weights_equal_duplicated_groups(epsilon: float | None) -> None:
    # The bootstrap draws each group some number of times; weighting a group's pairs by that
    # count must equal copying the group that many times (as separate groups).
    metric, human, groups = random_groups(11)
    pairs = _pairs(np.asarray(metric), np.asarray(human), groups)
    names = list(dict.fromkeys(g for g in groups if groups.count(g) > 1))
    copies = np.random.default_rng(0).integers(0, 3, len(names))
    copies[0] = max(copies[0], 1)
    weighted, _ = _accuracy(
        pairs, copies[pairs.group][None, :].astype(float), _cutoffs(pairs.gap, epsilon)
    )
    big_m: list[float] = []
    big_h: list[float] = []
    big_g: list[str] = []
    for name, k in zip(names, copies, strict=True):
        for c in range(k):
            for i, g in enumerate(groups):
                if g == name:
                    big_m.append(metric[i])
                    big_h.append(human[i])
                    big_g.append(f"{name}#{c}")
    expanded = pairwise_accuracy(big_m, big_h, big_g, epsilon=epsilon, resamples=5)
    assert weighted[0] == pytest.approx(expanded.value)


def test_the_interval_is_over_groups_and_seeded() -> None:
    metric, human, groups = random_groups(4)
    first = pairwise_accuracy(metric, human, groups)
    assert first == pairwise_accuracy(metric, human, groups)
    assert first.ci95 != pairwise_accuracy(metric, human, groups, seed=99).ci95
    assert first.ci95 is not None and first.value is not None
    assert first.ci95[0] <= first.value <= first.ci95[1]


def test_no_pairs_or_one_group_say_why() -> None:
    none = pairwise_accuracy([0.1, 0.2], [1.0, 2.0], ["a", "b"])
    assert none.value is None and none.n == 0 and "no two items share a group" in none.note
    one = pairwise_accuracy([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], ["a", "a", "a"])
    assert one.value == 1.0 and one.ci95 is None and "one group" in one.note
    empty = pairwise_accuracy([], [], [])
    assert empty.value is None


def test_bad_input_names_the_position() -> None:
    with pytest.raises(ValueError, match=r"human\[1\] is None"):
        pairwise_accuracy([0.1, 0.2], [1.0, None], ["a", "a"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"got -0\.1"):
        pairwise_accuracy([0.1, 0.2], [1.0, 2.0], ["a", "a"], epsilon=-0.1)
    with pytest.raises(ValueError, match="groups has 1"):
        pairwise_accuracy([0.1, 0.2], [1.0, 2.0], ["a"])
