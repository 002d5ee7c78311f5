"""A ranking row's plan and units: every pair of candidates, both orders, per judge and sample."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, product
from typing import Any

from evalq.metrics.pairwise.comparisons import (
    ORDERS,
    ComparisonUnit,
)
from evalq.metrics.ratings.judging import (
    RatingPlan,
)


class RankUnit(ComparisonUnit):
    """One order of one pair of candidates (a is shown first in the original order)."""

    a: str
    b: str

    def comparison(self) -> dict[str, Any]:
        return {"judge": self.judge, "sample": self.sample, "a": self.a, "b": self.b}


class RankPlan(RatingPlan[RankUnit]):
    """A ranking row: every pair of candidates, both orders, per judge and sample; the
    responses generated for candidates that are not columns; the fit's bootstrap and seed."""

    candidates: list[str]
    generated: dict[str, str]
    bootstrap: int
    seed: int


def rank_units(judges: Sequence[str], samples: int, candidates: Sequence[str]) -> list[RankUnit]:
    """One unit per judge x sample x pair x order, laid out as dry_comparisons counts them."""
    pairs = combinations(candidates, 2)
    return [
        RankUnit(index=i, judge=judge, sample=sample, a=a, b=b, order=order)
        for i, (judge, sample, (a, b), order) in enumerate(
            product(judges, range(samples), pairs, ORDERS)
        )
    ]
