"""A comparison's sides and counts in words, as the terminal and the HTML page both say them:
what each side is and cost, and how many rows a pair paired or left out."""

from __future__ import annotations

from collections.abc import Sequence

from evalq.client.output.formats import money
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import PairComparison


def cost_text(side: Side) -> str:
    """A side's cost as a reader should take it: unknown (never $0), an estimate when the
    judge was simulated, the whole job's cost when the side is one of its candidates."""
    text = money(side.cost_usd)
    if not side.cost_usd and side.cost_note:  # unknown, or $0: why
        text += f" ({side.cost_note})"
    if side.simulated:
        text += " (ESTIMATE: simulated judge, nothing billed)"
    if side.cost_shared_with:
        others = ", ".join(side.cost_shared_with)
        text += f", the whole job's cost, shared with {others} (not split)"
    return text


def side_lines(sides: Sequence[Side]) -> list[str]:
    lines = []
    for side in sides:
        what = [f"job {side.job_id}"] if side.job_id else []
        what += [f"candidate {side.candidate}"] if side.candidate else []
        what += [f"{len(side.rows)} rows", f"cost {cost_text(side)}"]
        lines.append(f"{side.label}: {', '.join(what)}")
    return lines


def counts_line(pair: PairComparison) -> str:
    c = pair.counts
    parts = [f"{c['paired']} rows paired"]
    for key, label in (
        ("only_a", f"only in {pair.a}"),
        ("only_b", f"only in {pair.b}"),
        ("unscored_a", f"unscored in {pair.a}"),
        ("unscored_b", f"unscored in {pair.b}"),
        ("unscored_both", "unscored in both"),
        ("no_common_questions", "no question scored by both"),
        ("questions_left_out", "questions left out (unscored on a side)"),
        ("questions_not_shared", "questions asked by one side only (left out)"),
    ):
        if c.get(key):
            parts.append(f"{c[key]} {label}")
    return "; ".join(parts)
