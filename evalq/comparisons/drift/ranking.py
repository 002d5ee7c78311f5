"""How the candidates' order would change under the new judge: each candidate's row values
(a multi-candidate job's cells, a rank row's comparisons won, a pairwise row's two responses),
its mean under each judge, Kendall's tau-b between the orders and the pairs that swap."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from evalq.comparisons.drift.report import RankingDrift, Swap
from evalq.comparisons.drift.units import RowPair
from evalq.core.models import RowResult
from evalq.core.row_value import RowValue
from evalq.stats.drift import mean_scores, ranking_tau, swapped_pairs

WON = "share of its comparisons won on the row (a tie counts a half)"


def won_shares(row: RowResult) -> dict[str, float]:
    """A rank row's candidates by the share of their judged comparisons they won."""
    wins: dict[str, float] = defaultdict(float)
    seen: dict[str, int] = defaultdict(int)
    for entry in row.details.get("comparisons") or []:
        value, a, b = entry.get("value"), entry.get("a"), entry.get("b")
        if not isinstance(value, int | float) or not isinstance(a, str) or not isinstance(b, str):
            continue
        wins[a] += value
        wins[b] += 1.0 - value
        seen[a] += 1
        seen[b] += 1
    return {c: wins[c] / n for c, n in seen.items()}


def _pairwise(row: RowResult) -> dict[str, float]:
    sides = row.details.get("sides")
    if row.score is None or not isinstance(sides, dict):
        return {}
    return {str(sides.get("A", "A")): row.score, str(sides.get("B", "B")): 1.0 - row.score}


def row_scores(
    pairs: Sequence[RowPair], value: RowValue
) -> tuple[str, list[dict[str, float]], list[dict[str, float]]] | None:
    """Per dataset row, each candidate's value under the old judge and the new; None for a
    job without candidates."""
    if any(p.key[1] is not None for p in pairs):
        old: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
        new: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
        for p in pairs:
            row = (p.key[0], p.key[2])
            a, b = value.of(p.old), value.of(p.new)
            candidate = p.key[1]
            if candidate is not None and a is not None and b is not None:
                old[row][candidate], new[row][candidate] = a, b
        keys = list(old)
        return f"each candidate's {value.label}", [old[k] for k in keys], [new[k] for k in keys]
    rows = [(p.old, p.new) for p in pairs if p.old is not None and p.new is not None]
    if rows and all("points" in a.details and "points" in b.details for a, b in rows):
        return (
            f"each candidate's {WON}",
            [won_shares(a) for a, _ in rows],
            [won_shares(b) for _, b in rows],
        )
    if rows and all("sides" in a.details and "sides" in b.details for a, b in rows):
        return (
            f"each response's {WON}",
            [_pairwise(a) for a, _ in rows],
            [_pairwise(b) for _, b in rows],
        )
    return None


def ranking_drift(pairs: Sequence[RowPair], value: RowValue, seed: int) -> RankingDrift | None:
    found = row_scores(pairs, value)
    if found is None:
        return None
    basis, old, new = found
    candidates = list(dict.fromkeys(c for row in [*old, *new] for c in row))
    if len(candidates) < 2:
        return None
    old_means, new_means = mean_scores(old, candidates), mean_scores(new, candidates)
    tau, ci = ranking_tau(old, new, candidates, seed=seed)
    return RankingDrift(
        basis=basis,
        rows=len(old),
        candidates=candidates,
        old_order=_order(candidates, old_means),
        new_order=_order(candidates, new_means),
        old_means=dict(zip(candidates, old_means, strict=True)),
        new_means=dict(zip(candidates, new_means, strict=True)),
        tau=tau,
        tau_ci95=ci,
        swaps=[
            Swap(ahead_before=a, ahead_after=b)
            for a, b in swapped_pairs(candidates, old_means, new_means)
        ],
    )


def _order(candidates: Sequence[str], means: Sequence[float | None]) -> list[str]:
    ranked = sorted(
        zip(candidates, means, strict=True), key=lambda cm: (cm[1] is None, -(cm[1] or 0.0))
    )
    return [c for c, _ in ranked]
