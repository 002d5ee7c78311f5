"""``python -m devtools.bench.adaptive_sim``: the adaptive benchmark's mix drawn in memory, to
weigh stopping rules against each other without a stack: evalq's rule, fixed counts, and the
rule with a sharper prior (as one fitted to a judge's flip rate would be)."""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass
from statistics import fmean

from devtools.bench.adaptive import MIX
from evalq.stats.adaptive import MAX_SAMPLES, MIN_SAMPLES, Budget, vote_decision


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def change_chance(leading: int, rest: int, remaining: int, prior: float) -> float:
    """evalq.stats.adaptive.change_chance with a Beta(prior, prior) prior in place of (1, 1)."""
    a, b = prior + leading, prior + rest
    total = 0.0
    for x in range(remaining + 1):
        if leading + x <= rest + remaining - x:
            log_c = math.lgamma(remaining + 1) - math.lgamma(x + 1) - math.lgamma(remaining - x + 1)
            total += math.exp(log_c + _lbeta(x + a, remaining - x + b) - _lbeta(a, b))
    return total


@dataclass(frozen=True)
class Rule:
    name: str
    samples: int | str  # a fixed count, or "auto"
    prior: float = 1.0  # auto only: Beta(prior, prior); 1.0 is evalq's rule


RULES = (
    Rule("--samples 8", 8),
    Rule("--samples auto (evalq's rule)", "auto"),
    Rule("auto, prior Beta(0.19, 0.19)", "auto", 0.19),
)


def one_unit(p: float, rule: Rule, rng: random.Random) -> tuple[str | None, int]:
    """A unit's verdict (None: undecided) and the samples it took, the judge saying "4" at p."""
    if rule.samples != "auto":
        count = int(rule.samples)
        said: list[str | None] = ["4" if rng.random() < p else "5" for _ in range(count)]
        d = vote_decision(said, Budget(count, count, adaptive=False))
        return d.verdict, count
    budget = Budget(MIN_SAMPLES, MAX_SAMPLES, adaptive=True)
    answers: list[str | None] = []
    while len(answers) < MAX_SAMPLES:
        answers.append("4" if rng.random() < p else "5")
        fours = answers.count("4")
        lead, rest = max(fours, len(answers) - fours), min(fours, len(answers) - fours)
        if len(answers) < MIN_SAMPLES or len(answers) == MAX_SAMPLES or lead == rest:
            continue
        if rule.prior == 1.0:
            d = vote_decision(answers, budget)
            if d.stop:
                return d.verdict, len(answers)
        elif change_chance(lead, rest, MAX_SAMPLES - len(answers), rule.prior) < budget.threshold:
            return ("4" if fours > len(answers) - fours else "5"), len(answers)
    end = vote_decision(answers, Budget(MAX_SAMPLES, MAX_SAMPLES, adaptive=False))
    return end.verdict, len(answers)


def simulate(units: int, seed: int) -> dict[str, tuple[float, float]]:
    """Per rule: calls per unit and agreement with a 32-sample verdict, over the MIX."""
    rng = random.Random(seed)
    reference = Rule("--samples 32", 32)
    out: dict[str, tuple[float, float]] = {}
    for rule in RULES:
        calls: list[int] = []
        agree: list[bool] = []
        for _, share, odds in MIX:
            p = float(odds.split()[0].split("=")[1])
            for _ in range(round(units * share)):
                verdict, n = one_unit(p, rule, rng)
                calls.append(n)
                agree.append(verdict == one_unit(p, reference, rng)[0])
        out[rule.name] = (fmean(calls), fmean(agree))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{'rule':<32} {'calls/unit':>10} {'fewer than 8':>12} {'agree w/ 32':>12}")
    for name, (calls, agree) in simulate(args.units, args.seed).items():
        print(f"{name:<32} {calls:>10.2f} {8 / calls:>11.2f}x {agree:>12.1%}")


if __name__ == "__main__":
    main()
