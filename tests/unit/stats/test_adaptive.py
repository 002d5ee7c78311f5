"""The stopping rules of adaptive repeats: unanimous votes stop early, split ones run to the
maximum and stay undecided, ratings stop when their interval sits inside one rounding step."""

from __future__ import annotations

import pytest

from evalq.core.repeats import budget_of
from evalq.stats.adaptive import (
    FIXED_RULE,
    VOTE_RULE,
    Budget,
    change_chance,
    majority_chance,
    rating_decision,
    vote_decision,
)

AUTO = Budget(min_samples=2, max_samples=8, adaptive=True)


def test_change_chance_matches_the_beta_binomial_sum() -> None:
    # Beta(4, 1) posterior, 5 more samples; the leader loses its lead only with 0 or 1 of them.
    assert change_chance(3, 0, 5) == pytest.approx(0.0397, abs=1e-4)
    assert change_chance(5, 3, 0) == 0.0
    assert change_chance(4, 4, 0) == 1.0


def test_majority_chance_for_whole_counts() -> None:
    # Beta(9, 1): P(p > 1/2) = 1 - 0.5 ** 9.
    assert majority_chance(8, 0) == pytest.approx(1 - 0.5**9, abs=1e-4)
    assert majority_chance(3, 3) == pytest.approx(0.5, abs=1e-4)


def test_a_unanimous_vote_stops_once_the_maximum_could_not_change_it() -> None:
    assert not vote_decision(["yes", "yes"], AUTO).stop
    done = vote_decision(["yes", "yes", "yes"], AUTO)
    assert (done.stop, done.verdict, done.decided, done.rule) == (True, "yes", True, VOTE_RULE)
    assert done.certainty is not None and done.certainty > 0.95


def test_a_split_vote_is_undecided_at_the_maximum() -> None:
    answers = ["yes", "no"] * 4
    for n in range(2, 8):
        assert not vote_decision(answers[:n], AUTO).stop
    end = vote_decision(answers, AUTO)
    assert (end.stop, end.verdict, end.decided) == (True, None, False)
    lean = vote_decision(["yes"] * 5 + ["no"] * 3, AUTO)
    assert (lean.verdict, lean.decided) == (None, False)  # 5 of 8 is no sure majority


def test_unscored_samples_count_for_nothing() -> None:
    assert vote_decision([None, None], AUTO).verdict is None
    end = vote_decision([None] * 8, AUTO)
    assert (end.stop, end.decided) == (True, False)


def test_fixed_samples_are_judged_by_the_posterior() -> None:
    fixed = Budget(min_samples=4, max_samples=4, adaptive=False)
    sure = vote_decision(["A"] * 4, fixed)
    assert (sure.verdict, sure.decided, sure.rule) == ("A", True, FIXED_RULE)
    split = vote_decision(["A", "A", "A", "B"], fixed)
    assert (split.verdict, split.decided) == (None, False)


def test_a_sure_probability_is_a_sure_vote_and_a_weak_one_is_not() -> None:
    soft = Budget(min_samples=1, max_samples=8, adaptive=True)
    assert vote_decision(["yes", "yes", "yes"], soft, [0.99, 0.99, 0.99]).stop
    assert not vote_decision(["yes", "yes", "yes"], soft, [0.55, 0.55, 0.55]).stop


def test_ratings_are_a_vote_over_the_ratings_given() -> None:
    assert not rating_decision([4, 4], AUTO).stop
    same = rating_decision([4, 4, 4], AUTO)
    assert (same.stop, same.verdict, same.interval) == (True, "4", (4.0, 4.0))
    assert not rating_decision([4, 5], AUTO).stop
    split = rating_decision([4, 5] * 4, AUTO)
    assert (split.stop, split.verdict, split.decided) == (True, None, False)
    assert split.interval is not None and split.interval[0] < 4.5 < split.interval[1]
    mostly = rating_decision([4] * 7 + [5], AUTO)
    assert (mostly.verdict, mostly.decided) == ("4", True)


@pytest.mark.parametrize("most", range(2, 33))
def test_the_minimum_is_where_agreeing_votes_first_stop(most: int) -> None:
    """budget_of's minimum is the rule's own: as many agreeing votes stop, one fewer do not, so
    an easy unit stops at the minimum and the dry run's range starts where calls can end."""
    budget = budget_of("auto" if most == 8 else f"auto:{most}")
    least = budget.min_samples
    assert vote_decision(["yes"] * least, budget).stop
    if least > 2:
        assert not vote_decision(["yes"] * (least - 1), budget).stop
    assert (budget_of("auto").min_samples, budget_of("auto:32").min_samples) == (3, 4)
