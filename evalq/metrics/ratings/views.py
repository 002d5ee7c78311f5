"""How the rating metrics' rows read in a report (Metric.view): a pointwise row's ratings per
judge and sample, a rank row's candidate pairs, and, for the metrics that compare responses in
both orders (pairwise, rank), each compared pair: what the judge chose each time, in the order
shown, and the outcome once the swapped order is read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.models import RowResult
from evalq.core.row_view import (
    JudgedInput,
    VerdictLine,
    ViewParts,
    judge_label,
    shown,
    texts_of,
    unscored_text,
    unscored_units,
)


def side_name(choice: Any, names: Mapping[str, str]) -> str:
    if choice in ("SAME", "tie"):
        return "tie" if choice == "tie" else "same"
    name = names.get(str(choice))
    return f"{choice} ({name})" if name else shown(choice)


def comparison_line(
    entry: Mapping[str, Any], who: str, names: Mapping[str, str], winner: str
) -> VerdictLine:
    explanations = entry.get("explanations") or {}
    parts = []
    for order in ("original", "swapped"):
        choice = entry.get(order)
        if choice is None:
            continue
        words = f"{order} order: chose {choice}"
        if order == "swapped" and choice in ("A", "B"):
            meant = "B" if choice == "A" else "A"  # the responses were shown the other way round
            words = f"swapped order (shown B first): chose {choice}, which is " + side_name(
                meant, names
            )
        parts.append((words, shown(explanations.get(order))))
    consistent = entry.get("consistent")
    verdict = winner + ("" if consistent is None else "" if consistent else " (orders disagree)")
    return VerdictLine(who, verdict, "ok" if consistent is not False else "plain", tuple(parts))


def pointwise_view(result: RowResult, named: Sequence[JudgedInput]) -> ViewParts:
    """Every judge's rating per sample with its explanation; the mean and spread as headline."""
    details = result.details
    verdicts: list[VerdictLine] = []
    for judge, entry in (details.get("judges") or {}).items():
        samples = entry.get("samples") or []
        for s in samples:
            who = judge_label(judge, s.get("sample", 0), len(samples))
            if s.get("status") == "ok" and s.get("rating") is not None:
                explanation = shown(s.get("explanation"))
                said = (("explanation", explanation),) if explanation else ()
                verdicts.append(VerdictLine(who, f"rating {s['rating']}", "ok", said))
            else:
                verdicts.append(VerdictLine(who, unscored_text(s), "unscored"))
    mean = details.get("mean_rating")
    headline = "not rated" if mean is None else f"mean rating {mean:.2f} (1 to 5)"
    if mean is not None and details.get("stdev") is not None:
        headline += f", spread {details['stdev']:.2f}"
    return ViewParts(
        headline=headline,
        tone="plain" if mean is not None else "unscored",
        texts=texts_of(named),
        verdicts=tuple(verdicts),
    )


def rank_view(result: RowResult, named: Sequence[JudgedInput]) -> ViewParts:
    """Each candidate pair in both orders; the row's points per candidate, best first."""
    details = result.details
    verdicts: list[VerdictLine] = []
    for c in details.get("comparisons") or []:
        a, b = shown(c.get("a")), shown(c.get("b"))
        winner = c.get("winner")
        outcome = "tie" if winner in (None, "tie") else f"{winner} wins"
        who = f"{a} (A) vs {b} (B) · " + judge_label(shown(c.get("judge")), c.get("sample"), 1)
        verdicts.append(comparison_line(c, who, {"A": a, "B": b}, outcome))
    points: Mapping[str, float] = details.get("points") or {}
    order = sorted(points, key=lambda name: -points[name])
    headline = (
        " > ".join(
            f"{name} ({points[name]:g} point{'' if points[name] == 1 else 's'})" for name in order
        )
        if order
        else "not ranked"
    )
    return ViewParts(
        headline=headline,
        tone="plain" if order else "unscored",
        texts=texts_of(named),
        verdicts=tuple(verdicts) + unscored_units(result),
    )
