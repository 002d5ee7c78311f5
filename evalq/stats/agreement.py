"""Agreement between judges: how often they give the same verdict, beyond what chance explains.

Several judge models are only worth their cost if we can see where they disagree. Raw
agreement flatters judges that nearly always say the same thing (two judges that call 95% of
rows grounded agree often by chance), so Cohen's kappa (two judges) and Fleiss' kappa (two or
more) are reported next to it. A missing rating (None: that judge was unscored on that item)
drops the item from a comparison rather than counting as a verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def complete_items(ratings: Sequence[Sequence[T | None]]) -> list[list[T]]:
    """Items every rater rated (rows of ``ratings`` are items, columns raters)."""
    return [
        [r for r in item if r is not None]
        for item in ratings
        if item and all(r is not None for r in item)
    ]


def all_agree_share(ratings: Sequence[Sequence[T | None]]) -> tuple[float | None, int]:
    """(share of items on which all raters gave the same rating, items compared). Only items
    with at least two ratings, all present, are compared."""
    items = [item for item in complete_items(ratings) if len(item) >= 2]
    if not items:
        return None, 0
    agreeing = sum(1 for item in items if len(set(item)) == 1)
    return agreeing / len(items), len(items)


def cohen_kappa(a: Sequence[T | None], b: Sequence[T | None]) -> float | None:
    """Cohen's kappa of two raters over the items both rated.

    None when it is undefined: no item in common, or chance agreement is already 1 (both
    raters used one and the same category throughout, so there is nothing to beat)."""
    if len(a) != len(b):
        raise ValueError(f"rating lists differ in length: {len(a)} != {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for x, y in pairs if x == y) / n
    left, right = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(left[c] * right[c] for c in left.keys() | right.keys()) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def pairwise_kappas(by_rater: Mapping[str, Sequence[T | None]]) -> dict[str, float | None]:
    """Cohen's kappa for every pair of raters, keyed "a vs b" in the mapping's order."""
    return {
        f"{x} vs {y}": cohen_kappa(by_rater[x], by_rater[y]) for x, y in combinations(by_rater, 2)
    }


def fleiss_kappa(ratings: Sequence[Sequence[T | None]]) -> float | None:
    """Fleiss' kappa over the items every rater rated (the same number of raters per item).

    None when undefined: fewer than two raters or no complete item, or chance agreement is 1."""
    items = complete_items(ratings)
    if not items:
        return None
    raters = len(items[0])
    if raters < 2 or any(len(item) != raters for item in items):
        return None
    totals: Counter[T] = Counter()
    agreement = 0.0
    for item in items:
        counts = Counter(item)
        totals.update(counts)
        agreement += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
    observed = agreement / len(items)
    all_ratings = len(items) * raters
    expected = sum((c / all_ratings) ** 2 for c in totals.values())
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)
