"""One comparison judged in both orders: its units (judge x sample x order), one order's judge
call, and the two orders combined into an outcome (an order-dependent pair is a tie, counted
as inconsistent). Shared with ranking, whose units are these with a pair of candidates."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any, Literal, TypeVar

from evalq.core.dry_run import DryEnv
from evalq.core.errors import InputError
from evalq.core.metric import RowContext, Unit
from evalq.core.models import QuestionResult, Repeats, RowInput, Sample, Verdict
from evalq.core.repeats import ask_until_settled, repeats_of, sample_verdicts, stored_decision
from evalq.core.verdicts import ask_judge, unscored
from evalq.metrics.ratings.judging import (
    VERDICT_ANSWER_TOKENS,
    adaptive_of,
    dry_document,
    first_reason,
    load_document,
    rating_request,
    sampled,
    samples_of,
    unit_result,
)
from evalq.metrics.ratings.parsing import Choice, PairwiseReply, parse_choice
from evalq.metrics.ratings.prompts import pairwise_prompt
from evalq.metrics.ratings.templates import Template
from evalq.stats.adaptive import MIN_SAMPLES, Budget, earliest_stop, vote_decision

Order = Literal["original", "swapped"]
ORDERS: tuple[Order, ...] = ("original", "swapped")
Outcome = Literal["A", "B", "tie"]
OUTCOME_SCORE: dict[str, float] = {"A": 1.0, "tie": 0.5, "B": 0.0}
_UNSWAP: dict[str, Choice] = {"A": "B", "B": "A", "SAME": "SAME"}
_AS_OUTCOME: dict[str, Outcome] = {"A": "A", "B": "B", "SAME": "tie"}


@dataclass(frozen=True)
class Combined:
    """Both orders' verdicts read in the original order; ``outcome`` None = unscored."""

    outcome: Outcome | None
    consistent: bool | None


def combine(original: Choice | None, swapped: Choice | None) -> Combined:
    """``swapped`` is the verdict on the swapped order, as the judge wrote it (A = shown
    first = the original B). An order-dependent pair of verdicts is a tie, inconsistent."""
    if original is None or swapped is None:
        return Combined(None, None)
    if original == _UNSWAP[swapped]:
        return Combined(_AS_OUTCOME[original], True)
    return Combined("tie", False)


def winner_of(score: float) -> Outcome:
    if math.isclose(score, 0.5, abs_tol=1e-9):
        return "tie"
    return "A" if score > 0.5 else "B"


class ComparisonUnit(Unit):
    """One order of one comparison, by one judge, one sample of several."""

    kind: Literal["pairwise"] = "pairwise"
    judge: str
    sample: int
    order: Order

    def comparison(self) -> dict[str, Any]:
        """What names the comparison this order belongs to (both orders share it)."""
        return {"judge": self.judge, "sample": self.sample}


CompUnitT = TypeVar("CompUnitT", bound=ComparisonUnit)


def comparison_units(judges: Sequence[str], samples: int) -> list[ComparisonUnit]:
    """One unit per judge x sample x order; the two orders of a comparison are separate judge
    calls, scheduled like any other."""
    return [
        ComparisonUnit(index=i, judge=judge, sample=sample, order=order)
        for i, (judge, sample, order) in enumerate(product(judges, range(samples), ORDERS))
    ]


def one_per_comparison(units: Sequence[CompUnitT]) -> list[CompUnitT]:
    """`--samples auto`: one unit per comparison (its first sample, as given), numbered
    afresh; it asks both orders, again and again, while its verdict is undecided."""
    kept = [u for u in units if u.order == "original" and u.sample == 0]
    return [u.model_copy(update={"index": i}) for i, u in enumerate(kept)]


def dry_comparisons(
    row: RowInput,
    env: DryEnv,
    template: Template,
    texts: Mapping[str, str],
    pairs: Sequence[tuple[str, str]],
) -> None:
    """Every judge x sample x pair, in both orders, as comparison_units lays them out; with
    `--samples auto`, the samples past the minimum are the range's top (asked only while the
    verdict is undecided)."""
    document = dry_document(row, env)
    samples = samples_of(env.options)
    budget = adaptive_of(env.options)
    for judge, k, (a, b), order in product(env.job.judges, range(samples), pairs, ORDERS):
        shown = (texts[a], texts[b]) if order == "original" else (texts[b], texts[a])
        request = rating_request(
            pairwise_prompt(template, row.data, *shown, document),
            document,
            PairwiseReply,
            env.options,
            samples,
            k,
        )
        # only while undecided: a sample past the fewest that can settle the comparison
        optional = budget is not None and 2 * k >= call_budget(budget).min_samples
        env.call(request, judge, VERDICT_ANSWER_TOKENS, optional=optional)
        env.count("comparisons (judge x sample x pair x order)")


def _read_choice(text: str) -> tuple[str, dict[str, Any]]:
    parsed = parse_choice(text)
    return parsed.verdict, {"choice": parsed.verdict, "explanation": parsed.explanation}


def judge_comparison(
    ctx: RowContext,
    template: Template,
    unit: ComparisonUnit,
    first: str,
    second: str,
    samples: int,
    adaptive: bool = False,
) -> Verdict:
    """One order of one comparison: ``first`` is the original A, shown second if swapped;
    ``adaptive`` (`--samples auto`): both orders, again, while the verdict is undecided."""
    try:
        document = load_document(ctx)
    except InputError as exc:
        return unscored(unit.index, "input_error", str(exc), judge_model=unit.judge)

    def ask(sample: int, order: Order) -> Verdict:
        shown = (first, second) if order == "original" else (second, first)
        request = rating_request(
            pairwise_prompt(template, ctx.row.data, *shown, document),
            document,
            PairwiseReply,
            ctx.options,
            samples,
            sample,
        )
        return ask_judge(ctx.judge(unit.judge), unit.index, request, _read_choice)

    budget = adaptive_of(ctx.options)
    if not adaptive or budget is None:
        return ask(unit.sample, unit.order)
    calls = call_budget(budget)
    return ask_until_settled(
        unit.index,
        calls,
        lambda k: ask(k // 2, ORDERS[k % 2]),
        lambda taken: vote_decision(votes_of(taken), calls),
        step=2,
    )


def call_budget(budget: Budget) -> Budget:
    """A comparison's samples counted in calls: each sample asks both orders, and an adaptive
    one stops no sooner than the fewest agreeing calls that can settle it, in whole samples."""
    most = 2 * budget.max_samples
    if not budget.adaptive:
        return Budget(2 * budget.min_samples, most, adaptive=False, threshold=budget.threshold)
    least = earliest_stop(2 * MIN_SAMPLES, most, budget.threshold)
    return Budget(min(most, least + least % 2), most, adaptive=True, threshold=budget.threshold)


def votes_of(calls: Sequence[Verdict]) -> list[str | None]:
    """Each call's choice read in the original order (call k is swapped when k is odd)."""
    out: list[str | None] = []
    for k, verdict in enumerate(calls):
        choice = _choice(verdict)
        out.append(None if choice is None else (_UNSWAP[choice] if k % 2 else choice))
    return out


def spread_comparisons(
    adaptive: bool,
    samples: int,
    pairs: Sequence[tuple[CompUnitT, Verdict]],
    name: Callable[[CompUnitT], str],
) -> tuple[list[tuple[CompUnitT, Verdict]], list[Repeats]]:
    """Every call as a unit of its own (an adaptive unit's calls spread out by sample and
    order, so a row reads the same whichever way it was asked), and each comparison's calls
    as Repeats (``name``: what was compared) when it was asked more than once."""
    spread_out: list[tuple[CompUnitT, Verdict]] = []
    stored: dict[tuple[Any, ...], dict[str, Any]] = {}
    for unit, verdict in pairs:
        calls = sample_verdicts(verdict) if adaptive else None
        if calls is None:
            spread_out.append((unit, verdict))
            continue
        spread_out += [
            (unit.model_copy(update={"sample": k // 2, "order": ORDERS[k % 2]}), call)
            for k, call in enumerate(calls)
        ]
        stored[_comparison_key(unit)] = stored_decision(verdict) or {}
    if samples < 2 and not adaptive:
        return spread_out, []
    grouped: dict[tuple[Any, ...], list[tuple[CompUnitT, Verdict]]] = {}
    for unit, verdict in spread_out:
        grouped.setdefault(_comparison_key(unit), []).append((unit, verdict))
    repeats = []
    for key, members in grouped.items():
        members.sort(key=lambda pair: (pair[0].sample, ORDERS.index(pair[0].order)))
        votes = votes_of([v for _, v in members])
        fixed = Budget(len(members), len(members), adaptive=False)
        decision = stored.get(key) or vote_decision(votes, fixed)
        drawn = [
            Sample(answer=vote, order="AB" if u.order == "original" else "BA")
            for (u, _), vote in zip(members, votes, strict=True)
        ]
        first = members[0][0]
        repeats.append(repeats_of(name(first), first.judge, drawn, decision))
    return spread_out, repeats


def _comparison_key(unit: ComparisonUnit) -> tuple[Any, ...]:
    return tuple(v for k, v in unit.comparison().items() if k != "sample")


def _choice(verdict: Verdict | None) -> Choice | None:
    if verdict is None or verdict.status != "ok" or not isinstance(verdict.value, dict):
        return None
    choice = verdict.value.get("choice")
    return choice if choice in _UNSWAP else None


def _explanation(verdict: Verdict | None) -> str | None:
    if verdict is None or not isinstance(verdict.value, dict):
        return None
    return str(verdict.value.get("explanation", ""))


def comparisons(pairs: Iterable[tuple[ComparisonUnit, Verdict]]) -> list[dict[str, Any]]:
    """Group a row's units into comparisons (by unit.comparison()) and combine orders."""
    grouped: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Verdict]]] = {}
    for unit, verdict in pairs:
        names = unit.comparison()
        key = tuple(names.values())
        grouped.setdefault(key, (names, {}))[1][unit.order] = verdict
    out = []
    for names, by_order in grouped.values():
        original, swapped = by_order.get("original"), by_order.get("swapped")
        combined = combine(_choice(original), _choice(swapped))
        entry: dict[str, Any] = dict(names)
        entry |= {
            "original": _choice(original),
            "swapped": _choice(swapped),
            "outcome": combined.outcome,
            "consistent": combined.consistent,
            "explanations": {
                "original": _explanation(original),
                "swapped": _explanation(swapped),
            },
        }
        if combined.outcome is None:
            entry["reason"] = first_reason([v for v in by_order.values() if v.status != "ok"])
        out.append(entry)
    return out


def comparison_questions(
    pairs: Sequence[tuple[CompUnitT, Verdict]], samples: int, label: Callable[[CompUnitT], str]
) -> list[QuestionResult]:
    """Each order's verdict as a question entry of the row, named by ``label`` (and its
    sample, when there are several)."""
    return [unit_result(sampled(label(u), u.sample, samples), "pairwise", v) for u, v in pairs]


def first_position_share(entries: Iterable[Mapping[str, Any]]) -> float | None:
    """Among single-order verdicts that picked a side, the share that picked the response
    shown first: 0.5 is no position preference."""
    picks = [
        choice
        for entry in entries
        for choice in (entry.get("original"), entry.get("swapped"))
        if choice in ("A", "B")
    ]
    return sum(choice == "A" for choice in picks) / len(picks) if picks else None
