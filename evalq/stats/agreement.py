"""Agreement between judges: how often they give the same verdict, beyond what chance explains,
so a panel of judges shows where they disagree. A missing rating drops the item from a
comparison rather than counting as a verdict."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import accumulate, combinations, product
from statistics import fmean
from typing import Any, Literal, TypeVar

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


R = TypeVar("R", bound=Hashable)
L = TypeVar("L", bound=Hashable)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than two points or when either side never varies."""
    if len(xs) != len(ys):
        raise ValueError(f"lengths differ: {len(xs)} != {len(ys)}")
    if len(xs) < 2:
        return None
    mx, my = fmean(xs), fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


AlphaLevel = Literal["nominal", "ordinal", "interval"]


def krippendorff_alpha(
    units: Sequence[Sequence[Hashable]], level: AlphaLevel = "nominal"
) -> float | None:
    """Krippendorff's alpha from its coincidence matrix (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability"); ``units``: per item, its values (under two: dropped).
    None when no item pairs or nothing varies; ordinal and interval values are numbers."""
    pairable = [list(values) for values in units if len(values) >= 2]
    n = sum(len(values) for values in pairable)
    if n < 2:
        return None
    coincidence: dict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for values in pairable:
        counts = Counter(values)
        for c, k in product(counts, repeat=2):
            pairs = counts[c] * (counts[k] - (c == k))
            if pairs:
                coincidence[c, k] += pairs / (len(values) - 1)
    totals: dict[Hashable, float] = defaultdict(float)
    for (c, _), o in coincidence.items():
        totals[c] += o
    delta = _alpha_metric(level, totals)
    observed = sum(o * delta(c, k) for (c, k), o in coincidence.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c, k in product(totals, repeat=2))
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def _alpha_metric(
    level: AlphaLevel, totals: Mapping[Hashable, float]
) -> Callable[[Hashable, Hashable], float]:
    """The squared difference function d_ck of Krippendorff (2011), section 3."""
    if level == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if level == "interval":
        return lambda c, k: (float(c) - float(k)) ** 2  # type: ignore[arg-type]
    ranks = sorted(totals, key=float)  # type: ignore[arg-type]
    cumulative = dict(zip(ranks, accumulate(totals[v] for v in ranks), strict=True))

    def ordinal(c: Hashable, k: Hashable) -> float:
        low, high = sorted((c, k), key=float)  # type: ignore[arg-type]
        between = cumulative[high] - cumulative[low] + totals[low]
        return (between - (totals[c] + totals[k]) / 2) ** 2

    return ordinal


def krippendorff_alpha_interval(units: Sequence[Sequence[float]]) -> float | None:
    """Krippendorff's alpha with the squared-difference (interval) metric; see
    krippendorff_alpha."""
    return krippendorff_alpha(units, "interval")


def rating_agreement(by_judge: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """How far judges agree on per-row ratings; ``by_judge`` maps judge -> row -> rating.
    Ratings are ordered (a 4 against a 5 is a smaller disagreement than a 1 against a 5, which
    nominal kappa can't see): the mean absolute difference, the share within one point,
    Pearson's r, and Krippendorff's interval alpha, which copes with rows some judge left."""
    judges = list(by_judge)
    rows = sorted({row for ratings in by_judge.values() for row in ratings})
    table = [[by_judge[j].get(row) for j in judges] for row in rows]
    units = [[v for v in item if v is not None] for item in table]
    rounded = [[None if v is None else round(v) for v in item] for item in table]
    all_agree, compared = all_agree_share(rounded)
    pairs: dict[str, dict[str, Any]] = {}
    for a, b in combinations(judges, 2):
        common = [row for row in rows if row in by_judge[a] and row in by_judge[b]]
        xs = [by_judge[a][row] for row in common]
        ys = [by_judge[b][row] for row in common]
        diffs = [abs(x - y) for x, y in zip(xs, ys, strict=True)]
        pairs[f"{a} vs {b}"] = {
            "rows": len(common),
            "mean_abs_diff": fmean(diffs) if diffs else None,
            "within_one": sum(d <= 1.0 for d in diffs) / len(diffs) if diffs else None,
            "pearson": pearson(xs, ys),
        }
    return {
        "rows_compared": compared,
        "all_agree": all_agree,
        "krippendorff_alpha": krippendorff_alpha_interval(units),
        "pairs": pairs,
    }


def label_agreement(
    by_judge: Mapping[str, Mapping[R, L | None]], items: str = "rows"
) -> dict[str, Any]:
    """How far judges agree on per-row labels; ``by_judge`` maps judge -> row -> label. Raw
    agreement flatters judges that nearly always say the same thing (two judges that call 95%
    of rows grounded agree often by chance), so the kappas are reported beside it.

    Every metric that compares categorical verdicts (pair winners, a 0/1 ``grounded``) reports
    through this one function, so a summary's ``agreement`` reads the same whichever metric
    wrote it: ``rows_compared`` and ``all_agree`` over the rows every judge labelled,
    ``fleiss_kappa`` for all judges at once, and ``cohen_kappa`` for each pair, keyed
    "a vs b". A row a judge left unlabelled (absent, or None) is left out of the comparisons
    that need it rather than counted as a label. ``items`` names what was labelled, for the
    count's key: Gecko's judges label questions, so its summary says ``questions_compared``."""
    judges = list(by_judge)
    rows = list(dict.fromkeys(row for labels in by_judge.values() for row in labels))
    columns = {j: [by_judge[j].get(row) for row in rows] for j in judges}
    table = [[columns[j][i] for j in judges] for i in range(len(rows))]
    all_agree, compared = all_agree_share(table)
    return {
        f"{items}_compared": compared,
        "all_agree": all_agree,
        "fleiss_kappa": fleiss_kappa(table),
        "cohen_kappa": pairwise_kappas(columns),
    }
