"""Candidates ranked by mean score, on the rows every candidate scored.

A candidate that failed on the hard prompts would otherwise rank above one that answered
them, so every mean is taken over the common rows (the rows scored by all candidates), with
its 95% interval and row count. Which differences are significant comes from the paired
comparison of each pair, Holm-corrected over all pairs. The mean is of the value the
comparison compares (a pointwise job's mean rating on 1-5, evalq.comparisons.values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from statistics import fmean
from typing import Any

from evalq.comparisons.align import Key, align
from evalq.comparisons.comparison import Comparison, PairComparison, cost_dict, setup_dict
from evalq.comparisons.groups import column_value
from evalq.comparisons.values import RowValue
from evalq.core.groups import NO_VALUE
from evalq.core.models import RowResult
from evalq.stats.intervals import Bounds, IntervalMethod, MeanInterval, mean_interval
from evalq.stats.paired import PairedDifference


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


def value_interval(values: list[float], value: RowValue) -> MeanInterval:
    """The mean and interval of values on value's scale: taken on [0, 1] (where the
    intervals of evalq.stats.intervals hold, the same as a job's status shows) and mapped
    back."""
    low, width = value.low, value.width
    unit = mean_interval([(v - low) / width for v in values])
    back = None if unit.ci95 is None else (low + width * unit.ci95[0], low + width * unit.ci95[1])
    mean = None if unit.mean is None else low + width * unit.mean
    return MeanInterval(mean, back, unit.method, unit.n)


@dataclass(frozen=True)
class GroupStandings:
    """The leaderboard again on the rows of one value of one --group-by column, with the
    differences that are significant within it (Holm over each pair's groups)."""

    column: str
    value: str
    standings: list[Standing]


def leaderboard(comparison: Comparison) -> list[Standing]:
    alignment = align(comparison.sides, comparison.by)
    beats = _winners(comparison, lambda pair: (pair.significant(comparison.alpha), pair.overall))
    return _standings(comparison, alignment.rows, alignment.keys, beats, None)


def group_leaderboards(comparison: Comparison) -> list[GroupStandings]:
    """One leaderboard per value of each --group-by column, values in the order first met;
    a row's group is named as `evalq status` names it ("(no value)" for none)."""
    if not comparison.group_by:
        return []  # no alignment to redo for every leaderboard without --group-by
    alignment = align(comparison.sides, comparison.by)
    out = []
    for column in comparison.group_by:
        keys_of: dict[str, list[Key]] = {}
        for key in alignment.keys:
            keys_of.setdefault(_group(alignment.rows[key], column), []).append(key)
        for value, keys in keys_of.items():
            in_group = partial(_in_group, column=column, value=value, alpha=comparison.alpha)
            beats = _winners(comparison, in_group)
            standings = _standings(comparison, alignment.rows, keys, beats, (column, value))
            out.append(GroupStandings(column, value, standings))
    return out


def _group(rows: list[RowResult | None], column: str) -> str:
    """An aligned row's group: the first side's value that has one (as compare's pairs)."""
    return next((v for r in rows if (v := column_value(r, column)) is not None), NO_VALUE)


def _in_group(
    pair: PairComparison, *, column: str, value: str, alpha: float
) -> tuple[bool, PairedDifference | None]:
    """The pair within one group: significant (Holm over the pair's groups), and how."""
    for group in pair.groups:
        if (group.column, group.value) == (column, value):
            significant = group.p_holm is not None and group.p_holm < alpha
            return significant, group.stats
    return False, None


def _winners(
    comparison: Comparison,
    test: Callable[[PairComparison], tuple[bool, PairedDifference | None]],
) -> dict[str, list[str]]:
    """Who is significantly better than whom: side label -> the labels it beats."""
    beats: dict[str, list[str]] = {s.label: [] for s in comparison.sides}
    for pair in comparison.pairs:
        significant, stats = test(pair)
        diff = None if stats is None else stats.mean_diff
        if not significant or diff is None or diff == 0:
            continue
        winner, loser = (pair.a, pair.b) if diff > 0 else (pair.b, pair.a)
        beats[winner].append(loser)
    return beats


def _standings(
    comparison: Comparison,
    rows_of: dict[Key, list[RowResult | None]],
    keys: list[Key],
    beats: dict[str, list[str]],
    group: tuple[str, str] | None,
) -> list[Standing]:
    """Each side's mean on the keys' rows that every side scored, ranked."""
    sides = comparison.sides
    value = comparison.value

    def _scored(row: RowResult | None) -> bool:
        return value.of(row) is not None

    def _counted(row: RowResult) -> bool:
        return group is None or (column_value(row, group[0]) or NO_VALUE) == group[1]

    common = [rows_of[k] for k in keys if all(_scored(r) for r in rows_of[k])]
    standings = []
    for i, side in enumerate(sides):
        rows = [row for r in common if (row := r[i]) is not None]
        scores = [v for r in rows if (v := value.of(r)) is not None]
        interval = value_interval(scores, value)
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
                rows_scored=sum(1 for r in side.rows if _scored(r) and _counted(r)),
                tags={t: (fmean(v), len(v)) for t, v in sorted(tags.items())},
                beats=beats[side.label],
                beaten_by=[w for w, losers in beats.items() if side.label in losers],
            )
        )
    standings.sort(key=lambda s: (s.mean is None, -(s.mean or 0.0), s.label))
    return [replace(s, rank=i + 1) for i, s in enumerate(standings)]


def standing_dict(s: Standing) -> dict[str, Any]:
    return {
        "rank": s.rank,
        "candidate": s.label,
        "mean": s.mean,
        "ci95": list(s.ci95) if s.ci95 else None,
        "ci_method": s.ci_method,
        "rows": s.rows,
        "rows_scored": s.rows_scored,
        "tags": {t: {"mean": m, "rows": n} for t, (m, n) in s.tags.items()},
        "significantly_better_than": s.beats,
        "significantly_worse_than": s.beaten_by,
    }


def leaderboard_dict(
    comparison: Comparison, standings: list[Standing], groups: list[GroupStandings] | None = None
) -> dict[str, Any]:
    """The leaderboard as `--json` prints it; with --group-by, `groups` holds one per value."""
    sides = {s.label: s for s in comparison.sides}
    out = {
        "value": comparison.value.as_dict(),
        "candidates": [{**standing_dict(s), **cost_dict(sides[s.label])} for s in standings],
        "rows_common": standings[0].rows if standings else 0,
        **setup_dict(comparison),
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
    if groups is not None:
        out["group_by"] = comparison.group_by
        out["groups"] = [
            {
                "column": g.column,
                "value": g.value,
                "rows_common": g.standings[0].rows if g.standings else 0,
                "candidates": [standing_dict(s) for s in g.standings],
            }
            for g in groups
        ]
    return out
