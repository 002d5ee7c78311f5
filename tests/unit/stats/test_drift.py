"""The drift report's statistics against values worked by hand: kappa and weighted kappa of two
judges, Kendall's tau-b and its interval over rows, the retest disagreement, the flip share
and the paired bootstrap of the score's change."""

from __future__ import annotations

import math

import pytest

from evalq.comparisons.drift.build import kappa_of, score_change
from evalq.comparisons.paired_rows import PairedRow
from evalq.comparisons.values import ROW_SCORE
from evalq.core.models import RowResult
from evalq.stats.drift import (
    flip_share,
    kendall_tau_b,
    ranking_tau,
    retest_disagreement,
    share_difference,
    swapped_pairs,
)
from evalq.stats.intervals import wilson
from evalq.stats.paired import paired_bootstrap_ci


def test_cohen_kappa_of_two_judges_labels() -> None:
    # Agreement 3 of 4; the old judge says yes half the time, the new a quarter: chance
    # agreement .5 * .25 + .5 * .75 = .5, so kappa = (.75 - .5) / (1 - .5) = .5.
    kappa = kappa_of(["yes", "yes", "no", "no"], ["yes", "no", "no", "no"], False, seed=1)
    assert kappa.value == pytest.approx(0.5)
    assert kappa.method == "cohen kappa"


def test_weighted_kappa_of_two_judges_ratings() -> None:
    # Ratings 1-3, quadratic weights ((i - j) / 2)^2. Observed disagreement: one pair (2, 3)
    # of three, 0.25 / 3. Expected: the old judge's 1, 2, 3 a third each against the new's
    # 1 a third, 3 two thirds: (2/3 + 1/4 + 1/3) / 3 = 5/12. Kappa = 1 - (1/12) / (5/12) = 0.8.
    kappa = kappa_of(["1", "2", "3"], ["1", "3", "3"], True, seed=1)
    assert kappa.value == pytest.approx(0.8)
    assert kappa.method == "cohen kappa (quadratic weights)"


def test_kendall_tau_b_by_hand() -> None:
    # 6 pairs, one discordant (the middle two): (5 - 1) / 6.
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # A tie in xs: 2 concordant of 3 pairs, 1 tied in x: 2 / sqrt((3 - 1) * 3).
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b([1, 1], [1, 2]) is None  # every pair tied on one side


def test_ranking_tau_and_its_interval_when_the_top_two_swap() -> None:
    old = [{"a": 1.0, "b": 0.5, "c": 0.0}] * 5
    new = [{"a": 0.5, "b": 1.0, "c": 0.0}] * 5
    tau, ci = ranking_tau(old, new, ["a", "b", "c"], seed=3, resamples=200)
    # (a, b) discordant, (a, c) and (b, c) concordant: (2 - 1) / 3; every row alike, so
    # every resample gives the same tau.
    assert tau == pytest.approx(1 / 3)
    assert ci == pytest.approx((1 / 3, 1 / 3))
    assert swapped_pairs(["a", "b", "c"], [1.0, 0.5, 0.0], [0.5, 1.0, 0.0]) == [("a", "b")]


def test_ranking_tau_interval_spans_the_rows_that_disagree() -> None:
    # Half the rows keep a ahead, half put b ahead by more: the means swap (tau -1), yet a
    # resample of mostly the first half keeps the order (tau 1): the interval holds both.
    old = [{"a": 1.0, "b": 0.0}] * 11
    new = [{"a": 1.0, "b": 0.0}] * 5 + [{"a": 0.0, "b": 1.0}] * 6
    tau, ci = ranking_tau(old, new, ["a", "b"], seed=5, resamples=400)
    assert tau == -1.0
    assert ci == (-1.0, 1.0)


def test_retest_disagreement_is_the_chance_two_answers_differ() -> None:
    # 4, 4, 5: of the 6 ordered pairs of answers, 2 agree: 1 - 2/6 = 2/3; yes, yes: 0.
    share = retest_disagreement([["4", "4", "5"], ["yes", "yes"], ["no"]])
    assert share is not None
    assert (share.value, share.n) == (pytest.approx(1 / 3), 2)
    assert share.ci95 == pytest.approx(wilson(2 / 3, 2))
    assert retest_disagreement([["a"]]) is None


def test_the_difference_of_two_shares_by_newcombes_hybrid_score_interval() -> None:
    # Newcombe (1998), table II, example (a): 56/70 against 48/80, difference 0.2000, 95%
    # interval by method 10 0.0524 to 0.3339.
    a, b = flip_share(56, 70), flip_share(48, 80)
    assert a is not None and b is not None
    gap = share_difference(a, b)
    assert gap is not None
    assert (round(gap[0], 4), round(gap[1], 4)) == (0.0524, 0.3339)


def test_flip_share_with_its_wilson_interval() -> None:
    share = flip_share(20, 200)
    assert share is not None and share.value == 0.1
    assert share.ci95 == wilson(20, 200)
    assert flip_share(0, 0) is None


def _paired(new: float, old: float, i: int) -> PairedRow:
    row = RowResult(id=str(i), line=i, prompt="p", status="scored", score=new)
    return PairedRow((str(i), 0), row, row, "paired", new, old)


def test_score_change_is_new_minus_old_with_a_seeded_paired_bootstrap() -> None:
    pairs = [(0.5, 0.25), (1.0, 1.0), (0.75, 0.25), (0.0, 0.25)]
    rows = [_paired(n, o, i) for i, (n, o) in enumerate(pairs)]
    change = score_change("all", rows, ROW_SCORE, seed=7)
    # Differences .25, 0, .5, -.25: mean .125; the interval is the BCa bootstrap of them.
    assert change.change == pytest.approx(0.125)
    assert (change.mean_old, change.mean_new) == (pytest.approx(0.4375), pytest.approx(0.5625))
    new, old = [p[0] for p in pairs], [p[1] for p in pairs]
    assert change.ci95 == paired_bootstrap_ci(new, old, seed=7)
    assert change.ci95 is not None and -0.25 <= change.ci95[0] < 0.125 < change.ci95[1] <= 0.5
    again = score_change("all", rows, ROW_SCORE, seed=7)
    assert again == change  # seeded: the same interval every time
