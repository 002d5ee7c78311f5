"""The judge's noise floor: test-retest figures read from the samples of repeated units.

A repeated unit is one question put to one judge several times, each an independent call.
Where its samples disagree, the judge itself is the noise. From a job's repeated units:

- the split share: the units whose samples do not all agree (with its Wilson interval);
- Krippendorff's alpha across samples (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability"), each unit's samples taken as its values: 1 is a judge that always says
  the same thing, 0 one whose answers are no more alike within a unit than across units;
- the order disagreement (pairwise): the units whose answers in the two orders shown (AB, BA)
  settle on different sides;
- a panel's error correlation: the mean Pearson correlation, over pairs of judges, of their
  errors against a reference, and the number of independent judges it is worth, Kish's
  effective sample size k / (1 + (k - 1) * rho) (Kish 1965, "Survey Sampling", the design
  effect of equally correlated observations);
- the judge noise of the mean score: the standard error the mean score has from the judge's
  re-asking alone (the within-unit variance of the samples, carried to the mean).
"""

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
    """The share of pairwise units whose orders disagree, over the units answered in at least
    two orders. Each unit maps an order ("AB", "BA") to its samples' answers, read as the side
    that won whatever the order shown; its orders agree when each settles on one answer (a
    strict most common) and it is the same one. An order split within itself disagrees."""
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
    """Kish's effective sample size of k equally correlated judges: k / (1 + (k - 1) * rho).
    None when rho is so negative that the formula has no meaning (a denominator <= 0)."""
    denominator = 1 + (k - 1) * mean_correlation
    if k < 1 or denominator <= 0:
        return None
    return k / denominator


def panel_errors(errors: Mapping[str, Mapping[Hashable, float]]) -> PanelErrors | None:
    """The error correlation of a panel; ``errors`` maps judge -> unit -> that judge's error
    against the unit's reference. Each pair of judges is correlated over the units both
    answered; a pair with fewer than two such units, or whose errors never vary, is left out
    of the mean. None with fewer than two judges."""
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
    """The standard error of a mean of row scores from the judge's re-asking alone.

    ``rows`` holds, per row, its units' sample values on the score's scale; a row's score is
    the mean of its units', each unit's the mean of its samples. A unit's samples give its
    variance s2 (n - 1 denominator), so its mean varies by s2 / m and the row's by
    sum(s2 / m) / U^2; the job's mean of N rows by the sum of those over N^2. A unit with one
    sample has no variance of its own: it takes the mean variance of the units that have one.
    None when no unit has two samples."""
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
