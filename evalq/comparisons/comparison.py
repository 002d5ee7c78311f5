"""Every pair of sides compared on their paired rows, overall, per tag and per group of the
user's columns, with Holm's correction over the pairs (and, within a pair, over its tags and
over its groups). The value compared is the metric's own (evalq.comparisons.values).

The seed and resample counts go into the result, so a report can be reproduced exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from typing import Any, get_args

from evalq.comparisons.align import AlignBy, Side, align
from evalq.comparisons.groups import GroupDifference, compare_groups, group_dict, with_groups
from evalq.comparisons.noise import NoiseMargin, noise_margins, within_noise_sentences
from evalq.comparisons.paired_rows import PairedRow, PairStatus, pair_rows
from evalq.comparisons.question_diffs import question_differences
from evalq.comparisons.setups import SetupDifference, sides_differences
from evalq.comparisons.values import QUESTION_SHARE, RowValue, value_for
from evalq.core.groups import check_group_columns, group_by_columns
from evalq.stats.multiple import HOLM_NOTE, holm
from evalq.stats.paired import (
    BOOTSTRAP_RESAMPLES,
    PAIRED_SEED,
    PERMUTATION_RESAMPLES,
    PairedDifference,
    compare_paired,
)

ALPHA = 0.05


@dataclass(frozen=True)
class TagDifference:
    tag: str
    stats: PairedDifference
    p_holm: float | None  # over this pair's tags


@dataclass(frozen=True)
class QuestionSets:
    """Whether a pair's rows were asked the same questions (Gecko): of the paired rows, how
    many share an identical question set and how many were compared on the questions both
    sides asked only; and the row pairs left out for having no question in common."""

    paired: int = 0  # paired rows that carry questions
    identical: int = 0
    common_only: int = 0
    no_common: int = 0  # row pairs with no question asked and scored by both (left out)

    def sentence(self) -> str | None:
        """The line a reader needs, e.g. "question sets: 8 of 10 paired rows share an identical
        set; 2 compared on the questions both asked"; None when no row carries questions."""
        if not self.paired and not self.no_common:
            return None
        text = (
            f"question sets: {self.identical} of {self.paired} paired rows share an identical "
            f"set; {self.common_only} compared on the questions both asked"
        )
        if self.no_common:
            text += f"; {self.no_common} row pairs left out with no question in common"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "sentence": self.sentence()}


def question_sets(rows: Sequence[PairedRow]) -> QuestionSets:
    paired = [r for r in rows if r.status == "paired" and r.question_sets is not None]
    return QuestionSets(
        paired=len(paired),
        identical=sum(r.question_sets == "identical" for r in paired),
        common_only=sum(r.question_sets == "common" for r in paired),
        no_common=sum(r.status == "no_common_questions" for r in rows),
    )


@dataclass(frozen=True)
class PairComparison:
    """Side A against side B; differences are A minus B."""

    a: str
    b: str
    rows: list[PairedRow]
    overall: PairedDifference
    tags: dict[str, TagDifference]
    p_holm: float | None = None  # over every pair of the comparison
    counts: dict[str, int] = field(default_factory=dict)
    value: RowValue = QUESTION_SHARE  # what the scores and differences are
    groups: list[GroupDifference] = field(default_factory=list)  # per --group-by value
    # Gecko: how many paired rows were asked identical question sets, how many were compared
    # on their common questions only (QuestionSets.sentence says it in one line).
    question_sets: QuestionSets = field(default_factory=QuestionSets)
    # Each side's judge-noise spread of its mean (evalq.comparisons.noise), where it has
    # repeats; `within_noise` says in words which the overall difference lies inside.
    noise_margins: list[NoiseMargin] = field(default_factory=list)

    @property
    def within_noise(self) -> list[str]:
        return within_noise_sentences(self.noise_margins, self.overall.mean_diff, self.value)

    @property
    def paired(self) -> list[PairedRow]:
        return [r for r in self.rows if r.status == "paired"]

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p_holm is not None and self.p_holm < alpha

    def top_rows(self, count: int = 10) -> list[PairedRow]:
        """The paired rows where the two sides differ most (largest |A - B| first)."""
        ranked = sorted(self.paired, key=lambda r: (-abs(r.diff or 0.0), r.row.line))
        return [r for r in ranked if (r.diff or 0.0) != 0][:count]


@dataclass(frozen=True)
class Comparison:
    sides: list[Side]
    by: AlignBy
    pairs: list[PairComparison]
    seed: int = PAIRED_SEED
    resamples: int = BOOTSTRAP_RESAMPLES
    permutation_resamples: int = PERMUTATION_RESAMPLES
    alpha: float = ALPHA
    notes: list[str] = field(default_factory=list)
    value: RowValue = QUESTION_SHARE
    group_by: list[str] = field(default_factory=list)
    # Where the sides were not judged alike (evalq.comparisons.setups): said first, and a
    # --fail-under check refuses to pass on it unless --allow-mixed.
    setup_differences: list[SetupDifference] = field(default_factory=list)

    @property
    def mixed(self) -> bool:
        return bool(self.setup_differences)

    @property
    def holm_note(self) -> str:
        return HOLM_NOTE.format(m=len(self.pairs), alpha=self.alpha)

    def pair(self, a: str, b: str) -> PairComparison:
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
        raise KeyError((a, b))


def pair_counts(rows: Sequence[PairedRow]) -> dict[str, int]:
    statuses = Counter(r.status for r in rows)
    counts = {s: statuses.get(s, 0) for s in get_args(PairStatus)}
    counts["questions_left_out"] = sum(r.questions_left_out for r in rows)
    counts["questions_not_shared"] = sum(r.questions_not_shared for r in rows)
    return counts


def compare_pair(
    a: Side,
    b: Side,
    rows: list[PairedRow],
    seed: int,
    resamples: int,
    permutation_resamples: int,
    value: RowValue = QUESTION_SHARE,
    group_by: Sequence[str] = (),
) -> PairComparison:
    paired = [r for r in rows if r.status == "paired"]

    def stats(xs: list[float], ys: list[float]) -> PairedDifference:
        return compare_paired(
            xs,
            ys,
            seed=seed,
            resamples=resamples,
            permutation_resamples=permutation_resamples,
            width=value.width,
        )

    overall = stats([r.score_a or 0.0 for r in paired], [r.score_b or 0.0 for r in paired])
    tags = sorted({t for r in paired for t in r.tags_a.keys() & r.tags_b.keys()})
    per_tag = {}
    for tag in tags:
        both = [r for r in paired if tag in r.tags_a and tag in r.tags_b]
        per_tag[tag] = stats([r.tags_a[tag] for r in both], [r.tags_b[tag] for r in both])
    adjusted = holm([s.p_permutation for s in per_tag.values()])
    return PairComparison(
        a=a.label,
        b=b.label,
        rows=rows,
        overall=overall,
        tags={
            t: TagDifference(t, s, p) for (t, s), p in zip(per_tag.items(), adjusted, strict=True)
        },
        counts=pair_counts(rows),
        value=value,
        groups=compare_groups(rows, group_by, stats),
        question_sets=question_sets(rows),
        noise_margins=noise_margins((a, b), overall.mean_diff, value),
    )


def compare_sides(
    sides: Sequence[Side],
    *,
    by: AlignBy | None = None,
    seed: int = PAIRED_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
    alpha: float = ALPHA,
    group_by: Sequence[str] = (),
) -> Comparison:
    """Every pair (in the order given: the first against the second, ...), Holm over pairs;
    with ``group_by`` (columns of the rows' extra), each pair per value of each column too."""
    labels = [s.label for s in sides]
    if len(set(labels)) != len(labels):
        raise ValueError(f"every side needs its own label, got {labels}")
    alignment = align(sides, by)
    notes = [alignment.note] if alignment.note else []
    value, mixed = value_for([s.metric for s in sides])
    notes += [n for n in (mixed, value.note) if n]
    columns = group_by_columns(group_by)
    check_group_columns(columns, [row for side in sides for row in side.rows])  # as status does
    pairs = []
    for i, j in combinations(range(len(sides)), 2):
        rows = [
            pair_rows(k, alignment.rows[k][i], alignment.rows[k][j], value) for k in alignment.keys
        ]
        rows = with_groups([r for r in rows if r.row_a is not None or r.row_b is not None], columns)
        pairs.append(
            compare_pair(
                sides[i], sides[j], rows, seed, resamples, permutation_resamples, value, columns
            )
        )
    adjusted = holm([p.overall.p_permutation for p in pairs])
    pairs = [replace(p, p_holm=q) for p, q in zip(pairs, adjusted, strict=True)]
    return Comparison(
        list(sides),
        alignment.by,
        pairs,
        seed,
        resamples,
        permutation_resamples,
        alpha,
        notes,
        value,
        columns,
        sides_differences(sides),
    )


def difference_dict(stats: PairedDifference) -> dict[str, Any]:
    return {
        "rows": stats.n,
        "mean_a": stats.mean_a,
        "mean_b": stats.mean_b,
        "mean_diff": stats.mean_diff,
        "ci95": list(stats.ci95) if stats.ci95 is not None else None,
        "ci_method": stats.ci_method,
        "p_permutation": stats.p_permutation,
        "p_method": stats.p_method,
        "permutations": stats.permutations,
        "p_sign": stats.p_sign,
        "wins": stats.wins,
        "ties": stats.ties,
        "losses": stats.losses,
        "ci_note": stats.ci_note,
    }


def row_dict(row: PairedRow, with_questions: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.row.id,
        "prompt": row.row.prompt,
        "key": list(row.key),
        "status": row.status,
        "line_a": row.row_a.line if row.row_a else None,
        "line_b": row.row_b.line if row.row_b else None,
        "score_a": row.score_a,
        "score_b": row.score_b,
        "diff": row.diff,
        "value": row.value.key,
        "questions_left_out": row.questions_left_out,
        "questions_not_shared": row.questions_not_shared,
        "question_sets": row.question_sets,
        **{f"group:{c}": v for c, v in row.groups.items()},
    }
    if with_questions:
        out["questions"] = side_by_side(row)
    return out


def side_by_side(row: PairedRow) -> list[dict[str, Any]]:
    """The two sides' answers per question (by position when the rubrics match)."""
    qa = row.row_a.questions if row.row_a else []
    qb = row.row_b.questions if row.row_b else []
    out = []
    for i in range(max(len(qa), len(qb))):
        a = qa[i] if i < len(qa) else None
        b = qb[i] if i < len(qb) else None
        q = a or b
        assert q is not None
        out.append(
            {
                "question": q.question,
                "tag": q.tag,
                "expected": q.expected,
                "judge_model": q.judge_model,
                "answer_a": a.answer if a else None,
                "result_a": a.result if a else None,
                "reason_a": a.reason if a else None,
                "answer_b": b.answer if b else None,
                "result_b": b.result if b else None,
                "reason_b": b.reason if b else None,
            }
        )
    return out


def cost_dict(side: Side) -> dict[str, Any]:
    """A side's cost as JSON: an estimate when its judge was simulated, shared when the side
    is one candidate of a job that judged several (the job's whole cost, not a share)."""
    return {
        "cost_usd": side.cost_usd,
        "cost_is_estimate": side.simulated,
        "cost_shared_with": list(side.cost_shared_with),
        "cost_note": side.cost_note,
    }


def setup_dict(comparison: Comparison) -> dict[str, Any]:
    """Whether the sides were judged alike, as JSON: `mixed`, and one entry per difference."""
    return {
        "mixed": comparison.mixed,
        "setup_differences": [d.as_dict() for d in comparison.setup_differences],
    }


def comparison_dict(comparison: Comparison, top: int = 10) -> dict[str, Any]:
    """The whole comparison as plain JSON data (`evalq compare --json`)."""
    return {
        "sides": [
            {
                "label": s.label,
                "job_id": s.job_id,
                "candidate": s.candidate,
                "metric": s.metric,
                "rows": len(s.rows),
                "simulated": s.simulated,
                **cost_dict(s),
                "judge_setup": dict(s.setup),
                "question_set": s.question_set,
            }
            for s in comparison.sides
        ],
        **setup_dict(comparison),
        "value": comparison.value.as_dict(),
        "group_by": comparison.group_by,
        "aligned_by": comparison.by,
        "seed": comparison.seed,
        "bootstrap_resamples": comparison.resamples,
        "permutation_resamples": comparison.permutation_resamples,
        "alpha": comparison.alpha,
        "correction": comparison.holm_note if len(comparison.pairs) > 1 else None,
        "notes": comparison.notes,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "counts": p.counts,
                "question_sets": p.question_sets.as_dict(),
                "noise_floor": [m.as_dict() for m in p.noise_margins],
                "within_noise": p.within_noise,
                "overall": {
                    **difference_dict(p.overall),
                    "p_holm": p.p_holm,
                    "significant": p.significant(comparison.alpha),
                },
                "tags": {
                    t: {**difference_dict(d.stats), "p_holm_tags": d.p_holm}
                    for t, d in p.tags.items()
                },
                "groups": [group_dict(g, difference_dict(g.stats)) for g in p.groups],
                "top_rows": [row_dict(r, with_questions=True) for r in p.top_rows(top)],
                "questions_differ": [d.as_dict() for d in question_differences(p.paired, top)],
            }
            for p in comparison.pairs
        ],
    }
