"""When to stop asking a judge again (`--samples auto`): a Beta-Binomial predictive rule on the
majority answer, after Adaptive-Consistency (Aggarwal et al., EMNLP 2023, arXiv:2305.11860);
the rule in full is on the manual's adaptive repeats page."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import fmean, stdev

# The leading answer's share p gets a Beta(1 + leading, 1 + the rest) posterior (the others
# pooled, which can only overstate a change); its Beta-Binomial predictive says how the samples
# still allowed up to the maximum could fall. Sampling stops once the chance that they leave the
# leader not strictly ahead is under THRESHOLD. At the maximum, or for a fixed count, the verdict
# stands when the posterior chance that the leader is the judge's majority reaches MAJORITY;
# otherwise it is undecided, a split vote. A rating is a vote over the ratings given (an interval
# on the mean alone stops at two equal ratings, which a judge split 50/50 gives half the time);
# a sample's own probability (Gecko --soft) is that fraction of a vote for its answer.
VOTE_RULE = "beta-binomial-predictive"
FIXED_RULE = "fixed"
THRESHOLD = 0.05
MAJORITY = 0.9  # at the maximum: the posterior chance the leader is the judge's majority
MIN_SAMPLES = 2
MAX_SAMPLES = 8
MAX_SAMPLES_LIMIT = 32

# Student's t 97.5% quantiles by degrees of freedom (1..31): a two-sided 95% interval.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042, 2.040,
)  # fmt: skip


@dataclass(frozen=True)
class Budget:
    """How many samples one unit may take: at least `min_samples`, at most `max_samples`;
    `adaptive` False is a fixed count (`--samples K`: min = max = K)."""

    min_samples: int
    max_samples: int
    adaptive: bool
    threshold: float = THRESHOLD


@dataclass(frozen=True)
class Decision:
    """Where a unit's samples stand: `stop` asks no more; `verdict` is what they settle on
    (None while split or undecided at the end); `certainty` the rule's chance that it stands."""

    stop: bool
    verdict: str | None
    decided: bool
    certainty: float | None
    interval: tuple[float, float] | None
    rule: str


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def change_chance(leading: float, rest: float, remaining: int) -> float:
    """The Beta-Binomial predictive chance that `remaining` more samples leave the leader
    (`leading` votes against `rest`) not strictly ahead."""
    if remaining <= 0:
        return 0.0 if leading > rest else 1.0
    a, b = 1.0 + leading, 1.0 + rest
    total = 0.0
    for x in range(remaining + 1):  # x more votes for the leader
        if leading + x <= rest + remaining - x:
            log_p = math.lgamma(remaining + 1) - math.lgamma(x + 1) - math.lgamma(remaining - x + 1)
            total += math.exp(log_p + _lbeta(x + a, remaining - x + b) - _lbeta(a, b))
    return min(1.0, total)


def earliest_stop(floor: int, most: int, threshold: float = THRESHOLD) -> int:
    """The fewest votes that can settle a verdict: that many agreeing votes (from `floor` on)
    leave the samples still allowed up to `most` a chance under `threshold` to overturn them.
    No vote count below it can stop (a split or a weighted vote settles later), so it is the
    unit's real minimum: 3 of at most 8, 4 of at most 32."""
    for votes in range(floor, most):
        if change_chance(votes, 0, most - votes) < threshold:
            return votes
    return most


def majority_chance(leading: float, rest: float, steps: int = 2000) -> float:
    """The posterior chance, under Beta(1 + leading, 1 + rest), that the leader's share of
    the judge's answers is over one half (a midpoint sum: the counts may be fractional)."""
    a, b = 1.0 + leading, 1.0 + rest
    norm = _lbeta(a, b)
    width = 0.5 / steps
    mass = 0.0
    for i in range(steps):
        p = 0.5 + (i + 0.5) * width
        mass += math.exp((a - 1) * math.log(p) + (b - 1) * math.log1p(-p) - norm)
    return min(1.0, mass * width)


def weighted_votes(
    answers: Sequence[str | None], probabilities: Sequence[float | None]
) -> Counter[str]:
    """The votes, a sample with a probability counting that much for its answer and the rest
    for "other"; unscored samples (None) count for nothing."""
    votes: Counter[str] = Counter()
    for answer, probability in zip(answers, probabilities, strict=True):
        if answer is None:
            continue
        weight = 1.0 if probability is None else min(1.0, max(0.0, probability))
        votes[answer] += weight  # type: ignore[assignment]
        if weight < 1.0:
            votes["\x00other"] += 1.0 - weight  # type: ignore[assignment]
    return votes


def vote_decision(
    answers: Sequence[str | None],
    budget: Budget,
    probabilities: Sequence[float | None] | None = None,
) -> Decision:
    """Whether a vote's samples so far settle it (see the module's rule). Unscored samples
    (None) are asked for, but count as no vote."""
    rule = VOTE_RULE if budget.adaptive else FIXED_RULE
    said = list(probabilities) if probabilities is not None else [None] * len(answers)
    votes = weighted_votes(answers, said)
    real = [(answer, count) for answer, count in votes.most_common() if answer != "\x00other"]
    taken = len(answers)
    if not real:
        return Decision(taken >= budget.max_samples, None, False, None, None, rule)
    leader, leading = real[0]
    rest = sum(votes.values()) - leading
    tied = len(real) > 1 and math.isclose(real[1][1], leading)
    at_max = taken >= budget.max_samples
    if budget.adaptive and not at_max:
        if taken < budget.min_samples:
            return Decision(False, None, False, None, None, rule)
        chance = change_chance(leading, rest, budget.max_samples - taken)
        if chance < budget.threshold and not tied:
            return Decision(True, leader, True, 1.0 - chance, None, rule)
        return Decision(False, None, False, 1.0 - chance, None, rule)
    certainty = majority_chance(leading, rest)
    decided = not tied and certainty >= MAJORITY
    return Decision(True, leader if decided else None, decided, certainty, None, rule)


def t_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """Student's t 95% interval on the mean; None for fewer than two values."""
    if len(values) < 2:
        return None
    mean, df = fmean(values), len(values) - 1
    half = _T975[min(df, len(_T975)) - 1] * stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def rating_decision(ratings: Sequence[float | None], budget: Budget) -> Decision:
    """A rating's samples as a vote over the ratings given (the verdict: the rating the judge
    gives most), stopped by the vote's rule; the mean's t-interval is shown beside it.
    Unscored samples (None) count for nothing."""
    answers = [None if r is None else f"{r:g}" for r in ratings]
    decision = vote_decision(answers, budget)
    got = [r for r in ratings if r is not None]
    return replace(decision, interval=t_interval(got))
