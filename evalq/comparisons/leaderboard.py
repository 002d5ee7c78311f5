"""Candidates ranked by mean score, on the rows every candidate scored.

A candidate that failed on the hard prompts would otherwise rank above one that answered
them, so every mean is taken over the common rows (the rows scored by all candidates), with
its 95% interval and row count. Which differences are significant comes from the paired
comparison of each pair, Holm-corrected over all pairs. The mean is of the value the
comparison compares (a pointwise job's mean rating on 1-5, evalq.comparisons.values).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import Any

from evalq.comparisons.align import align
from evalq.comparisons.comparison import Comparison, cost_dict
from evalq.comparisons.values import RowValue
from evalq.core.models import RowResult
from evalq.stats.intervals import Bounds, IntervalMethod, MeanInterval, mean_interval


@dataclass(frozen=True)
class Standing:
    rank: int
    label: str
    mean: float | None
    ci95: Bounds | None
    ci_method: IntervalMethod | None
    rows: int  # common rows the mean is over
    rows_scored: int  # rows this candidate scored, common or not
    tags: dict[str, tuple[float, int]] = field(default_factory=dict)  # tag -> (mean, rows)
    beats: list[str] = field(default_factory=list)  # significantly better than (Holm)
    beaten_by: list[str] = field(default_factory=list)


def value_interval(values: list[float], value: RowValue, seed: int) -> MeanInterval:
    """The mean and interval of values on value's scale: taken on [0, 1] (where the
    intervals of evalq.stats.intervals hold) and mapped back."""
    low, width = value.low, value.width
    unit = mean_interval([(v - low) / width for v in values], seed=seed)
    back = None if unit.ci95 is None else (low + width * unit.ci95[0], low + width * unit.ci95[1])
    mean = None if unit.mean is None else low + width * unit.mean
    return MeanInterval(mean, back, unit.method, unit.n)


def leaderboard(comparison: Comparison) -> list[Standing]:
    sides = comparison.sides
    value = comparison.value
    alignment = align(sides, comparison.by)

    def _scored(row: RowResult | None) -> bool:
        return value.of(row) is not None

    common = [
        alignment.rows[k] for k in alignment.keys if all(_scored(r) for r in alignment.rows[k])
    ]
    beats: dict[str, list[str]] = {s.label: [] for s in sides}
    for pair in comparison.pairs:
        diff = pair.overall.mean_diff
        if not pair.significant(comparison.alpha) or diff is None or diff == 0:
            continue
        winner, loser = (pair.a, pair.b) if diff > 0 else (pair.b, pair.a)
        beats[winner].append(loser)
    standings = []
    for i, side in enumerate(sides):
        rows = [row for r in common if (row := r[i]) is not None]
        scores = [v for r in rows if (v := value.of(r)) is not None]
        interval = value_interval(scores, value, comparison.seed)
        tags: dict[str, list[float]] = {}
        for row in rows:
            for tag, tag_score in row.tag_scores.items():
                tags.setdefault(tag, []).append(tag_score)
        standings.append(
            Standing(
                rank=0,
                label=side.label,
                mean=interval.mean,
                ci95=interval.ci95,
                ci_method=interval.method,
                rows=interval.n,
                rows_scored=sum(1 for r in side.rows if _scored(r)),
                tags={t: (fmean(v), len(v)) for t, v in sorted(tags.items())},
                beats=beats[side.label],
                beaten_by=[w for w, losers in beats.items() if side.label in losers],
            )
        )
    standings.sort(key=lambda s: (s.mean is None, -(s.mean or 0.0), s.label))
    return [replace(s, rank=i + 1) for i, s in enumerate(standings)]


def leaderboard_dict(comparison: Comparison, standings: list[Standing]) -> dict[str, Any]:
    sides = {s.label: s for s in comparison.sides}
    return {
        "value": comparison.value.as_dict(),
        "candidates": [
            {
                "rank": s.rank,
                "candidate": s.label,
                **cost_dict(sides[s.label]),
                "mean": s.mean,
                "ci95": list(s.ci95) if s.ci95 else None,
                "ci_method": s.ci_method,
                "rows": s.rows,
                "rows_scored": s.rows_scored,
                "tags": {t: {"mean": m, "rows": n} for t, (m, n) in s.tags.items()},
                "significantly_better_than": s.beats,
                "significantly_worse_than": s.beaten_by,
            }
            for s in standings
        ],
        "rows_common": standings[0].rows if standings else 0,
        "aligned_by": comparison.by,
        "seed": comparison.seed,
        "alpha": comparison.alpha,
        "test": "paired permutation test on the rows both candidates scored",
        "correction": comparison.holm_note,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "rows": p.overall.n,
                "mean_diff": p.overall.mean_diff,
                "ci95": list(p.overall.ci95) if p.overall.ci95 else None,
                "p_permutation": p.overall.p_permutation,
                "p_holm": p.p_holm,
                "significant": p.significant(comparison.alpha),
            }
            for p in comparison.pairs
        ],
        "notes": comparison.notes,
    }
