"""The judge's noise floor from the samples of repeated units: where a judge asked the same
question several times disagrees with itself, the judge is the noise, and these figures say
how much (the manual's noise floor page says how to read each)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean, variance

from evalq.stats.agreement import pearson
from evalq.stats.intervals import Bounds, wilson


@dataclass(frozen=True)
class Share:
    """A share of units with its 95% Wilson interval, and the units it is out of."""

    value: float
    ci95: Bounds | None
    n: int


def split_share(units: Sequence[Sequence[Hashable]]) -> Share | None:
    """The share of units whose samples are not all the same answer, over the units with at
    least two answered samples; None when there is none."""
    compared = [values for values in units if len(values) >= 2]
    if not compared:
        return None
    split = sum(len(set(values)) > 1 for values in compared)
    return Share(split / len(compared), wilson(split, len(compared)), len(compared))


def _settled(answers: Sequence[Hashable]) -> Hashable | None:
    """The one most common answer; None when two or more tie for it (a split order)."""
    ranked = Counter(answers).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def order_disagreement(units: Sequence[Mapping[str, Sequence[Hashable]]]) -> Share | None:
    """The share of pairwise units whose orders disagree, over those answered in two orders or
    more. ``units``: per unit, order ("AB", "BA") -> answers read as the side that won; orders
    agree when each has one most common answer and it is the same (a split order disagrees)."""
    compared = [
        [answers for answers in by_order.values() if answers]
        for by_order in units
        if sum(bool(answers) for answers in by_order.values()) >= 2
    ]
    if not compared:
        return None
    disagree = 0
    for orders in compared:
        settled = {_settled(answers) for answers in orders}
        disagree += len(settled) > 1 or None in settled
    return Share(disagree / len(compared), wilson(disagree, len(compared)), len(compared))


@dataclass(frozen=True)
class PanelErrors:
    """How far a panel's judges err together: their mean pairwise error correlation over the
    units they share, the pairs it averages, the units compared and Kish's effective number
    of independent judges (None where the correlation is undefined)."""

    judges: int
    units: int
    mean_correlation: float | None
    pairs: int
    effective_judges: float | None


def effective_judges(k: int, mean_correlation: float) -> float | None:
    """Kish's effective sample size of k equally correlated judges, k / (1 + (k - 1) * rho)
    (Kish 1965, "Survey Sampling", the design effect); None where its denominator is <= 0."""
    denominator = 1 + (k - 1) * mean_correlation
    if k < 1 or denominator <= 0:
        return None
    return k / denominator


def panel_errors(errors: Mapping[str, Mapping[Hashable, float]]) -> PanelErrors | None:
    """A panel's error correlation; ``errors``: judge -> unit -> error against the unit's
    reference. Each pair of judges is correlated over the units both answered; a pair with no
    variation or under two such units is left out. None with fewer than two judges."""
    judges = [j for j, by_unit in errors.items() if by_unit]
    if len(judges) < 2:
        return None
    shared: set[Hashable] = set()
    correlations: list[float] = []
    for a, b in combinations(judges, 2):
        common = [u for u in errors[a] if u in errors[b]]
        shared.update(common)
        r = pearson([errors[a][u] for u in common], [errors[b][u] for u in common])
        if r is not None:
            correlations.append(r)
    mean = fmean(correlations) if correlations else None
    return PanelErrors(
        judges=len(judges),
        units=len(shared),
        mean_correlation=mean,
        pairs=len(correlations),
        effective_judges=None if mean is None else effective_judges(len(judges), mean),
    )


def mean_noise_se(rows: Sequence[Sequence[Sequence[float]]]) -> float | None:
    """The standard error a mean of row scores has from re-asking the judge alone. ``rows``:
    per row, its units' sample values on the score's scale; a unit's variance over its samples,
    carried to its row's mean and the job's (a unit asked once takes the units' mean variance)."""
    spreads = [variance(u) for units in rows for u in units if len(u) >= 2]
    if not spreads:
        return None
    pooled = fmean(spreads)
    scored = [[u for u in units if u] for units in rows]
    scored = [units for units in scored if units]
    total = 0.0
    for units in scored:
        per_unit = (variance(u) / len(u) if len(u) >= 2 else pooled for u in units)
        total += sum(per_unit) / len(units) ** 2
    return math.sqrt(total) / len(scored)
